"""``python -m examples.apps``: serve the order app over stdio."""

from examples.apps.server import ShopServer, container

from mcp_adapter import run_stdio

run_stdio(ShopServer, container())
