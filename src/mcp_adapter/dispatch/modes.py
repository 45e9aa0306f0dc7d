"""Where the parts of one call run: on the event loop, or all on one worker thread.

A component whose handler, constructor, services and hooks are all synchronous
is *thread-bound*: its whole call (scope, hooks, services, handler, finalizers)
runs on the one worker thread the handler runs on, so a resource that must stay
on the thread that made it (a ``sqlite3`` connection) works, for the price of
one thread hop per call. Every other component runs on the loop, its sync
handler (if any) in a worker thread.

The dispatcher writes each call once, as a coroutine that goes through a mode
for the parts that differ. :class:`OnThread`'s parts never suspend, so
:func:`drive` runs that coroutine to its end on the worker thread without an
event loop; the one part that needs the loop (asking a 2025-11-25 client for
input) goes back to it with ``anyio.from_thread.run``.

Each stage of a call goes through its mode (``visible``, ``check_wire``/``check``,
``resolve``/``aresolve``, ``call``, and the result: ``tool_result``,
``resource_contents``, ``prompt_messages``), so that a traced call
(:class:`mcp_adapter.dispatch.telemetry.Traced`) can wrap each in a span; here the parts that
do not differ are the functions themselves, called directly (``operator.call`` for
``check_wire``, ``check`` and ``resolve``: no Python frame of its own; the contract's
method is looked up on each call, as before, so a patched ``Contract.check_wire``
still counts).
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio.from_thread

from container import Scope
from mcp_adapter.compiled.catalog import CompiledComponent
from mcp_adapter.compiled.handlers import HandlerPlan
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.declare.response import McpResponse
from mcp_adapter.dispatch import results
from mcp_adapter.interrupts import HandlerExited

T = TypeVar("T")


class Dispatching(Protocol):
    """What a mode takes from the dispatcher it runs the stages of (``core.DispatchCore``)."""

    def scope(self, ctx: Any, request: McpRequest | None) -> Scope: ...

    async def visible(
        self, component: CompiledComponent, scope: Any, request: McpRequest | None
    ) -> tuple[bool, bool]: ...

    async def elicit(self, ctx: Any, question: McpResponse, request: McpRequest) -> McpRequest: ...


class _Stages:
    """The stages both modes run as they are: the functions themselves, called directly."""

    __slots__ = ()

    tool_result = staticmethod(results.tool_result)
    resource_contents = staticmethod(results.resource_contents)
    prompt_messages = staticmethod(results.prompt_messages)

    if TYPE_CHECKING:

        @staticmethod
        def check_wire(
            check: Callable[[Any], tuple[T | None, Any]], value: Any, /
        ) -> tuple[T | None, Any]: ...
        @staticmethod
        def check(function: Callable[..., T], /, *args: Any) -> T: ...
        @staticmethod
        def resolve(function: Callable[..., T], /, *args: Any) -> T: ...
        @staticmethod
        def aresolve(function: Callable[..., Awaitable[T]], /, *args: Any) -> Awaitable[T]: ...

    else:
        check_wire = check = resolve = aresolve = staticmethod(operator.call)


class OnLoop(_Stages):
    """Services and hooks on the loop; a sync handler in a worker thread.

    Its parts are the dispatcher's own methods and ``HandlerPlan.invoke`` themselves
    (no wrapper calls), so a call on the loop costs what it did before modes existed.
    """

    __slots__ = ("elicit", "scope", "visible")

    call = staticmethod(HandlerPlan.invoke)

    def __init__(self, dispatcher: Dispatching) -> None:
        self.scope: Callable[[Any, McpRequest | None], Any] = dispatcher.scope
        self.visible: Callable[..., Awaitable[tuple[bool, bool]]] = dispatcher.visible
        self.elicit: Callable[..., Awaitable[Any]] = dispatcher.elicit


class OnThread(_Stages):
    """Everything of the call on the calling (worker) thread."""

    __slots__ = ("dispatcher",)

    def __init__(self, dispatcher: Dispatching) -> None:
        self.dispatcher = dispatcher

    def scope(self, ctx: Any, request: McpRequest | None) -> _ClosedHere:
        return _ClosedHere(self.dispatcher.scope(ctx, request))

    async def call(
        self,
        plan: HandlerPlan,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any = None,
        arguments: dict[str, Any] | None = None,
    ) -> Any:
        return plan.call_sync(instance, scope, request, payload, arguments)

    async def visible(
        self, component: CompiledComponent, scope: Scope, request: McpRequest | None
    ) -> tuple[bool, bool]:
        return verdict(component, scope, request)

    async def elicit(self, ctx: Any, asking: McpResponse, request: McpRequest) -> Any:
        return anyio.from_thread.run(self.dispatcher.elicit, ctx, asking, request)


class _ClosedHere:
    """A scope used with ``async with`` whose finalizers run right here, synchronously."""

    __slots__ = ("scope",)

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    async def __aenter__(self) -> Scope:
        return self.scope

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.scope.__exit__(exc_type, exc, tb)


def verdict(
    component: CompiledComponent, scope: Scope, request: McpRequest | None
) -> tuple[bool, bool]:
    """``(registered, authorized)`` from ``sync_hooks``, on the calling thread."""
    hooks = component.hooks
    if not hooks.any:
        return True, True
    try:
        instance = component.build(scope) if hooks.needs_instance else None
        for plan in hooks.should_register:
            if not plan.call_sync(instance, scope, request):
                return False, False
        for plan in hooks.authorize:
            if not plan.call_sync(instance, scope, request):
                return True, False
    except GeneratorExit as exc:  # see mcp_adapter.interrupts.HandlerExited
        raise HandlerExited(
            f"a visibility hook of {component.name!r} raised GeneratorExit"
        ) from exc
    return True, True


def drive(call: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine that never suspends to its end, here (a worker thread).

    A ``GeneratorExit`` it raises becomes ``HandlerExited``, as for any sync handler
    (see :mod:`mcp_adapter.interrupts`).
    """
    coroutine = call()
    assert isinstance(coroutine, Coroutine)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    except GeneratorExit as exc:
        raise HandlerExited(f"{call!r} raised GeneratorExit") from exc
    coroutine.close()
    raise RuntimeError("a thread-bound call suspended; it must run on the event loop")
