"""Count rows: start the worker under callgrind, read its dumps back, per operation.

Each row runs in a process of its own (two at a time), so its count never
depends on which other rows were asked for or ran before it: the table, a
comparison and the budget count a row the same way. Every row is counted twice
in its process: an empty loop (zero iterations: the loop's own entry and exit,
the client requests) and a loop of ``loops`` iterations; the row's figure is the
difference divided by ``loops``. It does both twice: with the garbage collector
off, and with it on (after ``gc.collect()`` and ``gc.freeze()``, so the
collections the loop's own garbage causes land at the same points in every run).

The process runs with :data:`STEADY` in its environment: string hashing
seeded, and the C library's allocator in place of CPython's own, with a
per-thread cache deep enough that a loop's frees and allocations take the same
path whatever the heap looked like when it started (CPython's allocator keeps
its arenas sorted by free space, so how many instructions a free takes depends
on the whole heap; with it a row moved by up to 0.6% between two runs of the
same code, with this by less than 0.1%).

Rows can be counted in another environment than this one: :func:`synced` makes a
venv of a checkout's lock (on another interpreter: ``budget --update --python``),
and :func:`compare` counts two commits, each checked out with a venv of its own.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from benchmarks.counts.rows import floor_of, scenario_of, with_floors
from benchmarks.harness.venv import ROOT, git, uv_command, uv_env

STEADY: Mapping[str, str] = {
    "PYTHONHASHSEED": "0",
    "PYTHONMALLOC": "malloc",
    "GLIBC_TUNABLES": "glibc.malloc.tcache_count=65535:glibc.malloc.mxfast=0",
}
"""The worker's environment: what makes a count repeat from one run to the next."""

DISTRIBUTIONS = ("mcp", "mcp-types", "pydantic", "pydantic-core", "anyio")
"""Distributions whose versions change what a row executes besides this project."""

VERSIONED = (
    "python",
    "python-build",
    "mcp",
    "mcp-types",
    "pydantic",
    "pydantic-core",
    "anyio",
    "libc",
    "valgrind",
)
"""The versions a table's header names (and that a baseline must match)."""

_TRIGGER = re.compile(r"^desc: Trigger: Client Request: (.*)$", re.MULTILINE)
_SUMMARY = re.compile(r"^summary: (\d+)$", re.MULTILINE)


class CountError(RuntimeError):
    """Counting could not run (no valgrind, a worker that failed)."""


@dataclass(frozen=True)
class Loops:
    """How many iterations a row's counted loop runs."""

    calls: int = 100
    """A ``tools/call`` through ``mcp.Client`` (about a million instructions each)."""
    handler_calls: int = 1000
    """The ``tools/call`` handler awaited alone (some tens of thousands)."""
    resolves: int = 2000
    """A scope and a graph, or a transient (some thousands)."""

    def of(self, key: str) -> int:
        scenario = scenario_of(key)
        if scenario == "handler":
            return self.handler_calls
        if scenario in ("scoped", "transient"):
            return self.resolves
        return self.calls


@dataclass(frozen=True)
class Count:
    key: str
    loops: int
    instructions: int
    """Instructions of the ``loops`` iterations, collector off (the empty loop's subtracted)."""
    with_gc: int
    """The same with the collector on: the collections the loop causes are in it."""

    def per_op(self, gc: bool = True) -> float:
        return (self.with_gc if gc else self.instructions) / self.loops


@dataclass(frozen=True)
class Counts:
    rows: Mapping[str, Count]
    versions: Mapping[str, str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)
    """Row key -> the label the timed suites give it."""

    def per_op(self, key: str, gc: bool = True) -> float:
        return self.rows[key].per_op(gc)

    def ratio(self, key: str, gc: bool = True) -> float:
        """``key`` over its scenario's floor, both counted the same way."""
        return self.per_op(key, gc) / self.per_op(floor_of(key), gc)


def versions() -> dict[str, str]:
    """What, besides this project's code, decides how many instructions a row runs."""
    found = {
        "python": platform.python_version(),
        "python-build": f"{platform.python_compiler()}, {platform.python_build()[1]}",
        "implementation": sys.implementation.name,
        "libc": " ".join(platform.libc_ver()),
    }
    for name in DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def valgrind() -> str | None:
    """The ``valgrind`` command, or ``None`` when it is not installed."""
    return shutil.which("valgrind")


def valgrind_version(command: str) -> str:
    done = subprocess.run([command, "--version"], capture_output=True, text=True, check=True)
    return done.stdout.strip().removeprefix("valgrind-")


Region = tuple[str, int, bool]
"""What the worker counts: a row, its loop count, and whether the collector is on."""


def label(key: str, loops: int, gc: bool) -> str:
    """The name a region's dump carries: its row, loop count and collector."""
    return f"count {key} x{loops}" + (" gc" if gc else "")


def read_dumps(directory: Path) -> dict[str, int]:
    """Instructions per region label, from callgrind's dump files in ``directory``."""
    found: dict[str, int] = {}
    for path in sorted(directory.glob("callgrind.out.*")):
        text = path.read_text(errors="replace")
        trigger, summary = _TRIGGER.search(text), _SUMMARY.search(text)
        if trigger is not None and summary is not None:
            found[trigger.group(1)] = int(summary.group(1))
    return found


def _environment(code: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT")
        and not name.startswith("PYTHON")
    }
    env.update(STEADY)
    env["PYTHONPATH"] = str(code)
    return env


