"""Running a call through its middleware layers, outermost first, to the handler."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_adapter.compiled.handlers import Layer
from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.declare.request import McpRequest


async def through(
    layers: Sequence[Layer],
    call: Call,
    innermost: Next,
    scope: Any,
    request: McpRequest | None,
) -> Any:
    """Run ``call`` through ``layers`` (first outermost) and then ``innermost``."""
    chain = innermost
    for layer in reversed(layers):
        chain = _link(layer, chain, scope, request)
    return await chain(call)


def _link(layer: Layer, call_next: Next, scope: Any, request: McpRequest | None) -> Next:
    function = layer.function
    if not layer.injects:

        async def step(call: Call) -> Any:
            return await function(call, call_next)

        return step

    async def step_injected(call: Call) -> Any:
        return await function(call, call_next, **await layer.plan.injected(scope, request))

    return step_injected
