"""The package root exports everything its users import from it."""

import ast
from pathlib import Path

import container
import mcp_adapter


def test_every_name_in_all_is_exported() -> None:
    missing = [name for name in container.__all__ if not hasattr(container, name)]
    assert missing == []
    assert len(set(container.__all__)) == len(container.__all__)


def _imported_from_submodules(package: Path) -> set[tuple[str, str]]:
    """``(module, name)`` for each ``from container.<module> import name`` under ``package``."""
    found: set[tuple[str, str]] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("container."):
                found.update((node.module or "", alias.name) for alias in node.names)
    return found


def test_what_the_adapter_imports_from_container_modules_is_at_the_root() -> None:
    used = _imported_from_submodules(Path(mcp_adapter.__file__).parent)
    not_at_root = sorted(
        f"{module}.{name}"
        for module, name in used
        if name not in container.__all__
        or getattr(container, name) is not getattr(__import__(module, fromlist=[name]), name)
    )
    assert not_at_root == []
