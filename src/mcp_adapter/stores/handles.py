"""Where open state handles live: the :class:`HandleStore` protocol, its limits, and the
in-memory store (the default: the session services of a handle live in the process that
serves its calls; ``RedisHandles`` shares the handles themselves between replicas).

A record holds who minted the handle (the caller's identity key), when, when it was last
used, and the session scope its calls open in. A handle is finalized (its session scope
closed, async finalizers included) exactly once: when closed, once idle past
``idle_timeout`` (found on access, or by the sweep :meth:`MemoryHandles.running`
runs), or at shutdown.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import anyio

from container import SessionScope
from mcp_adapter.errors import ToolError, logger

DEFAULT_HANDLE_IDLE_TIMEOUT = 1800.0
DEFAULT_MAX_HANDLES_PER_CLIENT = 100
DEFAULT_MAX_HANDLES = 10_000
DEFAULT_SWEEP_INTERVAL = 60.0
"""Seconds between two sweeps of expired handles (less when ``idle_timeout`` is shorter)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandleLimits:
    """How many handles may be open and for how long; ``None`` lifts a limit."""

    idle_timeout: float | None = DEFAULT_HANDLE_IDLE_TIMEOUT
    """Seconds a handle with no call in flight is kept after its last use."""
    max_per_client: int | None = DEFAULT_MAX_HANDLES_PER_CLIENT
    """Open handles per client (token principal, else peer address)."""
    max_handles: int | None = DEFAULT_MAX_HANDLES
    """Open handles in all."""

    def __post_init__(self) -> None:
        timeout = self.idle_timeout
        if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
            raise ValueError("idle_timeout must be a positive number of seconds or None")
        for name in ("max_per_client", "max_handles"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be at least 1 or None")

    @property
    def sweep_interval(self) -> float:
        timeout = self.idle_timeout
        return DEFAULT_SWEEP_INTERVAL if timeout is None else min(DEFAULT_SWEEP_INTERVAL, timeout)


class TooManyHandles(ToolError):
    """``StateHandles.open()`` past a limit: the calling tool answers with this message as a
    tool error (``isError: true``); the caller may close handles it holds and try again."""


class HandlesUnavailable(ToolError):
    """The shared store of state handles (Redis) failed or did not answer in time: the
    call answers with this message as a tool error, and may be tried again."""


@dataclass(slots=True, eq=False)
class HandleRecord:
    """One open handle: whose it is, when it was made and last used, its session scope."""

    owner: Hashable
    session: SessionScope
    created: float
    last_used: float
    users: int = 0
    """Calls in flight in this handle's session: it is not finalized under them."""
    open: bool = True
    """``False`` once closed or expired (no call finds it any more)."""
    finalized: bool = field(default=False, repr=False)


@runtime_checkable
class HandleStore(Protocol):
    """Where state handles are kept (one per served app, shared by its dispatchers)."""

    limits: HandleLimits

    def begin(self, call: object) -> None:
        """The tool call ``call`` (the SDK's request context) may mint from now until its
        :meth:`settle` (the dispatcher calls it for a tool whose ``CompiledTool.mints``)."""
        ...

    def add(self, owner: Hashable, handle: str, session: SessionScope, call: object = None) -> None:
        """Keep a new ``handle`` of ``owner``, minted by the tool call ``call`` (the SDK's
        request context); raise :class:`TooManyHandles` past a limit, here or in
        :meth:`settle`."""
        ...

    async def settle(self, call: object, *, keep: bool = True) -> None:
        """The tool call ``call`` is answering: make the handles it minted known to every
        call (``keep``), or drop them (the call failed). May raise :class:`TooManyHandles`
        or :class:`HandlesUnavailable` (with ``keep``): the call answers that instead."""
        ...

    async def take(self, owner: Hashable, handle: str) -> HandleRecord | None:
        """The open ``handle`` of ``owner``, marked in use until :meth:`release`; ``None``
        for any other (unknown, expired, closed, another owner's), all alike."""
        ...

    async def release(self, record: HandleRecord) -> None:
        """A call that :meth:`take` gave ``record`` is over."""
        ...

    async def close(self, owner: Hashable, handle: str) -> None:
        """Close ``owner``'s ``handle`` (finalized once its calls in flight are over);
        nothing for a handle that is not ``owner``'s open one."""
        ...

    def running(self) -> AbstractAsyncContextManager[None]:
        """An async context manager: sweeps expired handles while open, and finalizes
        every handle when it exits (shutdown)."""
        ...


class Serving:
    """What both stores do while served: :meth:`running`, their periodic chores around
    serving, and every handle of theirs finalized when the last server leaves."""

    limits: HandleLimits
    _serving: int
    """Servers inside :meth:`running` (several servers may share one store)."""

    async def sweep(self) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def chores(self) -> list[tuple[float, Callable[[], Awaitable[None]]]]:
        """What runs every so many seconds while served: the sweep of expired handles."""
        return [(self.limits.sweep_interval, self.sweep)]

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run :meth:`chores` while open; when the last server that entered it leaves,
        finalize every handle (:meth:`aclose`)."""
        self._serving += 1
        try:
            async with anyio.create_task_group() as group:
                for period, chore in self.chores():
                    group.start_soon(_every, period, chore)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            self._serving -= 1
            if not self._serving:
                with anyio.CancelScope(shield=True):
                    await self.aclose()


async def _every(period: float, chore: Callable[[], Awaitable[None]]) -> None:
    while True:
        await anyio.sleep(period)
        try:
            await chore()
        except HandlesUnavailable:
            continue  # logged by the store; the next round tries again


class MemoryHandles(Serving):
    """A :class:`HandleStore` in this process.

    >>> store = MemoryHandles(HandleLimits(max_per_client=1))
    >>> store.limits.max_per_client
    1
    """

    def __init__(
        self, limits: HandleLimits | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = HandleLimits() if limits is None else limits
        self._clock = clock
        self._records: dict[str, HandleRecord] = {}
        self._owned: dict[Hashable, int] = {}
        self._lock = threading.Lock()
        """``add`` may be called from a sync handler's worker thread."""
        self._expired: list[HandleRecord] = []
        """Records ``add`` dropped to make room, finalized by the next async step."""
        self._serving = 0

    def __len__(self) -> int:
        return len(self._records)

    def add(self, owner: Hashable, handle: str, session: SessionScope, call: object = None) -> None:
        with self._lock:
            if self._full(owner):
                self._drop_expired()
                if self._full(owner):
                    whose = "this client" if self._owned_by(owner) else "the server"
                    raise TooManyHandles(
                        f"Too many open state handles for {whose}: close one and try again"
                    )
            now = self._clock()
            self._records[handle] = HandleRecord(owner, session, now, now)
            self._owned[owner] = self._owned.get(owner, 0) + 1

    def begin(self, call: object) -> None:
        """Nothing: any code may mint here, in a tool call or not, during one or after."""

    async def settle(self, call: object, *, keep: bool = True) -> None:
        """Nothing: a handle is known to every call of this process once :meth:`add` returns."""

    def _owned_by(self, owner: Hashable) -> bool:
        cap = self.limits.max_per_client
        return cap is not None and self._owned.get(owner, 0) >= cap

    def _full(self, owner: Hashable) -> bool:
        cap = self.limits.max_handles
        return self._owned_by(owner) or (cap is not None and len(self._records) >= cap)

    def _idle(self, record: HandleRecord, now: float) -> bool:
        timeout = self.limits.idle_timeout
        return record.users == 0 and timeout is not None and now - record.last_used > timeout

    def _unlink(self, handle: str, record: HandleRecord) -> None:
        """Forget ``record`` (under the lock): no call finds it any more."""
        if self._records.get(handle) is record:
            del self._records[handle]
            left = self._owned[record.owner] - 1
            if left:
                self._owned[record.owner] = left
            else:
                del self._owned[record.owner]
        record.open = False

    def _drop_expired(self) -> list[HandleRecord]:
        now = self._clock()
        dropped = [(h, r) for h, r in self._records.items() if self._idle(r, now)]
        for handle, record in dropped:
            self._unlink(handle, record)
            self._expired.append(record)
        return [record for _, record in dropped]

    async def take(self, owner: Hashable, handle: str) -> HandleRecord | None:
        if self._expired:
            await self._finalize_dropped()
        with self._lock:
            record = self._records.get(handle)
            if record is None or record.owner != owner:
                return None
            now = self._clock()
            if self._idle(record, now):
                self._unlink(handle, record)
                found = None
            else:
                record.users += 1
                record.last_used = now
                return record
        await finalize(record)
        return found

    async def release(self, record: HandleRecord) -> None:
        with self._lock:
            record.users -= 1
            record.last_used = self._clock()
            done = not record.open and record.users == 0
        if done:
            await finalize(record)

    async def close(self, owner: Hashable, handle: str) -> None:
        with self._lock:
            record = self._records.get(handle)
            if record is None or record.owner != owner:
                return
            self._unlink(handle, record)
            done = record.users == 0
        if done:
            await finalize(record)

    async def sweep(self) -> None:
        """Finalize every handle idle past ``idle_timeout``."""
        with self._lock:
            self._drop_expired()
        await self._finalize_dropped()

    async def _finalize_dropped(self) -> None:
        with self._lock:
            dropped, self._expired = self._expired, []
        for record in dropped:
            await finalize(record)

    async def aclose(self) -> None:
        """Finalize every handle (shutdown)."""
        with self._lock:
            records = list(self._records.items())
            for handle, record in records:
                self._unlink(handle, record)
        await self._finalize_dropped()
        for _, record in records:
            await finalize(record)


async def finalize(record: HandleRecord) -> None:
    """Close the handle's session scope, once; a failing finalizer is logged, not raised
    (the call or sweep that found the handle expired is not its owner's)."""
    if record.finalized:
        return
    record.finalized = True
    with anyio.CancelScope(shield=True):
        try:
            await record.session.aclose()
        except Exception:  # noqa: BLE001 - logged with its traceback; nobody to tell
            logger.exception("finalizing a state handle's session failed")
