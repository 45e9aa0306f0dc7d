"""MCP components served through the official ``mcp`` SDK, with services from a container."""

from mcp.types import Icon

from mcp_adapter.annotations import ToolAnnotations
from mcp_adapter.catalog import Catalog
from mcp_adapter.compiler import compile_server
from mcp_adapter.components import Prompt, PromptArgument, Resource, Server, Tool
from mcp_adapter.errors import CompileError
from mcp_adapter.request import Identity, McpRequest
from mcp_adapter.response import McpResponse
from mcp_adapter.sdk import build_sdk_server

__all__ = [
    "Catalog",
    "CompileError",
    "Icon",
    "Identity",
    "McpRequest",
    "McpResponse",
    "Prompt",
    "PromptArgument",
    "Resource",
    "Server",
    "Tool",
    "ToolAnnotations",
    "build_sdk_server",
    "compile_server",
]
