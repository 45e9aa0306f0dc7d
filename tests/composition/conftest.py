"""The matrix's shared parts: a real ``redis-server`` (started when a case first needs it) and
the servers of the groups, one open at a time (``hosting.Hosts``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal

from tests.composition.cases import SERVED, Case
from tests.composition.hosting import Hosts
from tests.replicas.cluster import Redis

collect_ignore = ["served.py"]
"""Imported by ``mcp-adapter serve`` in a subprocess only: it reads its cases from there."""


def _prestarts(case: Case) -> bool:
    """A stdio server starts ahead of its turn (one with Redis only if there is a
    ``redis-server``: without one its cases are skipped, or failed in CI, at their turn)."""
    has_redis = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin")
    return case.transport == "stdio" and (case.store != "redis" or has_redis is not None)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    redis = Redis(Path(tmp_path_factory.mktemp("composition-redis")))
    redis.start()
    try:
        yield redis.url
    finally:
        redis.stop()


@pytest.fixture(scope="session")
def hosts(request: pytest.FixtureRequest) -> Iterator[Hosts]:
    selected = {
        item.callspec.params["case"]
        for item in request.session.items
        if hasattr(item, "callspec") and isinstance(item.callspec.params.get("case"), Case)
    }
    with start_blocking_portal("asyncio") as portal:
        hosted = Hosts(
            portal,
            SERVED,
            lambda: request.getfixturevalue("redis_url"),
            prestart=[case for case in SERVED if case in selected and _prestarts(case)],
        )
        try:
            yield hosted
        finally:
            hosted.close()
