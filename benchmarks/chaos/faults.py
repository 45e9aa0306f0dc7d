"""The faults, injected one after another on a schedule while the load runs, and what
each costs: seconds until every replica's ``/readyz`` answers 200 again, and until the
p99 latency of inline calls is back within twice its value before the fault.

- ``kill replica``: SIGKILL of a replica (each in turn), started again on its port;
- ``kill worker``: SIGKILL of a worker, started again (its tasks end ``failed`` once
  another takes them over, ``Tasks.redelivery_timeout`` later);
- ``stall redis``: SIGSTOP of ``redis-server`` (the primary, with Sentinel) for ``STALL``
  seconds, then SIGCONT (shorter than the Sentinels' ``down-after-milliseconds``: no
  failover);
- ``restart redis``: SIGKILL of ``redis-server`` (the primary), started again on its port
  (append-only with ``fsync`` at every write: what it acknowledged survives; back before
  the Sentinels would fail over);
- ``planned failover``: the switchover docs/deployment.md describes (writes paused,
  ``SENTINEL FAILOVER``, the old primary made the new one's replica, writes resumed),
  until the old primary follows the new one (Sentinel only); it must lose nothing;
- ``kill primary``: SIGKILL of the primary, until the Sentinels promoted the replica; the
  old primary is then started again on its port as the new primary's replica (Sentinel
  only); what it had not sent on is lost, as documented (``LOSSY_FAULTS``);
- ``slow readers``: listen streams opened and not read for ``SLOW`` seconds;
- ``disconnects``: calls whose client goes away mid-call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx2

from benchmarks.chaos.deploy import Deployment, Member
from benchmarks.chaos.invariants import Tally
from benchmarks.chaos.load import BOUND, Load, nonce, token
from benchmarks.chaos.wire import ENVELOPE, call, headers

FAULTS = (
    "kill replica",
    "stall redis",
    "kill worker",
    "planned failover",
    "restart redis",
    "disconnects",
    "kill primary",
    "slow readers",
)
"""The schedule, in order (then again from the start); each name is the method's."""
SENTINEL_FAULTS = frozenset({"planned failover", "kill primary"})
"""The faults left out of the schedule without Sentinel (``--plain-redis``)."""
LOSSY_FAULTS = frozenset({"kill primary"})
"""The faults after which a write seen acknowledged may be gone, as documented (Redis
replicates asynchronously): counted apart, not as violations."""
STALL = 3.0
SLOW = 5.0
SLOW_STREAMS = 8
DISCONNECTS = 24
P99_WINDOW = 3.0
P99_BEFORE = 10.0
P99_SAMPLES = 10


@dataclass
class Recovery:
    fault: str
    at: float
    ready: float | None = None
    p99: float | None = None
    before_p99: float | None = None
    waited: float = 0.0
    """Seconds the recovery was watched for (until the next fault)."""


def p99(values: list[float]) -> float | None:
    if len(values) < P99_SAMPLES:
        return None
    return statistics.quantiles(values, n=100)[98]


