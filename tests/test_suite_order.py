"""The files ``tests/conftest.py`` hands out first exist: a renamed one would silently lose
its place at the front of a parallel run."""

from __future__ import annotations

from tests.conftest import FIRST
from tests.packaging.test_wheel import REPO


def test_every_file_handed_out_first_exists() -> None:
    assert [name for name in FIRST if not (REPO / name).is_file()] == []
