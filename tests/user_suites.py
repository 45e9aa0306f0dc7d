"""Running a piece of documentation or a generated test file as a user's own pytest suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def fenced_python(markdown: str) -> list[str]:
    """Every ```python block of a page, run by the docs tests or not, in order."""
    blocks: list[str] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```python":
            end = lines.index("```", index + 1)
            blocks.append("\n".join(lines[index + 1 : end]) + "\n")
            index = end
        index += 1
    return blocks


def run_pytest(folder: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``pytest -q`` over ``folder`` in a fresh interpreter (bounded), as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
