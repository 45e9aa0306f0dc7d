"""The package's layout, read from the source: imports go one way, none goes round, and
no module grows past ``MAX_LINES``.

docs/architecture.md draws the same map: the parts of ``mcp_adapter`` from the
bottom up, each importing only its own folder and the parts below it. Compile and
dispatch sit side by side and meet only in the compiled forms; so do the wings
(serving, extensions, layers). Type-checking imports count: a type that would
need an import against the direction is carried by a protocol or a lower module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("container", "schemas", "mcp_adapter")

ROOT = "(root)"
"""The root modules of ``mcp_adapter`` (errors, interrupts, compat, ...):
the bottom."""

RANKS: dict[str, int] = {
    ROOT: 0,
    "declare": 1,
    "stores": 1,
    "input": 2,
    "notifications": 2,
    "tasks": 2,
    "compiled": 3,
    "compile": 4,
    "dispatch": 4,
    "layers": 5,
    "extensions": 5,
    "serving": 5,
    "testing": 6,
    "cli": 7,
}
"""Each part of ``mcp_adapter`` may import its own folder and any part of a lower rank;
parts of one rank know nothing of each other. ``mcp_adapter/__init__.py`` (the public
names) stands above them all."""

MAX_LINES = 450
"""The bound on any module under ``src/``: a longer one is split along a seam it has, into
modules named for their one reason to exist."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path for package in PACKAGES for path in (SRC / package).rglob("*.py")
    }


MODULES = _modules()


def _imports(
    name: str, path: Path, modules: Mapping[str, Path] = MODULES
) -> Iterator[tuple[str, int]]:
    """``(module, line)`` of every import of a module of ``modules`` (those under ``src/``),
    at run time, deferred inside a function, or under ``TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield _known(alias.name, modules), node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield (submodule if submodule in modules else _known(base, modules)), node.lineno


def _known(module: str, modules: Mapping[str, Path] = MODULES) -> str:
    """``module``, or the nearest enclosing module of ``modules`` ('' outside them)."""
    while module and module not in modules:
        module = module.rpartition(".")[0]
    return module


def _graph(modules: Mapping[str, Path] = MODULES) -> dict[str, set[tuple[str, int]]]:
    return {
        name: {(t, line) for t, line in _imports(name, path, modules) if t and t != name}
        for name, path in modules.items()
    }


def _part(module: str) -> str | None:
    """The part of ``mcp_adapter`` a module belongs to; ``None`` for the package's face."""
    pieces = module.split(".")
    if pieces[0] != "mcp_adapter" or len(pieces) == 1:
        return None
    if len(pieces) == 2 and (SRC / "mcp_adapter" / f"{pieces[1]}.py").exists():
        return ROOT
    return pieces[1]


def against_the_direction(graph: dict[str, set[tuple[str, int]]]) -> list[str]:
    found = []
    for source, targets in sorted(graph.items()):
        top = source.split(".")[0]
        for target, line in sorted(targets):
            where = f"{source}:{line} imports {target}"
            if top in ("container", "schemas") and target.split(".")[0] == "mcp_adapter":
                found.append(f"{where}: container and schemas know nothing of mcp_adapter")
            if top != "mcp_adapter" or target.split(".")[0] != "mcp_adapter":
                continue
            mine, theirs = _part(source), _part(target)
            if mine is None:
                continue
            if theirs is None:
                found.append(f"{where}: only the package's face imports the package's face")
            elif theirs != mine and RANKS[theirs] >= RANKS[mine]:
                found.append(
                    f"{where}: {mine} (rank {RANKS[mine]}) may not import {theirs} "
                    f"(rank {RANKS[theirs]})"
                )
    return found


def circles(graph: dict[str, set[tuple[str, int]]]) -> list[str]:
    edges = {name: sorted({target for target, _ in targets}) for name, targets in graph.items()}
    found: list[str] = []
    done: set[str] = set()

    def walk(name: str, path: list[str]) -> None:
        if name in path:
            found.append(" -> ".join([*path[path.index(name) :], name]))
            return
        if name in done:
            return
        for target in edges.get(name, ()):
            walk(target, [*path, name])
        done.add(name)

    for name in sorted(edges):
        walk(name, [])
    return found


def too_long() -> list[str]:
    """``module: lines`` of every module under ``src/`` longer than ``MAX_LINES``."""
    lengths = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    return [f"{name}: {n} lines" for name, n in sorted(lengths.items()) if n > MAX_LINES]


def test_no_module_under_src_is_longer_than_the_bound() -> None:
    assert too_long() == []


def test_a_long_module_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long = tmp_path / "core.py"
    long.write_text("\n" * MAX_LINES + "x = 1\n")
    monkeypatch.setitem(MODULES, "mcp_adapter.dispatch.core", long)
    assert too_long() == [f"mcp_adapter.dispatch.core: {MAX_LINES + 1} lines"]


def test_every_folder_of_the_package_has_a_rank() -> None:
    folders = {
        path.name
        for path in (SRC / "mcp_adapter").iterdir()
        if path.is_dir() and (path / "__init__.py").exists()
    }
    assert folders == set(RANKS) - {ROOT}


def test_imports_go_one_way() -> None:
    assert against_the_direction(_graph()) == []


def test_no_module_under_src_imports_itself_back() -> None:
    assert circles(_graph()) == []


