"""What ``src/`` imports, ``pyproject.toml`` declares: every third-party module comes from a
distribution named in ``dependencies`` or in an extra (none arrives only because another
dependency happens to bring it), and an extra's modules are imported only inside
``needs_extra``, so that a missing one says which extra to install."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_adapter.distribution import EXTRAS
from tests.packaging.test_own_packages import run_python

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
OWN = frozenset({"container", "schemas", "mcp_adapter", "_mcp_adapter_di"})

HOSTED = {"pytest": "mcp_adapter.testing.plugin is a pytest plugin: pytest loads it"}
"""Modules imported without being declared, and why that is right."""
UNGUARDED = {
    "src/container/interop.py": "container knows nothing of mcp_adapter; it imports "
    "dependency_injector only for an object that came from dependency_injector"
}
"""Files that import a module of an extra outside ``needs_extra``, and why they may."""


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert found, requirement
    return _normal(found.group())


def declared(extra: str | None = None) -> set[str]:
    """The distributions ``dependencies`` names (or one extra, or all with ``'*'``)."""
    extras = PROJECT["optional-dependencies"]
    if extra is None:
        return {_requirement_name(r) for r in PROJECT["dependencies"]}
    chosen = list(extras.values()) if extra == "*" else [extras[extra]]
    return {_requirement_name(r) for requirements in chosen for r in requirements}


def _imports(path: Path) -> Iterator[tuple[str, ast.stmt, list[ast.AST]]]:
    """``(top-level module, statement, its enclosing nodes)`` of every absolute import."""
    tree = ast.parse(path.read_text(), str(path))

    def walk(node: ast.AST, around: list[ast.AST]) -> Iterator[tuple[str, ast.stmt, list[ast.AST]]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name.partition(".")[0], child, around
            elif isinstance(child, ast.ImportFrom) and not child.level and child.module:
                yield child.module.partition(".")[0], child, around
            yield from walk(child, [*around, child])

    yield from walk(tree, [])


def third_party_imports() -> dict[str, list[str]]:
    """``module -> ["file:line", ...]`` for every module under ``src/`` imports that is
    neither the standard library's nor this distribution's."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for module, node, _ in _imports(path):
            if module not in sys.stdlib_module_names and module not in OWN:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.setdefault(module, []).append(where)
    return found


def undeclared(mine: set[str]) -> dict[str, tuple[list[str], str]]:
    """``module -> (its distributions, where it is first imported)`` for every third-party
    module imported under ``src/`` that no distribution of ``mine`` provides."""
    providers = importlib.metadata.packages_distributions()
    return {
        module: (sorted(providers.get(module, ["?"])), where[0])
        for module, where in third_party_imports().items()
        if module not in HOSTED and not {_normal(d) for d in providers.get(module, [])} & mine
    }


def test_every_third_party_import_is_declared() -> None:
    assert undeclared(declared() | declared("*")) == {}, (
        "declare these in pyproject.toml's dependencies or an extra"
    )


def test_the_check_finds_an_undeclared_import() -> None:
    """``jwt`` comes with ``mcp`` (which needs ``pyjwt[crypto]``): undeclared, it is named."""
    found = undeclared(declared() - {"pyjwt"} | declared("*"))
    assert list(found) == ["jwt"]
    assert found["jwt"] == (["PyJWT"], "src/mcp_adapter/serving/jwt_verifier.py:20")


def test_the_extras_are_the_ones_the_package_knows() -> None:
    """``EXTRAS`` (what ``needs_extra`` names) matches ``[project.optional-dependencies]``:
    the same extras, each bringing the distributions of the modules listed for it."""
    providers = importlib.metadata.packages_distributions()
    assert set(EXTRAS) == set(PROJECT["optional-dependencies"])
    for extra, modules in EXTRAS.items():
        assert {_normal(d) for d in modules.values()} == declared(extra), extra
        for module, distribution in modules.items():
            assert _normal(distribution) in {_normal(d) for d in providers[module]}, module


