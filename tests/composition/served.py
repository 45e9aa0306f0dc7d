"""The server of one group of cases, for ``mcp-adapter serve`` in a subprocess: the cases come
in ``COMPOSITION_CASES`` (JSON, ``servers.cases_json``), the Redis in ``COMPOSITION_REDIS``."""

from __future__ import annotations

import os

from container import Container
from tests.composition.servers import cases_of, container_for, platform_for, server_name

CASES = cases_of(os.environ["COMPOSITION_CASES"])
REDIS = os.environ.get("COMPOSITION_REDIS") or None
NAME = server_name(CASES[0].group)
platform = platform_for(CASES, NAME, REDIS, CASES[0].layers)
_container = container_for(NAME, REDIS)


def container() -> Container:
    return _container