_Group = tuple[dict[str, int], dict[str, str], dict[str, str]]
"""One worker's result: instructions per region label, versions, row names."""


def _count_group(command: str, python: Path, code: Path, regions: Sequence[Region]) -> _Group:
    with tempfile.TemporaryDirectory(prefix="counts-") as scratch:
        out = Path(scratch)
        argv = [
            command,
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}/callgrind.out.%p",
            str(python),
            "-m",
            "benchmarks.counts.worker",
            "--regions",
            ",".join(f"{key}:{loops}{':gc' if gc else ''}" for key, loops, gc in regions),
            "--out",
            str(out / "versions.json"),
        ]
        done = subprocess.run(
            argv, cwd=code, env=_environment(code), capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise CountError(
                f"the counting worker failed ({done.returncode}):\n{done.stderr[-4000:]}"
            )
        written = json.loads((out / "versions.json").read_text())
        return read_dumps(out), written["versions"], written["names"]


def count(
    keys: Sequence[str],
    loops: Loops | None = None,
    *,
    python: Path | None = None,
    code: Path = ROOT,
    progress: Callable[[str], None] = lambda _message: None,
) -> Counts:
    """Count ``keys`` (and their floors) with ``python``'s environment.

    ``python`` is the interpreter of the environment under test (its ``src/``
    and its locked dependencies; default: this one); ``code`` is the checkout
    whose ``benchmarks`` package provides the worker and the workloads (this
    one), so two commits compared are counted by the same code.
    """
    command = valgrind()
    if command is None:
        raise CountError(
            "valgrind is not installed (Debian: apt-get install valgrind); "
            "instruction counts run the rows under callgrind"
        )
    loops = loops or Loops()
    interpreter = python or Path(sys.executable)
    wanted = with_floors(keys)
    groups = [[(key, n, gc) for gc in (False, True) for n in (0, loops.of(key))] for key in wanted]
    progress(f"counting {len(wanted)} rows under callgrind, a process each, two at a time")

    def run(regions: Sequence[Region]) -> _Group:
        return _count_group(command, interpreter, code, regions)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, groups))
    dumps: dict[str, int] = {}
    versions: dict[str, str] = {"valgrind": valgrind_version(command)}
    names: dict[str, str] = {}
    for found, ran_with, named in results:
        dumps.update(found)
        versions.update(ran_with)
        names.update(named)
    rows = {}
    for key in wanted:
        n = loops.of(key)
        try:
            off, on = (dumps[label(key, n, gc)] - dumps[label(key, 0, gc)] for gc in (False, True))
        except KeyError as missing:
            raise CountError(f"callgrind wrote no dump for {missing}") from None
        rows[key] = Count(key, n, off, on)
    return Counts(rows, versions, names)


# -- other environments: another interpreter, another commit -----------------------------

TREES = ROOT / ".bench-venvs" / "trees"
"""Where ``compare`` checks commits out (git-ignored)."""


def synced(checkout: Path, progress: Callable[[str], None], python: str | None = None) -> Path:
    """The python of a venv of ``checkout``'s own lock (``uv sync --frozen --no-dev``: the
    project, installed editable, and its runtime dependencies): ``checkout/.venv``, or,
    on the interpreter ``python``, a venv under ``.bench-venvs/budget/``."""
    command = [*uv_command(), "sync", "--frozen", "--no-dev", "--quiet"]
    env = uv_env()
    target = checkout / ".venv"
    if python is not None:
        command += ["--python", python]
        target = ROOT / ".bench-venvs" / "budget" / re.sub(r"[^\w.]+", "-", python).strip("-")
        env["UV_PROJECT_ENVIRONMENT"] = str(target)
    progress(f"{' '.join(command[1:])} into {target}")
    subprocess.run(command, cwd=checkout, env=env, check=True)
    return target / "bin" / "python"


@dataclass(frozen=True)
class Tree:
    commit: str
    """The full commit id."""
    given: str
    """What the command line called it (``main``, ``a35b95c``)."""

    @property
    def path(self) -> Path:
        return TREES / self.commit[:12]


def resolve(name: str) -> Tree:
    return Tree(git("rev-parse", "--verify", f"{name}^{{commit}}", check=True), name)


def prepare(tree: Tree, progress: Callable[[str], None]) -> Path:
    """Check ``tree`` out (unless it is there) and sync its venv: its python."""
    if not (tree.path / ".git").exists():
        progress(f"git worktree for {tree.given} ({tree.commit[:12]}) in {tree.path}")
        TREES.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", str(tree.path), tree.commit, check=True)
    return synced(tree.path, progress)


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
    """Count ``keys`` at both commits, the first first: each checked out (detached) under
    ``.bench-venvs/trees/`` with a venv of its own lock, both counted by *this*
    checkout's ``benchmarks`` package (so only ``src/`` and the locked dependencies
    differ); the worktrees are removed afterwards unless ``keep``."""
    trees = [resolve(name) for name in names]
    try:
        pythons = [prepare(tree, progress) for tree in trees]
        found = []
        for tree, python in zip(trees, pythons, strict=True):
            progress(f"counting {tree.given} ({tree.commit[:12]})")
            found.append(count(keys, loops, python=python, progress=progress))
        return found[0], found[1]
    finally:
        if not keep:
            for tree in trees:
                remove(tree)
