"""The repository root on ``sys.path``: the tests import ``examples.apps``."""

import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
