"""Fixtures shared by every test package, and how many processes run the suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIRST = (
    "tests/test_counts_budget.py",
    "tests/test_benchmarks.py",
    "tests/test_typing.py",
    "tests/replicas/test_task_workers.py",
    "tests/replicas/test_replicas.py",
    "tests/replicas/test_tasks.py",
    "tests/lifespan/test_serve.py",
    "tests/reliability/test_concurrency.py",
    "tests/cli/test_reload.py",
    "tests/test_site.py",
    "tests/replicas/test_nginx.py",
    "tests/replicas/test_sessions.py",
    "tests/serving/test_conformance.py",
    "tests/composition/test_matrix.py",
    "tests/cli/test_file_targets.py",
    "tests/cli/test_call_inspect.py",
)
"""The files that take longest (``--durations``), handed out first: each file runs in one
process (``--dist loadfile``), so a long one started last would hold the whole run."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default in pyproject.toml): two test processes per core. Most tests
    wait on a subprocess, a socket or a server they started, so a core serves two of them;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` or ``-n N`` chooses another number, ``-n 0`` none."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    return int(chosen) if chosen else 2 * (os.cpu_count() or 1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    rank = {root / name: index for index, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(Path(item.path), len(FIRST)))


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``@pytest.mark.anyio``) run on asyncio, the loop the SDK targets."""
    return "asyncio"
