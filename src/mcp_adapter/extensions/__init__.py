"""Extensions contribute tools; the platform (or ``put_on_server``) serves them.

An extension offers ``ToolSpec``s (``@tool`` methods, or ``tools()``) and
never holds a server; ``Platform`` collects them at ``TOOLS`` and compiles
them, with class-based ``Server`` declarations, into one catalog.
"""

from mcp_adapter.declare.middleware import Call, Middleware, Next
from mcp_adapter.extensions.decorator import tool, tool_middleware
from mcp_adapter.extensions.extension import McpExtension
from mcp_adapter.extensions.manifest import PluginManifest
from mcp_adapter.extensions.platform import ENTRY_POINT_GROUP, ExtensionLoadError, Platform
from mcp_adapter.extensions.points import TOOL_EXTENSIONS, TOOLS, Contribution
from mcp_adapter.extensions.put_on_server import put_on_server
from mcp_adapter.extensions.spec import ToolExtension, ToolSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "TOOLS",
    "TOOL_EXTENSIONS",
    "Call",
    "Contribution",
    "ExtensionLoadError",
    "McpExtension",
    "Middleware",
    "Next",
    "Platform",
    "PluginManifest",
    "ToolExtension",
    "ToolSpec",
    "put_on_server",
    "tool",
    "tool_middleware",
]
