"""Every schema ``tools/list`` publishes is a valid, self-contained JSON Schema 2020-12.

``published_schema_problems`` (also run by ``mcp-adapter check``) runs over every server
the examples and the test suite define, in both eras; and a non-object output with
``$defs`` keeps them at the root of its 2025-11-25 ``{"result": ...}`` wrapper.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from container import Container
from mcp_adapter import Catalog, McpResponse, Server, Tool, compile_server
from mcp_adapter.errors import CompileError
from mcp_adapter.schema_check import published_schema_problems, schema_problems
from schemas import Schema
from tests.tools.drivers import LEGACY, Driver

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("examples", "tests")
SKIPPED = ("examples.extensions",)
"""Scripts run with their own directory on ``sys.path`` (tests/extensions/test_examples.py)."""
REFUSED = {"tests.cli.apps:UnresolvableSchemaServer"}
"""Servers built to be refused by the check (tests/cli/test_inspect.py)."""
MUST_COMPILE = ("examples.", "tests.seed_examples.", "tests.extensions.seed_examples.")


def _modules() -> Iterator[ModuleType]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if name.endswith(("__main__", "__init__")) or name.startswith(SKIPPED):
                continue
            yield importlib.import_module(name)


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _containers(module: ModuleType) -> Iterator[Container]:
    """A bare container, then those the server's module offers (instances, builders)."""
    yield Container()
    for name, value in vars(module).items():
        if isinstance(value, Container):
            yield value
        elif (
            inspect.isfunction(value)
            and "container" in name
            and value.__module__ == module.__name__
            and not inspect.signature(value).parameters
        ):
            try:
                built = value()
            except Exception:  # noqa: BLE001 - a builder that cannot build offers nothing
                continue
            if isinstance(built, Container):
                yield built


def _catalogs() -> tuple[dict[str, Catalog], list[str]]:
    modules = {module.__name__: module for module in _modules()}
    catalogs: dict[str, Catalog] = {}
    uncompiled: list[str] = []
    for server in set(_subclasses(Server)):
        label = f"{server.__module__}:{server.__qualname__}"
        module = modules.get(server.__module__) or sys.modules[server.__module__]
        for container in _containers(module):
            try:
                catalogs[label] = compile_server(server, container)
                break
            except CompileError:
                continue
        else:
            uncompiled.append(label)
    return catalogs, uncompiled


def test_every_published_schema_of_every_server_is_valid_and_self_contained() -> None:
    catalogs, uncompiled = _catalogs()
    assert len(catalogs) > 40
    assert [label for label in uncompiled if label.startswith(MUST_COMPILE)] == []
    problems = {label: published_schema_problems(c) for label, c in catalogs.items()}
    assert {label for label, found in problems.items() if found} == REFUSED


class Part(Schema):
    sku: str


class PartsTool(Tool[Schema, list[Part]]):
    """A non-object output whose schema has ``$defs``."""

    name = "parts"

    async def handle(self) -> McpResponse:
        return McpResponse.structured([Part(sku="a")])


class PartsServer(Server):
    tools = (PartsTool,)


async def test_a_wrapped_output_keeps_its_defs_at_the_root(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), PartsServer, "parts")
    schema = entry["outputSchema"]
    assert schema_problems(schema) == []
    if driver.era == LEGACY:
        assert set(schema["$defs"]) == {"Part"}
        assert "$defs" not in schema["properties"]["result"]
    result = await driver.call(Container(), PartsServer, "parts")
    result.assertOk()
    expected = [{"sku": "a"}]
    assert result.structured == (expected if driver.modern else {"result": expected})


def test_schema_problems_names_what_is_wrong() -> None:
    assert schema_problems({"type": 5}) != []
    assert schema_problems({"$ref": "#/$defs/Missing"}) == [
        "$ref '#/$defs/Missing' does not resolve inside the schema"
    ]
    assert schema_problems({"$defs": {"A": {}}, "$ref": "#/$defs/A"}) == []
