"""Fixtures of the tools tests: every client kind in every protocol era."""

from __future__ import annotations

import pytest

from tests.tools.drivers import DRIVERS, ERAS, Driver


@pytest.fixture(params=DRIVERS, ids=lambda d: d.id)
def driver(request: pytest.FixtureRequest) -> Driver:
    """McpTestClient and the SDK's ``mcp.Client``, each in 2026-07-28 and 2025-11-25."""
    chosen: Driver = request.param
    return chosen


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    """A protocol era, for tests that drive ``McpTestClient`` directly."""
    value: str = request.param
    return value
