"""Serving a catalog: one scope per request, hooks, validation, invocation, results.

``Dispatcher`` answers every method the adapter serves; each kind of component has
its module (``tool_calls``, ``resource_reads``, ``prompt_calls``) over the shared
part (``dispatch_core``).
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
