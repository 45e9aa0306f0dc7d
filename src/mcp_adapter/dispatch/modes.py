"""Where the parts of one call run: on the event loop, all on one worker thread, or
split between the loop and one borrowed worker thread.

A component whose handler, constructor, services, hooks and middleware services are
all synchronous is *thread-bound*: its scope, hooks, services, handler and finalizers
run on one worker thread, so a resource that must stay on the thread that made it (a
``sqlite3`` connection) works. Without middleware and without a timeout that is one
thread hop per call (:class:`OnThread`): its parts never suspend, so :func:`drive`
runs the call's coroutine to its end on the worker thread without an event loop.
With middleware (async layers, which run on the loop) or a timeout (the call must
answer at its deadline while its thread still works), the call borrows a worker
thread (:class:`mcp_adapter.dispatch.threads.Worker`) and the loop hands it every
sync part (:class:`OnWorker`). A sync handler that needs async services runs on a
worker thread and everything else on the loop (:class:`OnLoop`; with a timeout,
:class:`OnLoopWithWorker`, whose scope closes only after the handler's thread
returned). Asking a 2025-11-25 client for input ends a round: its scope closes, the
question goes out on the loop, and the next round runs in a new scope.

Each stage of a call goes through its mode (``visible``, ``check_wire``/``check``,
``resolve``/``aresolve``, ``call``, ``inject``, and the result: ``tool_result``,
``resource_contents``, ``prompt_messages``), so that a traced call
(:class:`mcp_adapter.dispatch.telemetry.Traced`) can wrap each in a span; here the parts that
do not differ are the functions themselves, called directly (``operator.call`` for
``check_wire``, ``check`` and ``resolve``: no Python frame of its own; the contract's
method is looked up on each call, as before, so a patched ``Contract.check_wire``
still counts).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import anyio
import anyio.from_thread

from container import Scope, SessionScope
from mcp_adapter.compiled.catalog import CompiledComponent
from mcp_adapter.compiled.handlers import HandlerPlan, Offload
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.dispatch import results
from mcp_adapter.dispatch.threads import Worker
from mcp_adapter.dispatch.visibility import Visibility, verdict
from mcp_adapter.interrupts import HandlerExited

if TYPE_CHECKING:
    from mcp_adapter.dispatch.telemetry import Traced

T = TypeVar("T")

Mode: TypeAlias = "OnLoop | OnThread | OnWorker | Traced"
"""Where the stages of one call run (the modes below), traced or not (``telemetry``)."""


class _Stages:
    """The stages every mode runs as they are: the functions themselves, called directly."""

    __slots__ = ()

    tool_result = staticmethod(results.tool_result)
    resource_contents = staticmethod(results.resource_contents)
    prompt_messages = staticmethod(results.prompt_messages)
    inject = staticmethod(HandlerPlan.injected)
    """What a middleware layer is given: its injected arguments, resolved in the call's scope."""

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

    __slots__ = ("scope", "visible")

    call = staticmethod(HandlerPlan.invoke)

    def __init__(self, dispatcher: Visibility) -> None:
        self.scope: Callable[..., Any] = dispatcher.scope
        self.visible: Callable[..., Awaitable[tuple[bool, bool]]] = dispatcher.visible


class OnThread(_Stages):
    """Everything of the call on the calling (worker) thread."""

    __slots__ = ("dispatcher",)

    def __init__(self, dispatcher: Visibility) -> None:
        self.dispatcher = dispatcher

    def scope(
        self, ctx: Any, request: McpRequest | None, session: SessionScope | None = None
    ) -> _ClosedHere:
        return _ClosedHere(self.dispatcher.scope(ctx, request, session))

    async def call(
        self,
        plan: HandlerPlan,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any = None,
        arguments: dict[str, Any] | None = None,
        threads: Offload | None = None,
    ) -> Any:
        return plan.call_sync(instance, scope, request, payload, arguments)

    async def visible(
        self, component: CompiledComponent, scope: Scope, request: McpRequest | None
    ) -> tuple[bool, bool]:
        return verdict(component, scope, request)


