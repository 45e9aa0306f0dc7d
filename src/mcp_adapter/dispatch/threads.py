"""The worker threads a server's sync work runs on: a limiter of its own, and one thread
borrowed for a whole call.

Sync handlers, hooks and services run on anyio worker threads, at most
``Server.threads`` of them at once for one served server (:class:`Threads`, with its
own ``CapacityLimiter``: not anyio's default one, which every library in the process
shares). :meth:`Threads.run` is the plain hop: one function on a worker thread, its
caller waiting for it even when cancelled, because a thread cannot be interrupted and
the scope it uses must not close under it.

A call that needs more borrows a :class:`Worker` (:meth:`Threads.borrowed`): one
thread for the whole call, to which the loop hands the call's sync parts, in order.
That serves a thread-bound component with middleware (its async layers run on the
loop; its scope, services, hooks and handler all on the one thread) and a sync call
with a timeout (it must answer at its deadline while its thread still works). The
wait for a part may be cancelled (the deadline, the client's cancel, a disconnect):
the part goes on, and what is handed over after it, the scope's close with the error
that ended the call, runs once it returns. The borrowed place in the limiter (and
the call's place among its client's calls) is given back only when everything handed
to the thread has run, so work left running still counts.
"""

from __future__ import annotations

import functools
import logging
import math
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from mcp_adapter.declare.components import DEFAULT_THREADS
from mcp_adapter.interrupts import HandlerExited

T = TypeVar("T")

logger = logging.getLogger("mcp_adapter")


class Held(Protocol):
    """A place a borrowed thread keeps while it works (a call's place among its client's
    calls): taken when the thread is borrowed, given back on the loop when it is done."""

    def hold(self) -> None: ...
    def release(self) -> None: ...


class Threads:
    """The worker threads of one served server: at most ``size`` busy at once."""

    __slots__ = ("_unbounded", "limiter", "size")

    def __init__(self, size: int = DEFAULT_THREADS) -> None:
        self.size = size
        self.limiter = anyio.CapacityLimiter(size)
        """Shared by every call of the server; a borrowed thread holds one token for its
        whole call (:class:`Worker`), a plain hop for its one function."""
        self._unbounded = anyio.CapacityLimiter(math.inf)
        """What anyio counts a borrowed thread against: its real place is in ``limiter``,
        taken and given back by the :class:`Worker` itself."""

    def run(self, function: Callable[..., T], *args: Any) -> Awaitable[T]:
        """``function(*args)`` on a worker thread; the wait outlasts a cancellation."""
        return anyio.to_thread.run_sync(function, *args, limiter=self.limiter)

    async def borrowed(self, body: Callable[[Worker], Awaitable[T]], held: Held | None = None) -> T:
        """``await body(worker)`` with one worker thread borrowed for its whole run.

        ``held`` (the call's place among its client's calls) is kept until the
        thread has run everything handed to it, like the thread's own place.
        """
        worker = Worker(self.limiter, held)
        await self.limiter.acquire_on_behalf_of(worker)
        if held is not None:
            held.hold()
        serve = functools.partial(
            anyio.to_thread.run_sync, worker.serve, abandon_on_cancel=True, limiter=self._unbounded
        )
        failure: BaseException | None = None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(serve)
                try:
                    value = await body(worker)
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as exc:  # noqa: BLE001 - re-raised below, not as a group
                    failure = exc
                finally:
                    worker.end()
        finally:
            worker.release_if_never_served()
        if failure is not None:
            raise failure
        return value


class _Job:
    """One sync part handed to a worker thread, and what became of it."""

    __slots__ = ("args", "done", "dropped", "error", "finished", "function", "started", "value")

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...], done: Any) -> None:
        self.function = function
        self.args = args
        self.done: anyio.Event | None = done
        self.started = False
        self.dropped = False
        """Its wait was cancelled before it started: it never runs."""
        self.finished = False
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        """On the worker thread; ``GeneratorExit`` becomes ``HandlerExited`` (see
        :mod:`mcp_adapter.interrupts`)."""
        try:
            self.value = self.function(*self.args)
        except GeneratorExit as exc:
            self.error = HandlerExited(f"{self.function!r} raised GeneratorExit")
            self.error.__cause__ = exc
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the part
            self.error = exc
        finally:
            self.finished = True


_END = None
"""What ends a worker thread's queue."""

_NOT_STARTED, _SERVING, _NEVER = 0, 1, 2


class Worker:
    """One worker thread for one call: the loop hands it the call's sync parts, in order.

    Made by :meth:`Threads.borrowed`. Parts are run one after the other on the same
    thread; :meth:`run` waits for one. A wait that is cancelled leaves its part
    running (:attr:`behind`), and the parts handed over later run after it.
    """

    __slots__ = (
        "_held",
        "_jobs",
        "_limiter",
        "_lock",
        "_loop",
        "_running",
        "_state",
        "_used",
    )

    def __init__(self, limiter: anyio.CapacityLimiter, held: Held | None) -> None:
        self._limiter = limiter
        self._held = held
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._loop = anyio.lowlevel.current_token()
        self._lock = threading.Lock()
        self._state = _NOT_STARTED
        self._running: _Job | None = None
        """The last part whose wait was cancelled after it started (it may still run)."""
        self._used = False
        """Whether any part was handed over (else nothing ran on the thread)."""

    @property
    def behind(self) -> bool:
        """A part whose wait was cancelled is still running."""
        running = self._running
        return running is not None and not running.finished

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` on the worker thread, after every part handed over before."""
        job = _Job(function, args, anyio.Event())
        self._used = True
        self._jobs.put(job)
        assert job.done is not None
        try:
            await job.done.wait()
        except BaseException:
            with self._lock:
                if not job.started:
                    job.dropped = True
                elif not job.finished:
                    self._running = job
            raise
        if job.error is not None:
            raise job.error
        return job.value  # type: ignore[no-any-return]

    def later(self, function: Callable[..., Any], *args: Any) -> None:
        """Hand ``function(*args)`` over without waiting: it runs after every part before it
        (its failure is its own to log)."""
        self._used = True
        self._jobs.put(_Job(function, args, None))

    @property
    def used(self) -> bool:
        return self._used

    def end(self) -> None:
        """No more parts: the thread ends once it has run those handed over."""
        self._jobs.put(_END)

    # -- on the worker thread ----------------------------------------------------------

    def serve(self) -> None:
        """Run the parts handed over, in order, until :meth:`end`; then give the places back."""
        with self._lock:
            if self._state == _NEVER:
                return
            self._state = _SERVING
        try:
            while (job := self._jobs.get()) is not _END:
                with self._lock:
                    job.started = not job.dropped
                if job.started:
                    job.run()
                if job.done is not None:
                    self._soon(job.done.set)
        finally:
            self._soon(self._give_back)

    def _soon(self, function: Callable[[], object]) -> None:
        """Call ``function`` on the event loop, without waiting for it."""
        loop = self._loop
        try:
            loop.backend_class.run_sync_soon(function, (), loop.native_token)
        except anyio.RunFinishedError:  # the loop is gone (the process is ending)
            logger.debug("a worker thread finished after its event loop")

    # -- on the loop -------------------------------------------------------------------

    def release_if_never_served(self) -> None:
        """Give the places back here when the thread never started serving (its call was
        cancelled first): a thread that did gives them back itself."""
        with self._lock:
            if self._state != _NOT_STARTED:
                return
            self._state = _NEVER
        self._give_back()

    def _give_back(self) -> None:
        self._limiter.release_on_behalf_of(self)
        if self._held is not None:
            self._held.release()