def test_every_extra_is_named_in_the_readme_and_a_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = [path.read_text(encoding="utf-8") for path in (ROOT / "docs").glob("*.md")]
    for extra in PROJECT["optional-dependencies"]:
        install = f"pip install 'mcp-adapter-di[{extra}]'"
        assert install in readme, extra
        assert any(install in page for page in pages), extra


def _guarded(node: ast.stmt, around: list[ast.AST], extra: str) -> bool:
    for outer in around:
        if isinstance(outer, ast.If) and ast.unparse(outer.test) == "TYPE_CHECKING":
            return True
        if isinstance(outer, ast.With) and node in outer.body:
            for item in outer.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and ast.unparse(call.func) == "needs_extra"
                    and call.args
                    and isinstance(call.args[0], ast.Constant)
                    and call.args[0].value == extra
                ):
                    return True
    return False


def unguarded_imports(root: Path = SRC) -> list[str]:
    """Imports of an extra's module outside ``with needs_extra(<that extra>, ...)`` and
    outside ``if TYPE_CHECKING:``."""
    owner = {module: extra for extra, modules in EXTRAS.items() for module in modules}
    found = []
    for path in sorted(root.rglob("*.py")):
        if str(path.relative_to(root.parent)) in UNGUARDED:
            continue
        for module, node, around in _imports(path):
            extra = owner.get(module)
            if extra is not None and not _guarded(node, around, extra):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} imports {module}")
    return found


def test_every_import_of_an_extra_goes_through_needs_extra() -> None:
    assert unguarded_imports() == []


def test_the_check_finds_a_bare_import_of_an_extra(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "bare.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from mcp_adapter.distribution import needs_extra\n"
        "if TYPE_CHECKING:\n    import redis\n"
        'with needs_extra("redis", "x"):\n    import redis\n'
        'with needs_extra("tasks", "x"):\n    import redis.asyncio\n'
        "def later():\n    import hypothesis\n"
    )
    assert unguarded_imports(source) == [
        "src/bare.py:8 imports redis",
        "src/bare.py:10 imports hypothesis",
    ]


HYPOTHESIS_FIRST = "mcp_adapter.testing.schema_strategies"
"""The first module of ``mcp_adapter.testing`` to import hypothesis (the others import it)."""
MISSING = [
    ("hypothesis", "from mcp_adapter.testing import payloads", HYPOTHESIS_FIRST),
    ("hypothesis", "from mcp_adapter.testing import assert_schema_separation", HYPOTHESIS_FIRST),
    (
        "redis",
        "from mcp_adapter.stores.shared import client_from_url\n"
        "client_from_url('redis://127.0.0.1:1/0')",
        "Redis support",
    ),
    ("redis", "import mcp_adapter.stores.redis_bus", "the Redis subscription bus"),
]


@pytest.mark.parametrize(("module", "code", "feature"), MISSING)
def test_without_the_extra_the_error_names_it(module: str, code: str, feature: str) -> None:
    done = run_python(["-c", f"import sys\nsys.modules[{module!r}] = None\n{code}"], ROOT)
    assert done.returncode == 1
    extra = next(extra for extra, modules in EXTRAS.items() if module in modules)
    distribution = EXTRAS[extra][module]
    assert done.stderr.splitlines()[-2:] == [
        f"mcp_adapter.distribution.MissingExtra: {feature} needs the {distribution} package, "
        "which is not installed",
        f"  hint: pip install 'mcp-adapter-di[{extra}]'",
    ]


def test_the_command_names_the_extra_a_target_needs(tmp_path: Path) -> None:
    (tmp_path / "props.py").write_text(
        "from mcp_adapter import Server\nfrom mcp_adapter.testing import payloads\n\n\n"
        "class Props(Server):\n    name = 'props'\n"
    )
    code = (
        "import sys\nsys.modules['hypothesis'] = None\nfrom mcp_adapter.cli import main\n"
        "raise SystemExit(main(['check', 'props:Props']))\n"
    )
    done = run_python(["-c", code], tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: importing 'props' failed: {HYPOTHESIS_FIRST} needs the hypothesis package, "
        "which is not installed",
        "hint: pip install 'mcp-adapter-di[testing]'",
    ]
