"""The callable a function tool's handler plan invokes: middleware, the handler, conversion."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import anyio.to_thread

from mcp_adapter.extensions.returns import to_outcome
from mcp_adapter.extensions.spec import Middleware, Next, ToolCall


def _link(middleware: Middleware, call_next: Next) -> Next:
    async def step(call: ToolCall) -> Any:
        return await middleware(call, call_next)

    return step


def make_runner(
    function: Callable[..., Any],
    *,
    is_async: bool,
    tool: str,
    argument_names: Sequence[str],
    middleware: Sequence[Middleware],
    structured: bool,
) -> tuple[Callable[..., Any], bool]:
    """``(runner, runner_is_async)``: called by the plan with every filled argument.

    Without middleware a sync handler stays sync (the plan runs it off the
    event loop); with middleware the runner is async and a sync handler runs
    in a worker thread at the end of the chain.
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

    async def run_chain(**kwargs: Any) -> Any:
        injected = {key: value for key, value in kwargs.items() if key not in names}

        async def handler(call: ToolCall) -> Any:
            # an argument never replaces an injected value
            merged = {**call.arguments, **injected}
            if is_async:
                return await function(**merged)
            return await anyio.to_thread.run_sync(functools.partial(function, **merged))

        chain: Next = handler
        for layer in reversed(middleware):
            chain = _link(layer, chain)
        arguments = {key: value for key, value in kwargs.items() if key in names}
        return convert(await chain(ToolCall(tool, MappingProxyType(arguments))))

    return run_chain, True
