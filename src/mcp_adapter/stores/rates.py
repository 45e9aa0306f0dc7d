"""Where ``RateLimit`` counts calls: the :class:`RateStore` protocol, :class:`Rate`, and the
in-memory store (one process). :class:`~mcp_adapter.stores.RedisRateStore` shares one count
between replicas."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Rate:
    """``calls`` per ``period`` seconds, at most ``calls`` of them at once.

    >>> Rate(10, 1.0).interval
    0.1
    """

    calls: int
    period: float = 1.0
    interval: float = field(init=False, repr=False)
    """Seconds one call uses up: ``period / calls``."""

    def __post_init__(self) -> None:
        if isinstance(self.calls, bool) or not isinstance(self.calls, int) or self.calls < 1:
            raise ValueError(f"a rate needs a positive whole number of calls, not {self.calls!r}")
        if not isinstance(self.period, int | float) or not self.period > 0:
            raise ValueError(f"a rate needs a positive period in seconds, not {self.period!r}")
        object.__setattr__(self, "interval", self.period / self.calls)


@runtime_checkable
class RateStore(Protocol):
    """Where ``RateLimit`` counts calls; one store may serve several limits and processes.

    Everything a hit depends on is in its arguments: the key (already namespaced by the
    layer, e.g. ``mcp_adapter.rate:identity:ada``), the rate and the time, so a shared
    store (Redis: one key per caller holding the GCRA's next allowed time, updated by a
    script, expiring when idle) gives every worker the same answer.
    """

    async def hit(self, key: str, rate: Rate, now: float) -> float | None:
        """Count one call of ``key`` at ``now`` (seconds since the epoch; a shared store may
        use its own clock instead) against ``rate``: ``None`` when it is allowed, else the
        seconds to wait until one would be (a refused call is not counted)."""
        ...


class InMemoryRateStore:
    """A ``RateStore`` in this process: the generic cell rate algorithm (a token bucket of
    ``rate.calls`` tokens refilled one per ``rate.interval``), one float per key.

    A key is forgotten once its bucket is full again (idle: the same as never seen), and at
    most ``max_keys`` are kept: past that the least recently used goes first, which gives
    it a full bucket on its next call. With several worker processes each counts alone:
    use a shared store for one limit per deployment.

    >>> import asyncio
    >>> store, rate = InMemoryRateStore(), Rate(2, 1.0)
    >>> [asyncio.run(store.hit("k", rate, now=100.0)) for _ in range(3)]
    [None, None, 0.5]
    """

    __slots__ = ("_due", "max_keys")

    def __init__(self, max_keys: int = 10_000) -> None:
        if max_keys < 1:
            raise ValueError(f"InMemoryRateStore keeps at least one key, not {max_keys!r}")
        self.max_keys = max_keys
        self._due: OrderedDict[str, float] = OrderedDict()
        """Per key, the time its bucket is full again (the GCRA's theoretical arrival time),
        least recently hit first."""

    def __len__(self) -> int:
        return len(self._due)

    async def hit(self, key: str, rate: Rate, now: float) -> float | None:
        return self.hit_now(key, rate, now)

    def hit_now(self, key: str, rate: Rate, now: float) -> float | None:
        """``hit`` without awaiting (it never has to)."""
        due = self._due
        full_at = max(due.get(key, now), now)
        wait = full_at - now - (rate.period - rate.interval)
        if key in due:
            due.move_to_end(key)
        if wait > 0:
            return wait
        due[key] = full_at + rate.interval
        self._forget_idle(now)
        return None

    def _forget_idle(self, now: float) -> None:
        due = self._due
        # the least recently hit come first: drop them while their bucket is full again
        while due:
            oldest, full_at = next(iter(due.items()))
            if full_at > now and len(due) <= self.max_keys:
                break
            del due[oldest]
