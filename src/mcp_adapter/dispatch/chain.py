"""Running a call through its middleware layers, outermost first, to the handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp_adapter.compiled.handlers import HandlerPlan, Layer
from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.declare.request import McpRequest


def through(
    layers: Sequence[Layer],
    call: Call,
    innermost: Next,
    scope: Any,
    request: McpRequest | None,
    inject: Injector = HandlerPlan.injected,
) -> Awaitable[Any]:
    """Run ``call`` through ``layers`` (first outermost) and then ``innermost``; a layer's
    injected arguments come from ``inject`` (resolved in ``scope``, on the loop, or on
    the worker thread of a thread-bound call).

    Returns what the outermost layer returns, for the caller to await: that layer is
    called here, directly, so the chain costs one coroutine per layer (the layer's own)
    and one link per layer after the first, and nothing for being a chain.
    """
    chain = innermost
    for index in range(len(layers) - 1, 0, -1):
        chain = _link(layers[index], chain, scope, request, inject)
    if not layers:
        return innermost(call)
    first = layers[0]
    if first.injects:
        return _injected(first, call, chain, scope, request, inject)
    return first.function(call, chain)


Injector = Callable[[HandlerPlan, Any, McpRequest | None], Awaitable[dict[str, Any]]]
"""``inject(plan, scope, request)``: a layer's injected arguments."""


async def _injected(
    layer: Layer,
    call: Call,
    call_next: Next,
    scope: Any,
    request: McpRequest | None,
    inject: Injector,
) -> Any:
    return await layer.function(call, call_next, **await inject(layer.plan, scope, request))


def _link(
    layer: Layer, call_next: Next, scope: Any, request: McpRequest | None, inject: Injector
) -> Next:
    """``layer`` in front of ``call_next``: what the layer before it gets as ``call_next``."""
    function = layer.function
    if not layer.injects:

        def step(call: Call) -> Awaitable[Any]:
            return function(call, call_next)

        return step

    def step_injected(call: Call) -> Awaitable[Any]:
        return _injected(layer, call, call_next, scope, request, inject)

    return step_injected
