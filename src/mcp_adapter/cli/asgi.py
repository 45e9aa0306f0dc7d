"""The app factory ``uvicorn --workers`` imports in each worker process.

``mcp-adapter serve --http --workers N`` puts its options in the environment
and runs ``uvicorn.run("mcp_adapter.cli.asgi:create_app", factory=True, ...)``.
"""

from __future__ import annotations

import os
import sys

from starlette.applications import Starlette

from mcp_adapter.cli.options import ServeOptions


def create_app() -> Starlette:
    """Build the HTTP app from ``MCP_ADAPTER_SERVE`` (set by ``mcp-adapter serve``)."""
    from mcp_adapter.cli.serve import build_app

    options = ServeOptions.from_env(os.environ)
    for entry in reversed(options.sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    return build_app(options)
