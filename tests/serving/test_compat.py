"""The SDK's private parts are read in ``mcp_adapter.compat`` only, at a
checked version (Docket's, read there too, are checked in tests/tasks/test_reading.py)."""

from __future__ import annotations

import ast
from importlib.metadata import version
from pathlib import Path

import mcp_adapter.serving
from mcp_adapter import compat as compat

SERVING = Path(mcp_adapter.serving.__file__).parent
OTHER_LIBRARIES = {"internals.py"}
"""uvicorn's and sse-starlette's private parts, which are not the SDK's."""
PUBLIC = {"os._exit"}
"""Public functions of the standard library whose names start with an underscore."""


def private_reads(source: str) -> list[str]:
    """``x._name`` where ``x`` is not ``self`` (``super()._name`` counts: an override)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            continue
        if ast.unparse(node) in PUBLIC:
            continue
        found.append(f"{ast.unparse(node)} (line {node.lineno})")
    return found


def test_the_installed_sdk_is_the_version_checked() -> None:
    assert compat.SDK_VERSION == version("mcp") == compat.CHECKED_AGAINST


def test_the_guard_sees_a_private_read() -> None:
    assert private_reads("manager._server_instances.keys()\nself._own = 1\n") == [
        "manager._server_instances (line 1)"
    ]


def test_no_serving_module_reads_a_private_attribute_of_another_object() -> None:
    offenders = {
        path.name: reads
        for path in sorted(SERVING.glob("*.py"))
        if path.name not in OTHER_LIBRARIES
        if (reads := private_reads(path.read_text()))
    }
    assert offenders == {}


def test_put_on_server_reads_no_private_attribute_of_the_sdk() -> None:
    source = (SERVING.parent / "extensions" / "put_on_server.py").read_text()
    own = ("._dispatcher", "._compiled", "._filter")  # its own entry's, and the dispatcher's
    assert [read for read in private_reads(source) if not read.split(" ")[0].endswith(own)] == []
