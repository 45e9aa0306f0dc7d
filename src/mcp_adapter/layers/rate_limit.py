"""``RateLimit``: calls per caller over time, counted in a pluggable ``RateStore``."""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from mcp_adapter.declare.middleware import Call, Next, Stage, checked_stage
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.errors import ToolError

Per = Literal["identity", "client"] | Callable[[McpRequest], str]
"""Whose calls are counted together: see ``RateLimit``."""


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


def client_key(request: McpRequest) -> str:
    """``client:<address>`` of the HTTP client; ``client:<transport>`` off HTTP (stdio has
    one client). Behind a proxy the address is the proxy's unless the server trusts its
    forwarded headers (``serve --forwarded-allow-ips``; none are trusted by default).

    >>> client_key(McpRequest(transport="stdio"))
    'client:stdio'
    """
    http = request.http_request
    client = getattr(http, "client", None) if http is not None else None
    if client is not None:
        return f"client:{client.host}"
    if http is not None:
        return "client:unknown"
    return f"client:{request.transport}"


def identity_key(request: McpRequest) -> str:
    """``identity:<subject>`` of a signed-in caller, else the ``client_key``."""
    identity = request.identity
    return f"identity:{identity.subject}" if identity is not None else client_key(request)


class RateLimit:
    """Middleware that lets each caller make ``calls`` calls per ``period`` seconds.

    ``per`` decides who a caller is: ``"identity"`` (the signed-in subject, else the
    client), ``"client"`` (the HTTP client's address; off HTTP the transport: one key) or a
    function of the ``McpRequest`` returning a key. Keys are stored as
    ``<namespace>:<key>``: layers that share a store with different rates need their own
    ``namespace``. ``methods`` limits which calls count (``{"tools/call"}``); by default
    every call through the layer does (on ``Server.middleware``: listings too).

    ``stage`` (``"request"``, the default) counts every request of the server, unknown
    names, refused and invalid calls included, before any hook runs or any service is
    opened; ``"call"`` counts only calls that reached the handler's stage (the one way
    to put it on a single component).

    Over the limit it raises ``ToolError("Rate limit exceeded; retry after N s")``: a
    tool answers a tool error, other kinds ``-32603``. Arguments play no part in the key,
    so changing them does not escape the limit.
    """

    __slots__ = ("_key", "clock", "methods", "namespace", "rate", "stage", "store")

    def __init__(
        self,
        calls: int,
        period: float = 1.0,
        *,
        per: Per = "identity",
        store: RateStore | None = None,
        namespace: str = "mcp_adapter.rate",
        methods: Collection[str] | None = None,
        clock: Callable[[], float] = time.time,
        stage: Stage = "request",
    ) -> None:
        self.rate = Rate(calls, period)
        self.stage = checked_stage(stage, "RateLimit")
        self.store: RateStore = InMemoryRateStore() if store is None else store
        self.namespace = namespace
        self.methods = None if methods is None else frozenset(methods)
        self.clock = clock
        if per == "identity":
            self._key: Callable[[McpRequest], str] = identity_key
        elif per == "client":
            self._key = client_key
        elif callable(per):
            self._key = per
        else:
            raise ValueError(f"RateLimit per= is 'identity', 'client' or a function, not {per!r}")

    def key(self, request: McpRequest) -> str:
        """The store key the calls of ``request``'s caller are counted under."""
        return f"{self.namespace}:{self._key(request)}"

    async def __call__(self, call: Call, call_next: Next, request: McpRequest) -> Any:
        if self.methods is None or call.method in self.methods:
            wait = await self.store.hit(self.key(request), self.rate, self.clock())
            if wait is not None:
                raise ToolError(f"Rate limit exceeded; retry after {_seconds(wait)} s")
        return await call_next(call)


def _seconds(wait: float) -> str:
    """``wait`` rounded up to a tenth of a second: ``0.31`` is ``0.4``, ``2.0`` is ``2``."""
    return f"{max(math.ceil(round(wait * 10, 6)), 1) / 10:g}"
