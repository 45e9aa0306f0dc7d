"""Every schema a catalog publishes is a valid, self-contained JSON Schema 2020-12.

``mcp-adapter check`` runs this over a server; the test suite runs it over every
server it and the examples define. A published schema that is invalid, or whose
``$ref`` points outside the document, makes clients refuse the tool (the SDK's
client refuses the call; the TypeScript SDK fails ``listTools()`` for the server).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from mcp_adapter.compiled.catalog import Catalog

_BASE = "urn:mcp-adapter:published-schema"
_DATA = frozenset({"default", "examples", "const", "enum"})
"""Keywords whose values are instances, not schemas: a ``$ref`` key there is data."""


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for key, value in node.items():
            if key not in _DATA:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def schema_problems(schema: Any) -> list[str]:
    """What makes ``schema`` not a valid, self-contained JSON Schema 2020-12 (``[]``: none)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return [f"not a valid JSON Schema 2020-12: {exc.message}"]
    resource: Resource[Any] = DRAFT202012.create_resource(schema)
    resolver = Registry().with_resource(_BASE, resource).resolver(base_uri=_BASE)
    problems: list[str] = []
    for ref in dict.fromkeys(_refs(schema)):
        try:
            resolver.lookup(ref)
        except Unresolvable:
            problems.append(f"$ref {ref!r} does not resolve inside the schema")
    return problems


def published_schema_problems(catalog: Catalog) -> list[str]:
    """Every problem of every input and output schema ``tools/list`` publishes, in both
    protocol eras, each prefixed with the tool, the era and which schema it is."""
    problems: list[str] = []
    for name, tool in catalog.tools.items():
        for era, entry in (("2026-07-28", tool.modern), ("2025-11-25", tool.legacy)):
            schemas = (("inputSchema", entry.input_schema), ("outputSchema", entry.output_schema))
            for which, schema in schemas:
                if schema is not None:
                    problems.extend(
                        f"tool {name!r} ({era}) {which}: {found}"
                        for found in schema_problems(schema)
                    )
    return problems
