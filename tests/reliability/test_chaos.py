"""The chaos run, short: the whole deployment (Redis behind Sentinel, three replicas
behind haproxy, two workers) under a mixed load from many identities while each fault of
the schedule is injected once, a planned Sentinel failover among them; every invariant of
``benchmarks.chaos`` is an assertion here, and every accepted task ends: a planned
failover loses nothing (docs/deployment.md, "A planned failover").

The schedule leaves out ``kill primary`` (the 10-minute run and
``tests/replicas/test_sentinel.py`` have it; the Sentinels' 5 s
``down-after-milliseconds`` and the rejoin add about 15 s). About 50 s on a quiet
2-core machine: 15 s of set-up, 30 s of load and faults, then every task read again.

Skipped with the reason when ``redis-server`` or ``haproxy`` is missing, failed instead
with ``CI=true`` (``tests.needs``).
"""

from __future__ import annotations

from benchmarks.chaos.faults import FAULTS
from benchmarks.chaos.invariants import INVARIANTS
from benchmarks.chaos.run import Settings, chaos

from tests.replicas.cluster import binary

SECONDS = 30.0
SCHEDULE = tuple(name for name in FAULTS if name != "kill primary")


def test_the_system_keeps_every_invariant_while_faults_are_injected() -> None:
    binary("redis-server", "redis-server")
    binary("haproxy", "haproxy")
    result = chaos(Settings(seconds=SECONDS, clients=4, identities=16, faults=SCHEDULE))
    tally = result.tally
    assert tally.examples == {}, result.table
    assert sum(tally.violations[name] for name in INVARIANTS) == 0, result.table
    assert result.table.endswith("violations: 0")
    # every fault of the schedule was injected, and the load was the mix it claims
    assert {r.fault for r in result.recoveries} == set(SCHEDULE), result.table
    assert tally.tasks_accepted > 0
    # every accepted task ended: nothing is lost in a planned failover
    assert tally.lost == {}, result.table
    assert tally.tasks_terminal.total() == tally.tasks_accepted, result.table
    assert tally.notifications > 0, result.table
    for operation in ("echo_sync", "echo_async", "once", "ask 2026", "ask 2025", "put"):
        assert tally.served[operation] > 0, (operation, result.table)
    assert {"job (start)", "job_ask (start)", "resources/read"} <= set(tally.served)
