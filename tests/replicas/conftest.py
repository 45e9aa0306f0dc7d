"""The repository root on ``sys.path``: these tests reuse helpers that import ``examples``;
and the folder where a module's task bodies leave their marks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the task bodies of one module's deployment leave their marks."""
    return tmp_path_factory.mktemp("marks")
