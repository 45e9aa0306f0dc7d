"""``assert_schema_separation`` on each case's server (its component with its layers and store),
and once on the scaffolding every group's server adds (the probe and the handle opener)."""

from __future__ import annotations

import pytest

from mcp_adapter.testing import assert_schema_separation
from tests.composition.cases import MATRIX, Case, params
from tests.composition.servers import container_for, platform_for, server_name

EXAMPLES = 3
"""Payloads per tool and era: the matrix has many servers; the parity suite tries more."""


@pytest.mark.parametrize("case", params(MATRIX, "separation"))
def test_schema_separation(case: Case, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("redis_url") if case.store == "redis" else None
    name = server_name((case.name, *case.group))
    container = container_for(name, url)
    platform = platform_for([case], name, url, case.layers, scaffolding=False)
    report = assert_schema_separation(platform.compile(container), container, max_examples=EXAMPLES)
    assert report.tools == (1 if case.is_tool else 0)


def test_schema_separation_of_the_scaffolding() -> None:
    container = container_for("scaffolding", None)
    report = assert_schema_separation(
        platform_for([], "scaffolding", None, "none").compile(container), container
    )
    assert report.tools == 2  # probe, open_handle
