"""Shared settings of the reliability suite: bounded hypothesis runs, both protocol eras."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

ERAS = ("2026-07-28", "2025-11-25")

BOUNDED = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""Modest example counts, no deadline (this is a 2-core machine), no example database."""


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture(autouse=True, scope="session")
def _fuzz_report() -> Iterator[None]:
    """At the end of the run, the answers the fuzz tests checked (shown with ``-s``)."""
    yield
    from tests.reliability.fuzz import STATS

    if not STATS:
        return
    print(f"\nfuzz answers checked: {sum(STATS.values())}")
    for key, count in sorted(STATS.items()):
        print(f"  {count:5d}  {key}")
