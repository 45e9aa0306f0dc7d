"""The folder where a module's task bodies leave their marks, and a Redis Sentinel
deployment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import needs

if TYPE_CHECKING:
    from benchmarks.harness.redis_topology import SentinelTopology


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the task bodies of one module's deployment leave their marks."""
    return tmp_path_factory.mktemp("marks")


@pytest.fixture
def topology() -> Iterator[SentinelTopology]:
    """A primary, a replica and three Sentinels (``benchmarks/harness/redis_topology``),
    stopped after the test; skipped (failed with ``CI=true``) without ``redis-server``."""
    from benchmarks.harness.redis_topology import MissingRedis, sentinel_topology

    try:
        with sentinel_topology() as running:
            yield running
    except MissingRedis as missing:
        needs.missing(str(missing))
