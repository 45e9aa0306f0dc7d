"""The callable a function tool's handler plan invokes: middleware, the handler, conversion.

Middleware's injected parameters are filled by the tool's handler plan, in the
call's scope, under private names (``injected_key``) that no handler parameter
can have; the runner hands each layer its own, decided at compile time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import anyio.to_thread

from mcp_adapter.extensions.returns import to_outcome
from mcp_adapter.extensions.spec import Middleware, Next, ToolCall

Injected = tuple[tuple[str, str], ...]
"""One layer's injected parameters: ``(key in the plan's keyword arguments, parameter name)``."""


def injected_key(index: int, name: str) -> str:
    """The plan's keyword for parameter ``name`` of middleware ``index``: not an identifier,
    so it never collides with a handler parameter."""
    return f"middleware[{index}].{name}"


def _link(middleware: Middleware, call_next: Next, injected: Mapping[str, Any]) -> Next:
    if not injected:

        async def step(call: ToolCall) -> Any:
            return await middleware(call, call_next)

        return step

    async def step_injected(call: ToolCall) -> Any:
        return await middleware(call, call_next, **injected)

    return step_injected


def make_runner(
    function: Callable[..., Any],
    *,
    is_async: bool,
    tool: str,
    argument_names: Sequence[str],
    middleware: Sequence[Middleware],
    structured: bool,
    injected: Sequence[Injected] = (),
) -> tuple[Callable[..., Any], bool]:
    """``(runner, runner_is_async)``: called by the plan with every filled argument.

    Without middleware a sync handler stays sync (the plan runs it off the
    event loop); with middleware the runner is async and a sync handler runs
    in a worker thread at the end of the chain. ``injected[i]`` names the
    keywords the plan fills for ``middleware[i]`` (none when shorter).
    """
    convert = functools.partial(to_outcome, structured=structured)
    if not middleware:
        if is_async:

            async def run_async(**kwargs: Any) -> Any:
                return convert(await function(**kwargs))

            return run_async, True

        def run_sync(**kwargs: Any) -> Any:
            return convert(function(**kwargs))

        return run_sync, False

    names = frozenset(argument_names)
    layers = [
        (layer, injected[i] if i < len(injected) else ()) for i, layer in enumerate(middleware)
    ]
    innermost_first = tuple(reversed(layers))
    private = frozenset(key for _, pairs in layers for key, _ in pairs)

    async def run_chain(**kwargs: Any) -> Any:
        arguments: dict[str, Any] = {}
        for_handler: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in names:
                arguments[key] = value
            elif key not in private:
                for_handler[key] = value

        async def handler(call: ToolCall) -> Any:
            # an argument never replaces an injected value
            merged = {**call.arguments, **for_handler}
            if is_async:
                return await function(**merged)
            return await anyio.to_thread.run_sync(functools.partial(function, **merged))

        chain: Next = handler
        for layer, pairs in innermost_first:
            chain = _link(layer, chain, {name: kwargs[key] for key, name in pairs} if pairs else {})
        return convert(await chain(ToolCall(tool, MappingProxyType(arguments))))

    return run_chain, True
