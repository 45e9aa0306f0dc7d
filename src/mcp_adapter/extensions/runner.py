"""What a tool's handler plan invokes when it has middleware: the chain, then the handler.

``make_runner`` is a function tool's (the chain, the handler, conversion);
``make_method_runner`` is an extended class tool's (the chain around the
component's ``handle``, its payload re-validated when middleware changed the
arguments). Both build the chain the same way (``_through``).

Middleware's injected parameters are filled by the tool's handler plan, in the
call's scope, under private names (``injected_key``) that no handler parameter
can have; the runner hands each layer its own, decided at compile time.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from mcp_adapter.extensions.returns import to_outcome
from mcp_adapter.extensions.spec import Middleware, Next, ToolCall
from mcp_adapter.handlers import call_off_loop

Injected = tuple[tuple[str, str], ...]
"""One layer's injected parameters: ``(key in the plan's keyword arguments, parameter name)``."""

Layers = tuple[tuple[Middleware, Injected], ...]

PAYLOAD_KEY = "tool.payload"
"""The plan's keyword for an extended class tool's payload: not an identifier, so it never
collides with a parameter of ``handle``."""


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


def _layers(
    middleware: Sequence[Middleware], injected: Sequence[Injected]
) -> tuple[Layers, frozenset[str]]:
    """``(layers innermost first, every private keyword)``; ``injected[i]`` is layer i's."""
    layers = [
        (layer, injected[i] if i < len(injected) else ()) for i, layer in enumerate(middleware)
    ]
    private = frozenset(key for _, pairs in layers for key, _ in pairs)
    return tuple(reversed(layers)), private


async def _through(
    tool: str,
    arguments: Mapping[str, Any],
    handler: Next,
    innermost_first: Layers,
    kwargs: Mapping[str, Any],
) -> Any:
    """Run the chain (first layer outermost) around ``handler`` on ``arguments``."""
    chain: Next = handler
    for layer, pairs in innermost_first:
        chain = _link(layer, chain, {name: kwargs[key] for key, name in pairs} if pairs else {})
    return await chain(ToolCall(tool, arguments))


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
    innermost_first, private = _layers(middleware, injected)

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
            return await call_off_loop(function, is_async, {**call.arguments, **for_handler})

        return convert(
            await _through(tool, MappingProxyType(arguments), handler, innermost_first, kwargs)
        )

    return run_chain, True


MethodRunner = Callable[[Callable[..., Any], Mapping[str, Any]], Awaitable[Any]]
"""``run(handle, kwargs)``: the chain around a component's bound ``handle``."""


def make_method_runner(
    *,
    tool: str,
    is_async: bool,
    payload: str | None,
    fields: Callable[[Any], dict[str, Any]],
    validate: Callable[[Any], Any],
    middleware: Sequence[Middleware],
    injected: Sequence[Injected] = (),
) -> MethodRunner:
    """The chain of an extended class tool, around its component's ``handle``.

    The plan fills the payload under ``PAYLOAD_KEY``; middleware sees its
    ``fields``. ``handle`` gets it under ``payload`` (its parameter, if it has
    one): the validated payload itself when the arguments are the ones the
    chain started with, else ``validate(changed arguments)``, so what
    ``handle`` receives is always a valid payload (a value middleware set
    that the contract refuses raises: a failure, not the client's error).
    What ``handle`` returns is returned as is; the dispatcher builds the result.
    """
    innermost_first, private = _layers(middleware, injected)

    async def run(method: Callable[..., Any], kwargs: Mapping[str, Any]) -> Any:
        given = kwargs[PAYLOAD_KEY]
        for_handler = {
            key: value for key, value in kwargs.items() if key not in private and key != PAYLOAD_KEY
        }
        arguments = MappingProxyType(fields(given))

        async def handler(call: ToolCall) -> Any:
            value = given if call.arguments is arguments else validate(dict(call.arguments))
            if payload is None:  # handle() does not read the payload
                return await call_off_loop(method, is_async, for_handler)
            return await call_off_loop(method, is_async, {**for_handler, payload: value})

        return await _through(tool, arguments, handler, innermost_first, kwargs)

    return run


class Extended:
    """The component an extended class tool's plan is invoked with.

    ``handle`` runs the middleware chain around the component's own ``handle``;
    every other attribute (its ``shouldRegister``/``authorize`` hooks) is the
    component's. Built only for class tools that something extends.
    """

    __slots__ = ("_run", "component")

    def __init__(self, component: Any, run: MethodRunner) -> None:
        self.component = component
        self._run = run

    async def handle(self, **kwargs: Any) -> Any:
        return await self._run(self.component.handle, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.component, name)