def test_container_knows_nothing_of_mcp() -> None:
    for name, targets in _graph().items():
        if name.split(".")[0] == "container":
            path = MODULES[name]
            assert not re.search(r"^\s*(from|import) mcp\b", path.read_text(), re.M), name
            assert all(t.split(".")[0] == "container" for t, _ in targets), name


@pytest.mark.parametrize(
    ("source", "code", "expected"),
    [
        (
            "mcp_adapter.compile.tools",
            "from mcp_adapter.dispatch.results import tool_result\n",
            "compile (rank 4) may not import dispatch (rank 4)",
        ),
        (
            "mcp_adapter.declare.components",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from mcp_adapter.compiled.catalog import Catalog\n",
            "declare (rank 1) may not import compiled (rank 3)",
        ),
        (
            "mcp_adapter.dispatch.core",
            "def later():\n    from mcp_adapter.serving import http_app\n",
            "dispatch (rank 4) may not import serving (rank 5)",
        ),
        ("schemas.contract", "import mcp_adapter.errors\n", "know nothing of mcp_adapter"),
        ("mcp_adapter.layers.timing", "from mcp_adapter import Tool\n", "the package's face"),
    ],
)
def test_a_wrong_import_is_caught(
    source: str, code: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(MODULES[source].read_text() + "\n" + code)
    monkeypatch.setitem(MODULES, source, wrong)
    assert any(expected in line for line in against_the_direction(_graph()))


def test_a_circle_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = tmp_path / "scope.py"
    source = MODULES["container.scope"].read_text()
    wrong.write_text(
        source + "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from container.container import Container\n"
    )
    monkeypatch.setitem(MODULES, "container.scope", wrong)
    assert any("container.scope -> container.container" in c for c in circles(_graph()))


# -- benchmarks/: the same one-way rule -------------------------------------------------

BENCHMARKS = SRC.parent / "benchmarks"
BENCH_RANKS = {"harness": 0, "workloads": 1, "chaos": 1, "suites": 2, "counts": 3}
"""Each folder of ``benchmarks`` may import its own modules and the folders of a lower rank:
the harness, what is measured (and, beside it, the chaos run), the suites, the instruction
counts. The modules at the top
(``python -m benchmarks``, ``benchmarks.http_wire``, ...) are commands: they may import any
folder, and nothing imports a command, not even another one."""


def _bench_modules() -> dict[str, Path]:
    found = {}
    for path in BENCHMARKS.rglob("*.py"):
        parts = list(path.relative_to(BENCHMARKS.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


BENCH_MODULES = _bench_modules()


def _bench_part(module: str) -> str:
    """The folder of ``benchmarks`` a module belongs to, or the module itself (a command)."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 2 or pieces[-1] in BENCH_RANKS else module


def bench_against_the_direction(graph: dict[str, set[tuple[str, int]]]) -> list[str]:
    found = []
    for source, targets in sorted(graph.items()):
        mine = _bench_part(source)
        for target, line in sorted(targets):
            theirs = _bench_part(target)
            where = f"{source}:{line} imports {target}"
            if theirs == mine:
                continue
            if theirs not in BENCH_RANKS:
                found.append(f"{where}: nothing imports a command")
            elif mine in BENCH_RANKS and BENCH_RANKS[theirs] >= BENCH_RANKS[mine]:
                found.append(
                    f"{where}: {mine} (rank {BENCH_RANKS[mine]}) may not import {theirs} "
                    f"(rank {BENCH_RANKS[theirs]})"
                )
    return found


def test_every_folder_of_the_benchmarks_has_a_rank() -> None:
    folders = {p.name for p in BENCHMARKS.iterdir() if (p / "__init__.py").exists()}
    assert folders == set(BENCH_RANKS)


def test_benchmark_imports_go_one_way_and_none_goes_round() -> None:
    graph = _graph(BENCH_MODULES)
    assert bench_against_the_direction(graph) == []
    assert circles(graph) == []


@pytest.mark.parametrize(
    ("source", "code", "expected"),
    [
        (
            "benchmarks.harness.timing",
            "from benchmarks.workloads.mcp import TOOL\n",
            "harness (rank 0) may not import workloads (rank 1)",
        ),
        (
            "benchmarks.workloads.http",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from benchmarks.suites.served import Contender\n",
            "workloads (rank 1) may not import suites (rank 2)",
        ),
        (
            "benchmarks.suites.http",
            "def later():\n    from benchmarks.http_wire import TAGS\n",
            "nothing imports a command",
        ),
        ("benchmarks.profile", "import benchmarks.layers_cost\n", "nothing imports a command"),
    ],
)
def test_a_wrong_benchmark_import_is_caught(
    source: str, code: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(BENCH_MODULES[source].read_text() + "\n" + code)
    monkeypatch.setitem(BENCH_MODULES, source, wrong)
    assert any(expected in line for line in bench_against_the_direction(_graph(BENCH_MODULES)))


def test_a_benchmark_circle_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The circle the HTTP suite once had: its servers' module typed with the suite's names."""
    wrong = tmp_path / "served.py"
    source = BENCH_MODULES["benchmarks.suites.served"].read_text()
    wrong.write_text(
        source + "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from benchmarks.suites.http import SCENARIO\n"
    )
    monkeypatch.setitem(BENCH_MODULES, "benchmarks.suites.served", wrong)
    found = circles(_graph(BENCH_MODULES))
    assert any("benchmarks.suites.served -> benchmarks.suites.http" in c for c in found), found
