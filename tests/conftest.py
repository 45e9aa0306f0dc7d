"""Fixtures shared by every test package, and how many processes run the suite."""

from __future__ import annotations

import os

import pytest


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default in pyproject.toml): two test processes per core. Most tests
    wait on a subprocess, a socket or a server they started, so a core serves two of them;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` or ``-n N`` chooses another number, ``-n 0`` none."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    return int(chosen) if chosen else 2 * (os.cpu_count() or 1)


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``@pytest.mark.anyio``) run on asyncio, the loop the SDK targets."""
    return "asyncio"
