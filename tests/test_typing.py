"""What users' type checkers say: mypy (strict) and pyright accept the examples, the code of
every docs page, and ``tests/typing/`` (whose ``assert_type`` lines pin what resolving,
declaring, extending and testing give back, and whose ``type: ignore`` lines must be needed:
an unused one is an error under both)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.test_docs import DOC_FILES, Block, python_blocks

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TIMEOUT = 600  # seconds: a bound on a stuck checker, not a speed threshold
TYPED_PAGES = [path for path in DOC_FILES if python_blocks(path.read_text(encoding="utf-8"))]
"""Docs pages with runnable code: each is type-checked as a module, blocks in order."""
EXAMPLES = [
    "examples/demo",
    "examples/conformance",
    "examples/helpdesk",
    "examples/apps",
    "examples/tasks",
    "examples/container_demo.py",
]
SCRIPTS = ["examples/extensions/sandboxes.py", "examples/extensions/sandbox_audit.py"]
"""Run as scripts from their folder (``sandbox_audit`` imports ``sandboxes``): checked apart."""


def run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}  # no PyPI version check
    return subprocess.run(
        list(command),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture(scope="module")
def snippets(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("docs_snippets")
    paths = []
    for page in TYPED_PAGES:
        blocks = python_blocks(page.read_text(encoding="utf-8"))
        path = folder / f"doc_{page.stem.replace('-', '_')}.py"
        path.write_text(on_page_lines(blocks), encoding="utf-8")
        paths.append(str(path))
    return paths


def on_page_lines(blocks: Sequence[Block]) -> str:
    """The blocks as one module whose line numbers are the page's: an error names the line
    of the ``.md`` file to fix."""
    parts: list[str] = []
    line = 1
    for block in blocks:
        parts.append("\n" * (block.line - line) + block.code)
        line = block.line + block.code.count("\n")
    return "".join(parts)


def test_every_page_with_code_is_checked() -> None:
    assert {path.name for path in TYPED_PAGES} >= {"container.md", "tools.md", "testing.md"}
    text = "x\n```python\na = 1\n```\ny\n\n```python\nb = 2\nc = 3\n```\n"
    module = on_page_lines(python_blocks(text)).splitlines()
    assert (module[2], module[7], module[8]) == ("a = 1", "b = 2", "c = 3")


def test_mypy_strict(snippets: list[str]) -> None:
    mypy = [str(BIN / "mypy"), "--strict", "--no-error-summary"]
    checked = run([*mypy, "--explicit-package-bases", "tests/typing", *EXAMPLES, *snippets])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    scripts = run([*mypy, *SCRIPTS])
    assert scripts.returncode == 0, scripts.stdout + scripts.stderr


def test_pyright(snippets: list[str]) -> None:
    paths = ["tests/typing", *EXAMPLES, *SCRIPTS, *snippets]
    checked = run([str(BIN / "pyright"), "--pythonpath", sys.executable, *paths])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_wrong_type_fails_both(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from typing import assert_type\n"
        "from container import Container\n"
        "assert_type(Container().get(int), str)\n"
    )
    assert run([str(BIN / "mypy"), "--strict", str(wrong)]).returncode != 0
    pyright = run([str(BIN / "pyright"), "--pythonpath", sys.executable, str(wrong)])
    assert pyright.returncode != 0
