"""Sync work asked for in one turn of the event loop, run in one worker-thread call.

One change announced to many listeners wakes every listener's task in the same
turn of the loop, and each asks whether its caller may see the resource. When
the resource's hooks are all sync, each ask would be a thread hop of its own (a
thousand hops for a thousand listeners). :class:`Batched` gathers what is
asked in one turn instead: the first caller yields once, so every task the same
change woke adds its function, then runs them all, in the order they were
asked, in one call on a worker thread (as a listing runs its page's sync
hooks, ``Visibility._filter``). Each caller gets its own function's value, or
its exception, in its own task; a sync hook still never runs on the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel

from mcp_adapter.dispatch.threads import Threads
from mcp_adapter.interrupts import HandlerExited

T = TypeVar("T")


class _Turn(Generic[T]):
    """The functions one turn asked for, and what each gave."""

    __slots__ = ("done", "functions", "outcomes")

    def __init__(self) -> None:
        self.functions: list[Callable[[], T]] = []
        self.outcomes: list[tuple[bool, Any]] = []
        """Per function, in order: ``(True, value)`` or ``(False, exception)``."""
        self.done = anyio.Event()

    def run(self) -> None:
        """On the worker thread: every function, each failure kept for its own caller."""
        for function in self.functions:
            try:
                self.outcomes.append((True, function()))
            except GeneratorExit as exc:  # see mcp_adapter.interrupts.HandlerExited
                error = HandlerExited(f"{function!r} raised GeneratorExit")
                error.__cause__ = exc
                self.outcomes.append((False, error))
            except Exception as exc:  # noqa: BLE001 - raised again in its caller's task
                self.outcomes.append((False, exc))

    def outcome(self, index: int) -> T:
        if index >= len(self.outcomes):
            raise RuntimeError("the worker thread did not run this check")
        ok, value = self.outcomes[index]
        if not ok:
            raise value
        result: T = value
        return result


class Batched(Generic[T]):
    """Sync functions asked for in one turn of the loop, run in one worker-thread call."""

    __slots__ = ("_open", "_threads")

    def __init__(self, threads: Threads) -> None:
        self._threads = threads
        self._open: _Turn[T] | None = None

    async def run(self, function: Callable[[], T]) -> T:
        """``function()`` on a worker thread, together with every other function asked for
        in this turn of the loop; its value, or its exception, here."""
        turn = self._open
        if turn is not None:  # a turn is gathering: join it
            index = len(turn.functions)
            turn.functions.append(function)
            await turn.done.wait()
            return turn.outcome(index)
        turn = self._open = _Turn()
        turn.functions.append(function)
        # Shielded: the others wait for this task to run their functions, so its own
        # cancellation waits until they have run (it is delivered at its next checkpoint).
        with anyio.CancelScope(shield=True):
            try:
                await anyio.lowlevel.checkpoint()  # every task woken with this one joins
            finally:
                self._open = None
            try:
                await self._threads.run(turn.run)
            finally:
                turn.done.set()
        return turn.outcome(0)
