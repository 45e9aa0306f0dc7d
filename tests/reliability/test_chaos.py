"""The chaos run, short: the whole deployment (Redis, three replicas behind haproxy, two
workers) under a mixed load from many identities while each fault of the schedule is
injected once; every invariant of ``benchmarks.chaos`` is an assertion here.

Skipped with the reason when ``redis-server`` or ``haproxy`` is missing, failed instead
with ``CI=true`` (``tests.needs``). About 60 s: 45 s of load, the rest set-up and the
checks at the end.
"""

from __future__ import annotations

from benchmarks.chaos.faults import FAULTS
from benchmarks.chaos.invariants import INVARIANTS
from benchmarks.chaos.run import Settings, chaos

from tests.replicas.cluster import binary

SECONDS = 45.0


def test_the_system_keeps_every_invariant_while_faults_are_injected() -> None:
    binary("redis-server", "redis-server")
    binary("haproxy", "haproxy")
    result = chaos(Settings(seconds=SECONDS, clients=4, identities=16))
    tally = result.tally
    assert tally.examples == {}, result.table
    assert sum(tally.violations[name] for name in INVARIANTS) == 0, result.table
    assert result.table.endswith("violations: 0")
    # every fault of the schedule was injected, and the load was the mix it claims
    assert {r.fault for r in result.recoveries} == set(FAULTS), result.table
    assert tally.tasks_accepted > 0
    assert tally.tasks_terminal.total() == tally.tasks_accepted
    assert tally.notifications > 0, result.table
    for operation in ("echo_sync", "echo_async", "once", "ask 2026", "ask 2025", "put"):
        assert tally.served[operation] > 0, (operation, result.table)
    assert {"job (start)", "job_ask (start)", "resources/read"} <= set(tally.served)
