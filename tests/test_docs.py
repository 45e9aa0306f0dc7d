"""Every ```python block in docs/*.md runs.

Blocks of one file run in order, in one module namespace, so a later block may
use what an earlier one defined. A block preceded by the line
``<!-- no-run -->`` (blank lines between are allowed) is skipped.
"""

from __future__ import annotations

import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
NO_RUN = "<!-- no-run -->"


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the first code line
    code: str


def python_blocks(text: str) -> list[Block]:
    """The runnable ```python blocks of a Markdown text, in order."""
    blocks: list[Block] = []
    lines = text.splitlines()
    previous = ""  # the last non-blank line outside a block
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = line.strip()
        if fence.startswith("```"):
            language = fence[3:].strip().split(" ")[0]
            end = index + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if end == len(lines):
                raise ValueError(f"unclosed code fence at line {index + 1}")
            if language == "python" and previous != NO_RUN:
                blocks.append(Block(index + 2, "\n".join(lines[index + 1 : end]) + "\n"))
            previous = "```"
            index = end + 1
            continue
        if fence:
            previous = fence
        index += 1
    return blocks


def run_markdown(path: Path) -> int:
    """Run the blocks of ``path`` in one fresh module; return how many ran."""
    name = f"docs_{path.stem.replace('-', '_')}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module  # dataclasses and string annotations look modules up
    try:
        blocks = python_blocks(path.read_text(encoding="utf-8"))
        for block in blocks:
            source = "\n" * (block.line - 1) + block.code  # tracebacks point into the .md
            exec(compile(source, str(path), "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[name]
    return len(blocks)


DOC_FILES = sorted(DOCS.glob("*.md"))


@pytest.mark.parametrize("path", DOC_FILES, ids=[p.name for p in DOC_FILES])
def test_python_examples_run(path: Path) -> None:
    run_markdown(path)


def test_container_guide_has_examples() -> None:
    assert run_markdown(DOCS / "container.md") >= 10


def test_blocks_are_extracted_in_order_and_no_run_is_skipped() -> None:
    text = "\n".join(
        [
            "# Title",
            "```python",
            "a = 1",
            "```",
            "<!-- no-run -->",
            "",
            "```python",
            "raise SystemExit",
            "```",
            "```sh",
            "echo not python",
            "```",
            "```python",
            "b = a + 1",
            "```",
        ]
    )
    blocks = python_blocks(text)
    assert [b.code for b in blocks] == ["a = 1\n", "b = a + 1\n"]
    assert [b.line for b in blocks] == [3, 14]


def test_a_failing_block_fails_with_its_markdown_line(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\nassert x == 2\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError) as caught:
        run_markdown(page)
    assert caught.traceback[-1].lineno + 1 == 5


_PROJECT_HISTORY = re.compile(
    r"(?<!uvicorn )\bissues? \d+|\bround \d+\b|\b(?:this|last|next) round\b", re.I
)
"""The project's own issue numbers and rounds of work: history, which belongs in CHANGELOG.md
(an upstream project's issue, like uvicorn's, may be cited)."""


def history_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if _PROJECT_HISTORY.search(line)]


def test_user_docs_speak_of_behaviour_not_of_the_projects_history() -> None:
    found = {
        path.name: lines
        for path in sorted([*DOCS.glob("*.md"), DOCS.parent / "README.md"])
        if (lines := history_lines(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_history_check_sees_an_issue_number() -> None:
    assert history_lines("met (issue 8's target)\nuvicorn issue 3149\n10 rounds\n") == [1]
