"""A scope's finalizers: what they are, and running them in reverse order, every one of
them, sync or async, with the errors they raise collected."""

from __future__ import annotations

import inspect
import logging
import types
import typing
from collections.abc import Awaitable, Coroutine, Generator, Iterator
from typing import Any

import anyio

from container.errors import FinalizerError, ScopeError

logger = logging.getLogger("container")

Exit = tuple[int, Any]
"""A finalizer: ``(kind, target)``; ``kind`` is one of the four constants below."""

SYNC_EXIT = 0
"""``target(exc_type, exc, tb)``: a context manager's ``__exit__`` or a close hook."""
ASYNC_EXIT = 1
"""``await target(exc_type, exc, tb)``: an async context manager's ``__aexit__``."""
SYNC_GENERATOR = 2
"""A generator suspended at its ``yield``: resumed with the error (or ``None``) as its value."""
ASYNC_GENERATOR = 3
"""An async generator suspended at its ``yield``: resumed like a sync one."""

PENDING_ASYNC = "an async finalizer is pending: close with `async with` / `await ...aclose()`"


class _Unwinding:
    """Collects what goes wrong while finalizers run; every finalizer runs regardless."""

    __slots__ = ("error", "failures", "info", "interrupt")

    def __init__(self, error: BaseException | None) -> None:
        self.error = error
        self.info: tuple[Any, Any, Any] = (
            (type(error), error, error.__traceback__) if error else (None, None, None)
        )
        self.failures: list[Exception] = []
        self.interrupt: BaseException | None = None

    def failed(self, exc: BaseException) -> None:
        if exc is self.error:
            return  # a generator re-raised the error it was given: not a finalizer failure
        if not isinstance(exc, Exception):
            if self.interrupt is None:
                self.interrupt = exc
            return
        logger.error("finalizer failed", exc_info=exc)
        self.failures.append(exc)

    def finish(self) -> None:
        if self.interrupt is not None:
            raise self.interrupt
        failures = self.failures
        if not failures:
            return
        group = FinalizerError(f"{len(failures)} finalizer(s) failed", failures)
        if self.error is None:
            raise group
        self.error.add_note(f"while unwinding, {group}: {failures!r}")


def _generator_did_not_stop(gen: Any) -> RuntimeError:
    name = getattr(gen, "__qualname__", None) or type(gen).__name__
    return RuntimeError(f"{name} yielded more than once; a factory must yield exactly one value")


def _finalize_sync(kind: int, target: Any, unwinding: _Unwinding) -> None:
    if kind == SYNC_GENERATOR:
        try:
            target.send(unwinding.error)
        except StopIteration:
            return
        target.close()
        raise _generator_did_not_stop(target)
    result = target(*unwinding.info)
    if inspect.isawaitable(result):
        if isinstance(result, Coroutine):
            result.close()
        raise ScopeError(PENDING_ASYNC)


async def _finalize_async(kind: int, target: Any, unwinding: _Unwinding) -> None:
    if kind == ASYNC_GENERATOR:
        try:
            await target.asend(unwinding.error)
        except StopAsyncIteration:
            return
        await target.aclose()
        raise _generator_did_not_stop(target)
    if kind == SYNC_GENERATOR:
        _finalize_sync(kind, target, unwinding)
        return
    result = target(*unwinding.info)
    if inspect.isawaitable(result):
        await result


def run_exits_sync(exits: list[Exit], error: BaseException | None) -> None:
    """Run finalizers in reverse order; all of them run even when some fail.

    Async finalizers cannot run here: each is reported as a ``ScopeError``.
    """
    unwinding = _Unwinding(error)
    while exits:
        kind, target = exits.pop()
        if kind in (ASYNC_EXIT, ASYNC_GENERATOR):
            unwinding.failures.append(ScopeError(PENDING_ASYNC))
            continue
        try:
            _finalize_sync(kind, target, unwinding)
        except BaseException as exc:  # noqa: BLE001 - every finalizer runs; failures are reported
            unwinding.failed(exc)
    unwinding.finish()


async def run_exits_async(exits: list[Exit], error: BaseException | None) -> None:
    """Run finalizers in reverse order, shielded from cancellation, all of them."""
    unwinding = _Unwinding(error)
    with anyio.CancelScope(shield=True):
        while exits:
            kind, target = exits.pop()
            try:
                await _finalize_async(kind, target, unwinding)
            except BaseException as exc:  # noqa: BLE001 - every finalizer runs
                unwinding.failed(exc)
    unwinding.finish()


@types.coroutine
def _finished() -> Generator[None, None, None]:
    return
    yield  # a generator (never yielding), marked as a coroutine so that `await` takes it


def _exhausted() -> Awaitable[None]:
    gen = _finished()
    for _ in typing.cast(Iterator[None], gen):  # pragma: no cover - it yields nothing
        pass
    return gen


DONE = _exhausted()
"""An awaitable that is already over: ``await _DONE`` is ``None`` at once, every time.

A generator that has run to its end returns ``None`` to each later
``yield from`` / ``await`` without suspending (PEP 380), so awaiting it
allocates nothing: the cheap result of an ``__aexit__`` with nothing to await.
"""
