"""Count two commits the same way: a git worktree and a synced venv for each.

Each commit is checked out (detached) under ``.bench-venvs/trees/<commit>``
(git-ignored) and gets its own ``.venv`` from its own lock (``uv sync --frozen
--no-dev``: the project, installed editable, and its runtime dependencies).
Both are counted by *this* checkout's ``benchmarks`` package, so the workloads,
the worker and the loop are the same code on both sides and only ``src/`` and
the locked dependencies differ. The worktrees are removed afterwards unless
asked to keep them (a later comparison of the same commit then reuses them).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.counts.run import Counts, Loops, count
from benchmarks.harness.venv import ROOT, git, uv_command, uv_env

TREES = ROOT / ".bench-venvs" / "trees"


@dataclass(frozen=True)
class Tree:
    commit: str
    """The full commit id."""
    given: str
    """What the command line called it (``main``, ``a35b95c``)."""

    @property
    def path(self) -> Path:
        return TREES / self.commit[:12]

    @property
    def python(self) -> Path:
        return self.path / ".venv" / "bin" / "python"


def resolve(name: str) -> Tree:
    return Tree(git("rev-parse", "--verify", f"{name}^{{commit}}", check=True), name)


def prepare(tree: Tree, progress: Callable[[str], None]) -> None:
    """Check ``tree`` out and sync its venv (both skipped when already there)."""
    if not (tree.path / ".git").exists():
        progress(f"git worktree for {tree.given} ({tree.commit[:12]}) in {tree.path}")
        TREES.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", str(tree.path), tree.commit, check=True)
    progress(f"uv sync --frozen --no-dev in {tree.path}")
    subprocess.run(
        [*uv_command(), "sync", "--frozen", "--no-dev", "--quiet"],
        cwd=tree.path,
        env=uv_env(),
        check=True,
    )


def remove(tree: Tree) -> None:
    if (tree.path / ".git").exists():
        git("worktree", "remove", "--force", str(tree.path), check=True)


def compare(
    names: tuple[str, str],
    keys: Sequence[str],
    loops: Loops,
    *,
    keep: bool = False,
    progress: Callable[[str], None] = lambda _message: None,
) -> tuple[Counts, Counts]:
    """Count ``keys`` at both commits, the first first."""
    trees = [resolve(name) for name in names]
    try:
        for tree in trees:
            prepare(tree, progress)
        found = []
        for tree in trees:
            progress(f"counting {tree.given} ({tree.commit[:12]})")
            found.append(count(keys, loops, python=tree.python, progress=progress))
        return found[0], found[1]
    finally:
        if not keep:
            for tree in trees:
                remove(tree)
