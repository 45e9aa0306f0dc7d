"""How one call is dispatched: from the SDK's request to a protocol result, in a scope of
its own (visibility, validation, middleware, the handler, the result).

``Dispatcher`` answers every method the adapter serves; each kind of component has
its module (``tools``, ``resources``, ``prompts``) over the shared part (``core``).
"""

from __future__ import annotations

from mcp_adapter.dispatch.prompts import PromptCalls
from mcp_adapter.dispatch.resources import ResourceReads
from mcp_adapter.dispatch.tools import ToolCalls


class Dispatcher(ToolCalls, ResourceReads, PromptCalls):
    """Answers protocol requests from a compiled catalog and a container.

    The SDK hands it each request's context and params; it owns argument
    validation, injection, result building and error mapping.
    """
