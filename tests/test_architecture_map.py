"""docs/architecture.md names real files: a renamed or moved module fails here, naming the line."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "src" / "mcp_adapter"
STAGES = ("compile", "compiled", "dispatch", "input")
"""The folders a call passes through: the map names each of their modules."""

_NAMED = re.compile(r"`([\w./]+(?:\.py|/))`")


def named(text: str | None = None) -> list[tuple[int, str]]:
    """``(line, path)`` of every file or folder the map names in backticks."""
    found = []
    for number, line in enumerate((MAP.read_text() if text is None else text).splitlines(), 1):
        found.extend((number, match) for match in _NAMED.findall(line))
    return found


def where(path: str) -> Path:
    """A path as the map writes it: from the repository's root (``src/``, ``tests/``) or
    from the package (``dispatch/tools.py``)."""
    if path.startswith(("src/", "tests/", "docs/")):
        return ROOT / path
    return PACKAGE / path


def missing(text: str | None = None) -> list[str]:
    return [f"line {line}: {path}" for line, path in named(text) if not where(path).exists()]


def test_every_file_the_map_names_exists() -> None:
    assert missing() == []


def test_the_map_names_every_part_and_every_module_of_the_stages() -> None:
    paths = {path for _, path in named()}
    folders = {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    roots = {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    stage_modules = {
        f"{stage}/{p.name}"
        for stage in STAGES
        for p in (PACKAGE / stage).glob("*.py")
        if p.name != "__init__.py"
    }
    assert (folders | roots | stage_modules) - paths == set()


def test_a_renamed_module_is_caught() -> None:
    text = MAP.read_text().replace("`dispatch/tools.py`", "`dispatch/tool_calls.py`", 1)
    assert len(missing(text)) == 1
    assert "dispatch/tool_calls.py" in missing(text)[0]
