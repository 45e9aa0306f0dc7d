"""A tool the suite needs from the machine: skipped with the reason outside CI, a failure in CI.

A developer without ``npm`` (or ``uv``) still runs the rest of the suite and is told
what is missing; CI (``CI=true``) must have everything, so there a missing tool fails
the test instead of hiding it.
"""

from __future__ import annotations

import os
import shutil

import pytest

_TRUE = frozenset({"1", "true", "yes", "on"})


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in _TRUE


def missing(reason: str) -> None:
    """Skip with ``reason`` outside CI; fail with it in CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: the CI machine must have it)", pytrace=False)
    pytest.skip(reason)


def command(name: str, install: str) -> str:
    """The path of command ``name`` on ``PATH``; else skipped or failed (see :func:`missing`)."""
    found = shutil.which(name)
    if found is None:
        missing(f"{name} not found: {install}")
        raise AssertionError("unreachable")
    return found