class Faults:
    def __init__(
        self, deployment: Deployment, load: Load, tally: Tally, names: tuple[str, ...] = FAULTS
    ) -> None:
        self.deployment = deployment
        self.load = load
        self.tally = tally
        self.recoveries: list[Recovery] = []
        self.turn = 0
        self.began = time.monotonic()
        sentinel = deployment.topology is not None
        self.schedule: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            (name, getattr(self, name.replace(" ", "_")))
            for name in names
            if sentinel or name not in SENTINEL_FAULTS
        ]

    async def kill_replica(self) -> None:
        await self._kill(self.deployment.replicas, self.deployment.start_replica)

    async def kill_worker(self) -> None:
        await self._kill(self.deployment.workers, self.deployment.start_worker)

    async def _kill(self, members: list[Member], start: Callable[[Member], None]) -> None:
        """SIGKILL of one of ``members`` (each in turn), then started again."""
        member = members[self.turn // len(self.schedule) % len(members)]
        member.kill()
        member.restarts += 1
        await asyncio.to_thread(start, member)

    async def stall_redis(self) -> None:
        pid = await asyncio.to_thread(self.deployment.redis_pid)
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(STALL)
        finally:
            os.kill(pid, signal.SIGCONT)

    async def restart_redis(self) -> None:
        await asyncio.to_thread(self.deployment.restart_redis)

    async def planned_failover(self) -> None:
        assert self.deployment.topology is not None
        await asyncio.to_thread(self.deployment.topology.switchover)

    async def kill_primary(self) -> None:
        assert self.deployment.topology is not None
        await asyncio.to_thread(self.deployment.topology.kill_primary, True)

    async def slow_readers(self) -> None:
        """Listen streams opened, their first bytes read, then left unread for a while."""
        async with httpx2.AsyncClient(timeout=BOUND) as http:

            async def one(identity: int) -> None:
                body = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "subscriptions/listen",
                    "params": {
                        "notifications": {"resourceSubscriptions": [f"secret://id{identity}"]},
                        "_meta": ENVELOPE,
                    },
                }
                wanted = headers("subscriptions/listen", "", token(identity))
                del wanted["Mcp-Name"]
                request = http.build_request("POST", self.deployment.url, json=body, headers=wanted)
                try:
                    response = await http.send(request, stream=True)
                except httpx2.HTTPError:
                    return
                try:
                    await asyncio.sleep(SLOW)  # nothing read while the server writes
                finally:
                    await response.aclose()

            await asyncio.gather(*(one(n) for n in range(SLOW_STREAMS)))

    async def disconnects(self) -> None:
        """Calls abandoned by their client after a few milliseconds."""

        async def one(identity: int) -> None:
            tool = random.choice(("echo_async", "echo_sync", "ask", "once"))
            arguments = {"nonce": nonce(), "operation": nonce()} if tool == "once" else {}
            arguments.setdefault("nonce", nonce())
            async with httpx2.AsyncClient(timeout=BOUND) as http:
                attempt = call(http, self.deployment.url, token(identity), tool, arguments, BOUND)
                with contextlib.suppress(TimeoutError):  # gone mid-call, as intended
                    await asyncio.wait_for(attempt, random.uniform(0.001, 0.05))

        await asyncio.gather(*(one(n) for n in range(DISCONNECTS)))

    def latencies(self, since: float, until: float) -> list[float]:
        return [s for when, s in self.tally.latencies if since <= when <= until]

    async def inject(self, watch: float) -> Recovery:
        """The next fault of the schedule, then its recovery watched for ``watch`` seconds
        at most (from the end of the fault: a restart's wait is the fault's)."""
        name, fault = self.schedule[self.turn % len(self.schedule)]
        start = time.monotonic()
        recovery = Recovery(name, start)
        recovery.before_p99 = p99(self.latencies(start - P99_BEFORE, start))
        self.tally.phase = f"{name} at {start - self.began:.0f} s"
        await fault()
        if name in LOSSY_FAULTS:
            self.tally.failovers.append((name, start, time.monotonic()))
        self.tally.phase = f"after {self.tally.phase}"
        self.turn += 1
        self.recoveries.append(recovery)
        until = time.monotonic() + watch
        recovery.waited = until - start
        while time.monotonic() < until:
            now = time.monotonic()
            if recovery.ready is None and await asyncio.to_thread(self.deployment.all_ready):
                recovery.ready = time.monotonic() - start
            recent = p99(self.latencies(now - P99_WINDOW, now))
            if (
                recovery.p99 is None
                and recovery.before_p99 is not None
                and recent is not None
                and recent <= 2 * recovery.before_p99
                and now - start >= P99_WINDOW
            ):
                recovery.p99 = now - start
            if recovery.ready is not None and (recovery.p99 is not None or not recovery.before_p99):
                break
            await asyncio.sleep(0.2)
        return recovery
