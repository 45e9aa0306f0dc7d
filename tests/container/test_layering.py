"""How the container's modules depend on each other, read from their source."""

import ast
from pathlib import Path

import container

PACKAGE = Path(container.__file__).parent


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in (
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    )


def _runtime_imports(tree: ast.Module) -> set[str]:
    """The ``container.*`` modules a module imports when it runs (deferred imports included)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("container."):
                found.add(node.module.removeprefix("container."))
            elif node.module == "container":
                found.update(alias.name for alias in node.names)
        if isinstance(node, ast.Import):
            found.update(
                alias.name.removeprefix("container.")
                for alias in node.names
                if alias.name.startswith("container.")
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _modules() -> dict[str, ast.Module]:
    return {
        path.stem: ast.parse(path.read_text(), str(path))
        for path in PACKAGE.glob("*.py")
        if path.stem != "__init__"
    }


def test_the_container_modules_import_each_other_without_a_cycle() -> None:
    graph = {name: _runtime_imports(tree) & set(_modules()) for name, tree in _modules().items()}
    done: set[str] = set()

    def walk(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join((*path, name))}"
        if name in done:
            return
        for imported in sorted(graph[name]):
            walk(imported, (*path, name))
        done.add(name)

    for name in sorted(graph):
        walk(name, ())
    assert "interop" not in graph["binding"]
    assert "container" not in graph["interop"]


def _code_strings(tree: ast.Module) -> set[str]:
    """String constants and imported names, docstrings left out."""
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            docstrings.add(id(body[0].value))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                found.add(node.value)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_only_interop_knows_dependency_injector() -> None:
    knowing = {
        name
        for name, tree in _modules().items()
        if any("dependency_injector" in text for text in _code_strings(tree))
    }
    assert knowing == {"interop"}


def test_no_module_of_the_package_grows_much_past_400_lines() -> None:
    long = {
        path.name: count
        for path in PACKAGE.glob("*.py")
        if (count := len(path.read_text().splitlines())) > 420
    }
    assert long == {}
