"""Where answered rounds of input requests are recorded, so each is answered once: the
:class:`RoundLedger` protocol and the in-memory ledger (one process).
:class:`~mcp_adapter.stores.RedisRounds` shares one ledger between replicas.

A 2026-07-28 call that asks for input hands the client a sealed ``requestState``; the
client's retry brings it back with the answers. The ledger records, by a digest of the
round's id, that the round was used, for as long as its state could still be opened:
a second retry with the same state finds the record and is refused
(``mcp_adapter.input.single_use``).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from mcp_adapter.errors import McpAdapterError

DEFAULT_MAX_ROUNDS = 100_000
"""Answered rounds an in-memory ledger keeps at once (about 200 bytes each)."""


class LedgerFull(McpAdapterError):
    """The in-memory ledger holds ``max_rounds`` rounds that have not expired yet: the
    round cannot be recorded, so its retry is refused (it is not let through unrecorded)."""


class LedgerUnavailable(McpAdapterError):
    """The shared ledger (Redis) did not answer: the round cannot be recorded, so its retry
    is refused, and the same state may be retried once the ledger answers again."""


@runtime_checkable
class RoundLedger(Protocol):
    """Records each answered round once; one ledger may serve several servers."""

    async def consume(self, key: str, ttl: float) -> bool:
        """Record the round ``key`` (a digest, never a client's string) for ``ttl``
        seconds: ``True`` the first time, ``False`` while it is recorded already.
        Raises :class:`LedgerFull` or :class:`LedgerUnavailable` when it cannot tell."""
        ...


class MemoryRounds:
    """A :class:`RoundLedger` in this process: each key until its time runs out, at most
    ``max_rounds`` at once (past that a new round is refused, :class:`LedgerFull`, until
    one expires). Several worker processes each keep their own: replicas need a shared
    ledger (``--redis``) to refuse a replay sent to another one.

    >>> import asyncio
    >>> ledger = MemoryRounds()
    >>> [asyncio.run(ledger.consume("r1", 600.0)) for _ in range(2)]
    [True, False]
    """

    __slots__ = ("_clock", "_expiring", "_until", "max_rounds")

    def __init__(
        self,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
            raise ValueError(f"MemoryRounds keeps at least one round, not {max_rounds!r}")
        self.max_rounds = max_rounds
        self._clock = clock
        self._until: dict[str, float] = {}
        """Per recorded key, the (monotonic) time it is forgotten."""
        self._expiring: list[tuple[float, str]] = []
        """The same, as a heap: the first to expire first."""

    def __len__(self) -> int:
        self._expire(self._clock())
        return len(self._until)

    async def consume(self, key: str, ttl: float) -> bool:
        return self.consume_now(key, ttl)

    def consume_now(self, key: str, ttl: float) -> bool:
        """:meth:`consume` without awaiting (check and record in one step)."""
        now = self._clock()
        self._expire(now)
        if key in self._until:
            return False
        if len(self._until) >= self.max_rounds:
            raise LedgerFull(
                f"{self.max_rounds} answered rounds are recorded and none has expired yet"
            )
        until = now + max(ttl, 0.0)
        self._until[key] = until
        heapq.heappush(self._expiring, (until, key))
        return True

    def _expire(self, now: float) -> None:
        expiring = self._expiring
        while expiring and expiring[0][0] <= now:
            _, key = heapq.heappop(expiring)
            del self._until[key]
