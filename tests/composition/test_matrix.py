"""The all-pairs matrix of issue 29, and the constraints' cases that run on a server: each case
is driven as a real client would (``drive.run``) on its group's server."""

from __future__ import annotations

import pytest

from tests.composition.cases import SERVED, Case, params
from tests.composition.drive import run
from tests.composition.hosting import Hosts


@pytest.mark.parametrize("case", params(SERVED))
def test_case_composes(case: Case, hosts: Hosts) -> None:
    connected = hosts.connect(case)
    problems = hosts.run(run, connected, case)
    assert not problems, f"{case.id}:\n" + "\n".join(problems)
