"""The folder where a module's task bodies leave their marks."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the task bodies of one module's deployment leave their marks."""
    return tmp_path_factory.mktemp("marks")
