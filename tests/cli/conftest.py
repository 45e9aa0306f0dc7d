"""CLI tests run ``main()`` from the repository root, where ``MODULE:ATTR`` names resolve."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    return ROOT


@pytest.fixture(autouse=True)
def no_serve_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve`` reads ``MCP_ADAPTER_*`` variables: none from the shell reaches ``main()``."""
    for key in [key for key in os.environ if key.startswith("MCP_ADAPTER_")]:
        monkeypatch.delenv(key)
