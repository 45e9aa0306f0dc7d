"""Shared settings of the reliability suite: bounded hypothesis runs, both protocol eras."""

from __future__ import annotations

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
