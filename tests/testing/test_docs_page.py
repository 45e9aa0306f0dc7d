"""docs/testing.md keeps up with the code: its tables name every public member of
``McpTestClient`` and ``McpResult``, and its ``mcp_override`` example passes as a
user's pytest suite (the page's other blocks run in tests/test_docs.py).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from mcp_adapter.testing import McpResult, McpTestClient
from tests.user_suites import fenced_python, run_pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def public_members(cls: type) -> list[str]:
    names = [name for name in dir(cls) if not name.startswith("_")]
    if isinstance(getattr(cls, "__slots__", None), tuple):
        names += [name for name in cls.__slots__ if not name.startswith("_")]
    names += [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
    return sorted(set(names))


def client_attributes() -> list[str]:
    """What ``McpTestClient.__init__`` sets on ``self``."""
    source = inspect.getsource(McpTestClient.__init__)
    return sorted(set(re.findall(r"self\.([a-z]\w*) =", source)))


@pytest.mark.parametrize("cls", [McpTestClient, McpResult], ids=lambda c: c.__name__)
def test_every_public_member_is_in_a_table(cls: type) -> None:
    rows = [line for line in page().splitlines() if line.startswith("| ")]
    documented = " ".join(rows)
    missing = [
        name
        for name in public_members(cls)
        if not re.search(rf"`(await client\.)?{name}\b", documented)
    ]
    assert missing == [], f"{cls.__name__} members missing from the tables of docs/testing.md"


def test_every_client_attribute_is_named() -> None:
    text = page()
    assert client_attributes()  # the scan found something
    missing = [name for name in client_attributes() if f"`{name}`" not in text]
    assert missing == []


def test_the_mcp_override_example_passes(tmp_path: Path) -> None:
    blocks = fenced_python(page())
    (tmp_path / "shop.py").write_text(blocks[0] + blocks[1])
    example = next(b for b in blocks if b.startswith("# tests/test_shop_ledger.py\n"))
    (tmp_path / "test_shop_ledger.py").write_text(example)
    run = run_pytest(tmp_path, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
