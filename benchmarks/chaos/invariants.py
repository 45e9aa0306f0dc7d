"""What the run counts and checks: the served figures, the violations by invariant, the
side-effect ledger, and each process's RSS and open descriptors (``/proc``).

Every violation is kept with a short description (the first few of each invariant are
printed); the run exits non-zero when there is any.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import redis

from benchmarks.chaos.app import TWICE
from benchmarks.chaos.wire import TRACEBACK, Answer

INVARIANTS = {
    "unanswered": "a request not answered within its bound",
    "traceback": "a traceback reached a client",
    "task lost": "an accepted task not terminal, or its result unreadable, before its TTL",
    "twice": "a body's side effect happened twice",
    "isolation": "an identity saw another's task, handle, notification, answer or data",
    "round reused": "an answered input round was accepted again",
    "wrong answer": "a success that is not what was asked",
    "plateau": "a process's RSS or open descriptors grew past the slack after warm-up",
}
FAILOVER_LAG = 2.0
"""Seconds before a failover that can lose writes (the primary killed) and after it during which a
write the run saw acknowledged may be lost: Redis replicates asynchronously, and what
the old primary had not sent on is gone (docs/deployment.md, "What a failover loses")."""
MARK = re.compile(r"<<(id\d+)>>")

RSS_SLACK = 1.5
"""A process's RSS at the end may be this many times its RSS after warm-up..."""
RSS_SLACK_BYTES = 48 * 2**20
"""... plus this much (allocator arenas, caches that fill once)."""
FD_SLACK = 64
"""Open descriptors at the end may exceed those after warm-up by this many (connections
in flight when sampled)."""


@dataclass
class Tally:
    """The run's figures and violations; one per run, updated by every client."""

    served: Counter[str] = field(default_factory=Counter)
    """Per kind of operation: answered with success."""
    refused: Counter[str] = field(default_factory=Counter)
    """Per kind: answered with a documented error (a fault's, or a refusal checked for)."""
    violations: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    latencies: list[tuple[float, float]] = field(default_factory=list)
    """``(when, seconds)`` of each successful inline call, for the p99 after each fault."""
    notifications: int = 0
    tasks_accepted: int = 0
    tasks_terminal: Counter[str] = field(default_factory=Counter)
    phase: str = "warm-up"
    """The fault under way (or the last one), named in each violation's example."""
    failovers: list[tuple[str, float, float]] = field(default_factory=list)
    """``(fault, start, end)`` of each failover fault (``time.monotonic``)."""
    lost: Counter[str] = field(default_factory=Counter)
    """Writes lost in a failover, as documented: counted and shown, not violations."""
    lost_examples: list[str] = field(default_factory=list)

    def loss(self, invariant: str, detail: str, when: float) -> None:
        """A write seen acknowledged at ``when`` is gone: a documented loss when ``when``
        is within ``FAILOVER_LAG`` of a failover, else a violation of ``invariant``."""
        fault = self.failover_at(when)
        if fault is None:
            self.violation(invariant, detail)
            return
        self.lost[f"{invariant} ({fault})"] += 1
        if len(self.lost_examples) < 5:
            self.lost_examples.append(f"{detail[:300]} [{fault}]")

    def failover_at(self, when: float) -> str | None:
        """The failover fault ``when`` is within ``FAILOVER_LAG`` of, if any."""
        for fault, start, end in self.failovers:
            if start - FAILOVER_LAG <= when <= end + FAILOVER_LAG:
                return fault
        return None

    def violation(self, invariant: str, detail: str) -> None:
        assert invariant in INVARIANTS, invariant
        self.violations[invariant] += 1
        kept = self.examples.setdefault(invariant, [])
        if len(kept) < 5:
            kept.append(f"{detail[:300]} [{self.phase}]")

    def answered(self, kind: str, answer: Answer, subject: str) -> bool:
        """Count one answer, check what every answer must be; whether it is a success."""
        if answer.kind == "hung":
            self.violation("unanswered", f"{kind} after {answer.seconds:.1f} s")
            return False
        if TRACEBACK in answer.text:
            self.violation("traceback", f"{kind}: {answer.text[:200]}")
        self.scan(kind, answer.text, subject)
        if answer.ok:
            self.served[kind] += 1
            self.latencies.append((time.monotonic(), answer.seconds))
            return True
        self.refused[kind] += 1
        return False

    def scan(self, kind: str, text: str, subject: str) -> None:
        """Any identity's mark in ``text`` other than ``subject``'s is a leak."""
        for seen in MARK.findall(text):
            if seen != subject:
                self.violation("isolation", f"{kind}: {subject} saw {seen}'s data")

    def total(self) -> int:
        return sum(self.violations.values())


def check_ledger(url: str, tally: Tally) -> int:
    """Bodies that ran twice, from the ledger; the number of bodies that ran."""
    with redis.Redis.from_url(url, socket_timeout=10) as store:
        for operation in store.lrange(TWICE, 0, -1):
            tally.violation("twice", f"operation {operation!r} ran twice")
        return sum(1 for _ in store.scan_iter("op:*", count=1000))


@dataclass
class Usage:
    rss: int
    fds: int


def usage(pid: int) -> Usage | None:
    """RSS (bytes) and open descriptors of ``pid`` (None when it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return Usage(int(line.split()[1]) * 1024, fds)
    return None


@dataclass
class Incarnation:
    """One process's life: its usage after warm-up and at the last sample."""

    name: str
    pid: int
    started: float
    first: Usage | None = None
    last: Usage | None = None
    peak_rss: int = 0

    def sample(self, now: float, warmup: float) -> None:
        found = usage(self.pid)
        if found is None:
            return
        self.peak_rss = max(self.peak_rss, found.rss)
        if self.first is None:
            if now - self.started >= warmup:
                self.first = found
            return
        self.last = found

    def grew(self) -> str | None:
        if self.first is None or self.last is None:
            return None
        if self.last.rss > self.first.rss * RSS_SLACK + RSS_SLACK_BYTES:
            return f"{self.name} RSS {self.first.rss >> 20} -> {self.last.rss >> 20} MiB"
        if self.last.fds > self.first.fds + FD_SLACK:
            return f"{self.name} fds {self.first.fds} -> {self.last.fds}"
        return None


@dataclass
class Watcher:
    """Every incarnation of every process, sampled on a schedule."""

    warmup: float
    lives: list[Incarnation] = field(default_factory=list)

    def sample(self, processes: dict[str, int | None]) -> None:
        now = time.monotonic()
        current = {(life.name, life.pid): life for life in self.lives}
        for name, pid in processes.items():
            if pid is None:
                continue
            life = current.get((name, pid))
            if life is None:
                life = Incarnation(name, pid, now)
                self.lives.append(life)
            life.sample(now, self.warmup)

    def check(self, tally: Tally) -> None:
        for life in self.lives:
            grown = life.grew()
            if grown is not None:
                tally.violation("plateau", grown)