class OnWorker(_Stages):
    """A thread-bound call split between the loop and the worker thread it borrowed:
    its middleware layers and its result on the loop, every sync part (the scope's
    services and finalizers, hooks, the constructor, the handler) on the thread.

    The component is built lazily, on the thread, in the handler's own hop: ``resolve``
    returns what builds it, and ``call`` builds it there first.
    """

    __slots__ = ("dispatcher", "worker")

    def __init__(self, dispatcher: Visibility, worker: Worker) -> None:
        self.dispatcher = dispatcher
        self.worker = worker

    def scope(
        self, ctx: Any, request: McpRequest | None, session: SessionScope | None = None
    ) -> _ClosedOnWorker:
        return _ClosedOnWorker(self.dispatcher.scope(ctx, request, session), self.worker)

    async def visible(
        self, component: CompiledComponent, scope: Scope, request: McpRequest | None
    ) -> tuple[bool, bool]:
        return await self.worker.run(verdict, component, scope, request)

    def resolve(self, function: Callable[..., T], /, *args: Any) -> T:  # type: ignore[override]
        return _Later(function, args)  # type: ignore[return-value]

    async def aresolve(  # type: ignore[override]
        self, function: Callable[..., Awaitable[T]], /, *args: Any
    ) -> T:
        return _Later(function, args)  # type: ignore[return-value]

    async def call(
        self,
        plan: HandlerPlan,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any = None,
        arguments: dict[str, Any] | None = None,
        threads: Offload | None = None,
    ) -> Any:
        return await self.worker.run(
            _call_built, plan, instance, scope, request, payload, arguments
        )

    async def inject(self, plan: HandlerPlan, scope: Scope, request: McpRequest | None) -> Any:
        if not plan.services:  # the request, the HTTP request: nothing to build, no hop
            return plan.injected_sync(scope, request)
        return await self.worker.run(plan.injected_sync, scope, request)


class OnLoopWithWorker(OnLoop):
    """:class:`OnLoop` for a sync handler with a timeout: the handler (and a sync hook)
    runs on the worker thread the call borrowed, and the scope closes only once that
    thread has returned, even when the call's wait for it was cancelled."""

    __slots__ = ("worker",)

    def __init__(self, dispatcher: Visibility, worker: Worker) -> None:
        super().__init__(dispatcher)
        scope = self.scope
        self.scope = lambda ctx, request, session=None: _ClosedAfterWorker(
            scope(ctx, request, session), worker
        )
        self.visible = functools.partial(dispatcher.visible, threads=worker)
        self.worker = worker

    def call(
        self,
        plan: HandlerPlan,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any = None,
        arguments: dict[str, Any] | None = None,
        threads: Offload | None = None,
    ) -> Awaitable[Any]:
        return plan.invoke(instance, scope, request, payload, arguments, self.worker)


class _Later:
    """A component the first hop that needs it builds (:class:`OnWorker`), once: an
    ``authorize`` that takes answers and the handler share it."""

    __slots__ = ("args", "built", "function")

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.function = function
        self.args = args
        self.built: Any = _Later

    def build(self) -> Any:
        if self.built is not _Later:
            return self.built
        built = self.function(*self.args)
        if isinstance(built, Coroutine):  # ``CompiledComponent.instance``: never suspends here
            built = drive(lambda: built)
        self.built = built
        return built


def _call_built(
    plan: HandlerPlan,
    instance: Any,
    scope: Scope,
    request: McpRequest | None,
    payload: Any,
    arguments: dict[str, Any] | None,
) -> Any:
    """On the worker thread: build the component if it is not yet, then call ``plan``."""
    if type(instance) is _Later:
        instance = instance.build()
    return plan.call_sync(instance, scope, request, payload, arguments)


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


class _ClosedWithWorker:
    """A scope used with ``async with`` by a call that borrows a worker thread."""

    __slots__ = ("scope", "worker")

    def __init__(self, scope: Scope, worker: Worker) -> None:
        self.scope = scope
        self.worker = worker

    async def __aenter__(self) -> Scope:
        return self.scope


class _ClosedOnWorker(_ClosedWithWorker):
    """A scope whose finalizers run on the call's worker thread, after every part handed
    to it: at once when the thread is free (shielded, like any scope's finalizers), and,
    when a cancelled part still runs there, after that part returns, without waiting."""

    __slots__ = ()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        worker, close = self.worker, self.scope.__exit__
        if worker.behind:
            worker.later(close, exc_type, exc, tb)
        elif not worker.used or not self.scope.exits:  # no finalizer to run on the thread
            close(exc_type, exc, tb)
        else:
            with anyio.CancelScope(shield=True):
                await worker.run(close, exc_type, exc, tb)


class _ClosedAfterWorker(_ClosedWithWorker):
    """A scope closed on the loop, or, while a cancelled sync part still runs on the
    call's worker thread, by that thread once the part returns (back on the loop)."""

    __slots__ = ()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.worker.behind:
            self.worker.later(anyio.from_thread.run, _close_shielded, self.scope, exc)
            return
        await self.scope.__aexit__(exc_type, exc, tb)


async def _close_shielded(scope: Scope, error: BaseException | None) -> None:
    with anyio.CancelScope(shield=True):
        await scope.aclose(error)


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
