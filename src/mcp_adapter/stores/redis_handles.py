"""A :class:`~mcp_adapter.stores.handles.HandleStore` in Redis: a handle minted through one
replica works through every other, and a close through any replica ends it on all.

What Redis keeps, under ``{prefix}`` (``SharedRedis.handles()``: ``...:handles``):

- ``{prefix}:h:{digest}``: one open handle, a hash holding its calls in flight on every
  replica; the digest is of its owner and the handle, so another caller's lookup of the
  same string finds nothing. It expires ``idle_timeout`` after its last call ended;
  a call in flight holds it for a lease (``DEFAULT_LEASE``) at least, which the replica
  running the call renews: a handle whose replica died mid-call expires a lease later.
- ``{prefix}:o:{digest of the owner}``: a sorted set of the owner's open handles, scored
  by when each expires (what ``max_per_client`` counts); ``{prefix}:all``: every open
  handle (what ``max_handles`` counts). Each cap is checked and the handle added by one
  Lua script, on Redis's clock: atomic however many replicas mint at once.

What each replica keeps: the handle's session scope there, built on its first call on
that replica, and finalized once on that replica when the handle is closed (anywhere),
has expired, or the replica stops. A close is noted to every replica at once: the
script that deletes the handle publishes its digest on ``{prefix}:closed`` (the note and
the delete are one step), and each replica, receiving that channel while served
(:meth:`RedisHandles.running`), drops its record of the handle, finalized as soon as no
call of that replica uses it. An expiry is no note: each replica finds it when a call
presents the handle again, or at its next sweep (``sweep_interval``), as it finds a close
noted while it could not reach Redis.

Minting is two steps: ``add`` (called by ``StateHandles.open()``, a plain call) keeps the
new handle in this replica, and ``settle`` (awaited by the dispatcher before the minting
call answers) adds it to Redis, where the caps are checked: a refusal is that call's
answer, and the handle is never known. A call may mint between its ``begin`` (the
dispatcher's, for a tool that may mint: ``CompiledTool.mints``) and its ``settle``; an
``add`` outside that (a ``StateHandles`` kept past its call) raises, rather than keep a
handle nobody will settle. Every Redis command is bounded by ``timeout``
seconds; a failure is :class:`~mcp_adapter.stores.handles.HandlesUnavailable`.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from container import SessionScope
from mcp_adapter.distribution import needs_extra
from mcp_adapter.errors import logger
from mcp_adapter.stores.handles import (
    HandleLimits,
    HandleRecord,
    HandlesUnavailable,
    Serving,
    TooManyHandles,
    finalize,
)
from mcp_adapter.stores.redis_channel import receive
from mcp_adapter.stores.redis_handle_scripts import ADD, CLOSE, LEASE, RELEASE, SWEEP, TAKE

if TYPE_CHECKING:
    from redis.asyncio import Redis

DEFAULT_LEASE = 60.0
"""Seconds a call in flight keeps its handle alive however short the idle timeout; the
replica running it renews this every third of it, so a handle whose call's replica died
expires at most this long after (then idle, as any)."""
_MEMBER = re.compile(r"[0-9a-f]{32}")
"""What a close note carries: a member digest (:func:`digest`); anything else, of any
length, is ignored (and logged)."""


def digest(*parts: str) -> str:
    """A key part no caller can choose: 32 hex digits of SHA-256 over ``parts``.

    >>> len(digest("ada", "h1")), digest("ada", "h1") == digest("bob", "h1")
    (32, False)
    """
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def noted_member(data: bytes | str) -> str | None:
    """The member a close note carries, or None for any other message (read no further
    than its length when that is not a digest's).

    >>> noted_member(digest("ada", "h1").encode()) == digest("ada", "h1")
    True
    >>> noted_member(b"h1"), noted_member("Z" * 32), noted_member(b"0" * 100_000)
    (None, None, None)
    """
    if len(data) != 32:
        return None
    member = data.decode("latin-1") if isinstance(data, bytes) else data
    return member if _MEMBER.fullmatch(member) else None


@dataclass(slots=True, eq=False)
class SharedRecord(HandleRecord):
    """A handle's record in this replica, and where Redis keeps the handle."""

    member: str = ""
    """The digest of owner and handle: the handle's key part and its member in the sets."""
    owned: str = ""
    """The key of the owner's set."""
    known: bool = True
    """``False`` while minted by a call that has not answered yet (not in Redis)."""


class RedisHandles(Serving):
    """Keeps state handles in Redis, so that N replicas serve one client's handles.

    ``client`` is a ``redis.asyncio.Redis``; ``prefix`` namespaces the keys;
    ``sessions`` builds the session scope of a handle on a replica that did not mint it
    (``http_app`` gives the container's); ``timeout`` bounds each Redis command
    (``None``: the client's own timeouts; ``SharedRedis.handles()`` gives its command
    timeout).
    """

    def __init__(
        self,
        client: Redis,
        prefix: str,
        limits: HandleLimits | None = None,
        *,
        sessions: Callable[[str], SessionScope],
        timeout: float | None = None,
        lease: float = DEFAULT_LEASE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.limits = HandleLimits() if limits is None else limits
        self.timeout = timeout
        self._sessions = sessions
        self._clock = clock
        idle = self.limits.idle_timeout
        self._ttl = 0 if idle is None else math.ceil(idle * 1000)
        """Milliseconds a handle is kept after its last call ended (0: no expiry)."""
        self.lease = lease
        self._lease = math.ceil(lease * 1000)
        self._held = 0 if idle is None else max(self._ttl, self._lease)
        """Milliseconds a call in flight keeps its handle at least, renewed by this replica."""
        self._all = f"{prefix}:all"
        self.closed = f"{prefix}:closed"
        """The channel of close notes: the member of each handle closed, as it closes."""
        self._add = client.register_script(ADD)
        self._take = client.register_script(TAKE)
        self._release = client.register_script(RELEASE)
        self._renew = client.register_script(LEASE)
        self._close = client.register_script(CLOSE)
        self._sweep = client.register_script(SWEEP)
        self._records: dict[str, SharedRecord] = {}
        """This replica's records, by member."""
        self._minted: dict[int, list[SharedRecord]] = {}
        """Handles minted by calls that have not answered yet, by the call's ``id``: an entry
        from :meth:`begin` to :meth:`settle`, the only time the call may mint."""
        self._lock = threading.Lock()
        """``add`` may be called from a sync handler's worker thread."""
        self._serving = 0

    def __len__(self) -> int:
        return len(self._records)

    def _where(self, owner: Hashable, handle: str) -> tuple[str, str]:
        """The member of ``owner``'s ``handle`` and the key of ``owner``'s set."""
        whose = digest(repr(owner))
        return digest(whose, handle), f"{self.prefix}:o:{whose}"

    def _keys(self, member: str, owned: str) -> list[str]:
        return [f"{self.prefix}:h:{member}", owned, self._all]

    async def _run(self, command: Callable[..., Awaitable[Any]], **arguments: Any) -> Any:
        """One script, within ``timeout``; any failure is :class:`HandlesUnavailable`."""
        with needs_extra("redis", "the Redis store of state handles"):
            from redis.exceptions import RedisError
        try:
            with anyio.fail_after(self.timeout):
                return await command(**arguments)
        except (RedisError, OSError, TimeoutError) as exc:
            logger.warning("the Redis store of state handles failed: %s", exc)
            raise HandlesUnavailable(
                "State handles are unavailable for a moment: try again"
            ) from exc

    def begin(self, call: object) -> None:
        with self._lock:
            self._minted.setdefault(id(call), [])

    def add(self, owner: Hashable, handle: str, session: SessionScope, call: object = None) -> None:
        if call is None:
            raise RuntimeError(
                "only a tool call can open a state handle when handles are kept in Redis "
                "(it is added there before the call answers)"
            )
        member, owned = self._where(owner, handle)
        now = self._clock()
        record = SharedRecord(owner, session, now, now, member=member, owned=owned, known=False)
        with self._lock:
            minted = self._minted.get(id(call))
            if minted is None:
                raise RuntimeError(
                    "StateHandles.open() was called outside the tool call it was given to "
                    "(after the call answered, or from a task the call left running): when "
                    "handles are kept in Redis a handle is added there as its call answers; "
                    "open it in the call itself (its handler, layers, hooks or services)"
                )
            self._records[record.member] = record
            minted.append(record)

    async def settle(self, call: object, *, keep: bool = True) -> None:
        with self._lock:
            minted = self._minted.pop(id(call), [])
        refused: list[str] = []
        for at, record in enumerate(minted):
            if not record.open:  # closed by the call that minted it
                continue
            if not keep:
                await self._drop(record)
                continue
            limits = self.limits
            try:
                answer = await self._run(
                    self._add,
                    keys=self._keys(record.member, record.owned),
                    args=[
                        self._ttl,
                        limits.max_per_client or 0,
                        limits.max_handles or 0,
                        record.member,
                    ],
                )
            except HandlesUnavailable:
                for rest in minted[at:]:
                    await self._drop(rest)
                raise
            if answer:
                refused.append("this client" if answer == 1 else "the server")
                await self._drop(record)
            else:
                record.known = True
        if refused:
            raise TooManyHandles(
                f"Too many open state handles for {refused[0]}: close one and try again"
            )

    async def _drop(self, record: SharedRecord) -> None:
        """Forget ``record`` here and finalize it once no call of this replica uses it."""
        with self._lock:
            if self._records.get(record.member) is record:
                del self._records[record.member]
            record.open = False
            done = record.users == 0
        if done:
            await finalize(record)

    async def take(self, owner: Hashable, handle: str) -> HandleRecord | None:
        member, owned = self._where(owner, handle)
        known = self._records.get(member)
        if known is not None and not known.known:
            return None  # minted by a call that has not answered yet
        keys = self._keys(member, owned)
        found = await self._run(self._take, keys=keys, args=[member, self._held])
        with self._lock:
            record = self._records.get(member)
            if found:
                if record is None:  # its first call on this replica
                    now = self._clock()
                    session = self._sessions(handle)
                    record = SharedRecord(owner, session, now, now, member=member, owned=owned)
                    self._records[member] = record
                record.users += 1
                record.last_used = self._clock()
                return record
        if record is not None:  # closed or expired elsewhere: over here too
            await self._drop(record)
        return None

    async def release(self, record: HandleRecord) -> None:
        assert isinstance(record, SharedRecord)
        with self._lock:
            record.users -= 1
            record.last_used = self._clock()
        keys = self._keys(record.member, record.owned)
        try:
            with anyio.CancelScope(shield=True):  # a cancelled call still ends its use
                still = await self._run(self._release, keys=keys, args=[record.member, self._ttl])
        except HandlesUnavailable:
            still = True  # logged; the sweep looks again
        if not still or not record.open:
            await self._drop(record)

    async def close(self, owner: Hashable, handle: str) -> None:
        member, owned = self._where(owner, handle)
        record = self._records.get(member)
        if record is None or record.known:
            keys = self._keys(member, owned)
            await self._run(self._close, keys=keys, args=[member, self.closed])
        if record is not None:
            await self._drop(record)

    async def sweep(self) -> None:
        """Forget every expired handle in Redis, and finalize this replica's sessions of
        handles no longer there (closed or expired anywhere)."""
        await self._run(self._sweep, keys=[self._all], args=[])
        with self._lock:
            idle = [r for r in self._records.values() if r.known and r.users == 0]
        if not idle:
            return
        async with self.client.pipeline(transaction=False) as pipe:
            for record in idle:
                pipe.exists(self._keys(record.member, record.owned)[0])
            present = await self._run(pipe.execute)
        for record, there in zip(idle, present, strict=True):
            if not there:
                await self._drop(record)

    async def aclose(self) -> None:
        """Finalize this replica's sessions (shutdown); the handles stay open in Redis,
        for the other replicas."""
        with self._lock:
            records = list(self._records.values())
            self._records.clear()
            self._minted.clear()
        for record in records:
            record.open = False
            await finalize(record)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """As every store's (the sweep, and every session finalized at the end), and
        receive the close notes while open: subscribed before the block starts, if Redis
        answers within ``timeout`` (at most 5 seconds; else the receiving task keeps
        trying)."""
        async with anyio.create_task_group() as tasks:

            def noted(data: bytes | str) -> None:
                member = noted_member(data)
                if member is None:
                    logger.warning("ignored a message on %s that is no close note", self.closed)
                elif (record := self._records.get(member)) is not None:
                    tasks.start_soon(self._drop, record)

            ready = anyio.Event()
            listen = partial(receive, timeout=self.timeout)
            tasks.start_soon(listen, self.client, self.closed, noted, ready)
            with anyio.move_on_after(5):
                await ready.wait()
            try:
                async with super().running():
                    yield
            finally:
                tasks.cancel_scope.cancel()

    def chores(self) -> list[tuple[float, Callable[[], Awaitable[None]]]]:
        """The sweep, and the renewal of the leases of this replica's calls in flight."""
        return [*super().chores(), (self.lease / 3, self.renew)]

    async def renew(self) -> None:
        """Keep alive, for another lease, every handle with a call in flight here."""
        with self._lock:
            busy = [r for r in self._records.values() if r.known and r.users > 0]
        for record in busy:
            keys = self._keys(record.member, record.owned)
            await self._run(self._renew, keys=keys, args=[record.member, self._lease])
