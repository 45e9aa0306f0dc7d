"""MCP components served through the official ``mcp`` SDK, with services from a container."""

from mcp_adapter.distribution import require_own_packages, version

# Before anything imports them: ``container`` and ``schemas`` must be this distribution's
# (a project's own schemas.py, or another distribution's files, gets a clear error).
require_own_packages()

from mcp.server.elicitation import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
    UrlElicitationResult,
)
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp.types import Icon

from mcp_adapter.compile.server import compile_server
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.compiled.handles import StateHandles
from mcp_adapter.compiled.lifespan import StartupError
from mcp_adapter.declare.annotations import ToolAnnotations
from mcp_adapter.declare.apps import APP_MIME_TYPE, ToolUI, supports_apps
from mcp_adapter.declare.components import Prompt, PromptArgument, Resource, Server, Tool
from mcp_adapter.declare.handles import StateHandle
from mcp_adapter.declare.middleware import Call, Middleware, Next, RequestCall, request_stage
from mcp_adapter.declare.policy import Policy
from mcp_adapter.declare.request import Identity, McpRequest
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.declare.tasks import Tasks, TaskSupport
from mcp_adapter.errors import (
    CompileError,
    Forbidden,
    McpAdapterError,
    NotFound,
    Refusal,
    ToolError,
)
from mcp_adapter.extensions import (
    TOOLS,
    McpExtension,
    Platform,
    PluginManifest,
    ToolSpec,
    put_on_server,
    tool,
)
from mcp_adapter.input.markers import ElicitUrl
from mcp_adapter.notifications import ClientLogger, Notifier, Progress, SubscriptionLimits
from mcp_adapter.serving import (
    BearerAuth,
    Compilable,
    HttpLimits,
    Resumability,
    Servable,
    http_app,
    mcp_lifespan,
    run_mcp_apps,
    run_stdio,
    serve_lifespan,
    serve_stdio,
)
from mcp_adapter.serving.lowlevel import build_sdk_server

__all__ = [
    "TaskSupport",
    "Tasks",
    "APP_MIME_TYPE",
    "TOOLS",
    "AcceptedElicitation",
    "AcceptedUrlElicitation",
    "CancelledElicitation",
    "DeclinedElicitation",
    "Elicit",
    "ElicitUrl",
    "ElicitationResult",
    "ListRoots",
    "Resolve",
    "Sample",
    "UrlElicitationResult",
    "BearerAuth",
    "Catalog",
    "Compilable",
    "Call",
    "ClientLogger",
    "CompileError",
    "McpAdapterError",
    "Middleware",
    "Next",
    "Forbidden",
    "HttpLimits",
    "NotFound",
    "Notifier",
    "Refusal",
    "RequestCall",
    "Resumability",
    "ToolError",
    "ToolUI",
    "Icon",
    "Identity",
    "McpExtension",
    "McpRequest",
    "McpResponse",
    "Platform",
    "PluginManifest",
    "Policy",
    "Progress",
    "Prompt",
    "PromptArgument",
    "Resource",
    "Servable",
    "Server",
    "StartupError",
    "StateHandle",
    "StateHandles",
    "SubscriptionLimits",
    "Tool",
    "ToolAnnotations",
    "ToolSpec",
    "build_sdk_server",
    "compile_server",
    "http_app",
    "mcp_lifespan",
    "put_on_server",
    "request_stage",
    "run_mcp_apps",
    "run_stdio",
    "serve_lifespan",
    "serve_stdio",
    "supports_apps",
    "tool",
]


def __getattr__(name: str) -> str:
    """``__version__``: the installed distribution's (``mcp-adapter-di``), read when asked."""
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
