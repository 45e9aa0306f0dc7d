"""Running a call through its middleware layers, outermost first, to the handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp_adapter.compiled.handlers import HandlerPlan, Layer
from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.declare.request import McpRequest


async def through(
    layers: Sequence[Layer],
    call: Call,
    innermost: Next,
    scope: Any,
    request: McpRequest | None,
    inject: Injector = HandlerPlan.injected,
) -> Any:
    """Run ``call`` through ``layers`` (first outermost) and then ``innermost``; a layer's
    injected arguments come from ``inject`` (resolved in ``scope``, on the loop, or on
    the worker thread of a thread-bound call)."""
    chain = innermost
    for layer in reversed(layers):
        chain = _link(layer, chain, scope, request, inject)
    return await chain(call)


Injector = Callable[[HandlerPlan, Any, McpRequest | None], Awaitable[dict[str, Any]]]
"""``inject(plan, scope, request)``: a layer's injected arguments."""


def _link(
    layer: Layer, call_next: Next, scope: Any, request: McpRequest | None, inject: Injector
) -> Next:
    function = layer.function
    if not layer.injects:

        async def step(call: Call) -> Any:
            return await function(call, call_next)

        return step

    async def step_injected(call: Call) -> Any:
        return await function(call, call_next, **await inject(layer.plan, scope, request))

    return step_injected
