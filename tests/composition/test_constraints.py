"""The combinations ``CONSTRAINTS`` leaves out of the matrix, each asserted as its row says.

The rows whose cases run on a server (``inline``, ``not-offered``, ``no-back-channel``) are
driven with the matrix (``test_matrix``); those that do not compile are here.
"""

from __future__ import annotations

import pytest

from mcp_adapter import CompileError, Prompt, Resource, Tool
from tests.composition.cases import CONSTRAINED, CONSTRAINTS, Case, params
from tests.composition.servers import container_for, platform_for, server_name

UNCOMPILED = [case for case in CONSTRAINED if case.constraint.outcome == "compile-error"]  # type: ignore[union-attr]


@pytest.mark.parametrize("case", params(UNCOMPILED))
def test_the_server_does_not_compile(case: Case) -> None:
    row = case.constraint
    assert row is not None
    name = server_name((case.name, *case.group))
    container = container_for(name, None)
    with pytest.raises(CompileError) as refused:
        platform_for([case], name, None, case.layers).compile(container)
    rendered = [problem.render() for problem in refused.value.problems]
    assert any(row.expect in problem for problem in rendered), rendered
    assert all(case.name in problem for problem in rendered), rendered


def test_resources_and_prompts_declare_no_task_support() -> None:
    """The first row: a task is a tools/call feature; only a tool has the attribute."""
    assert Tool.task_support == "forbidden"
    assert not hasattr(Resource, "task_support")
    assert not hasattr(Prompt, "task_support")


def test_every_excluded_row_has_its_cases() -> None:
    for row in CONSTRAINTS:
        mine = [case for case in CONSTRAINED if case.constraint is row]
        assert bool(mine) == row.excluded, row.reason
        combinations = 1
        for values in row.when.values():
            combinations *= len(values)
        assert len(mine) == (combinations if row.excluded else 0), row.reason
