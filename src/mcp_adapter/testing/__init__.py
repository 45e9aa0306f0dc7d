"""Testing helpers: a client over real JSON-RPC serialization and result assertions."""

from mcp_adapter.testing.client import McpTestClient
from mcp_adapter.testing.result import McpResult

__all__ = ["McpResult", "McpTestClient"]
