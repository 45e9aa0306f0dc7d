"""Hypothesis strategies for property tests of tools: valid payloads from a tool's contract.

This module needs ``hypothesis`` (``pip install 'mcp-adapter-di[testing]'``); it is
imported only when ``payloads`` or ``from_json_schema`` is used.

Values are generated from the JSON Schema the tool publishes (the schema a
model reads), then kept only if the tool's own validator accepts them after a
JSON round trip, so every payload is one a client could send and the server
must accept. Schemas using keywords outside what pydantic emits fall back to
``st.from_type`` on the contract type.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from mcp_adapter.compiled.catalog import Catalog, CompiledTool
from mcp_adapter.distribution import needs_extra
from mcp_adapter.testing.schema_strategies import (
    UnsupportedSchemaError,
    from_json_schema,
    roundtrip,
)
from schemas import Contract

with needs_extra("testing", __name__):
    from hypothesis import strategies as st


def _contract_of(target: Any, name: str | None) -> Contract[Any]:
    if isinstance(target, Catalog):
        if name is None:
            raise TypeError("payloads(catalog, name): name the tool")
        tool = target.tools.get(name)
        if tool is None:
            raise KeyError(f"no tool {name!r} in {target.name} (tools: {sorted(target.tools)})")
        return tool.input
    if name is not None:
        raise TypeError("a tool name goes with a Catalog only")
    if isinstance(target, CompiledTool):
        return target.input
    if isinstance(target, Contract):
        return target
    return Contract.of(target)


def payloads(
    target: CompiledTool | Catalog | Contract[Any] | type, name: str | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """Valid ``arguments`` objects for a tool, as JSON values a client would send.

    ``target`` is a compiled tool, a catalog with the tool's ``name``, a
    ``Contract`` or a contract type (a ``Schema`` subclass). Each value is
    generated from the published JSON Schema and kept only if the tool's
    validator accepts it, so schema-expressible constraints shape the data and
    custom validators only filter it.
    """
    contract = _contract_of(target, name)
    try:
        base = from_json_schema(contract.json_schema)
    except UnsupportedSchemaError:
        base = st.from_type(contract.type).map(contract.dump)

    def valid(value: Any) -> bool:
        return isinstance(value, dict) and _validates(contract, value)

    return base.map(roundtrip).filter(valid)


def accepts(contract: Contract[Any], value: Any) -> bool:
    """Whether the contract accepts ``value`` as the server would (after a JSON round trip)."""
    return _validates(contract, roundtrip(value))


def wire_validated(contract: Contract[Any], value: Any) -> Any:
    """``value`` validated as the server validates arguments: with JSON semantics.

    Asked of pydantic directly, so a check built on it stays independent of the
    server's own validation call. Raises pydantic's ``ValidationError``.
    """
    return contract.adapter.validate_json(to_json(value))


def _validates(contract: Contract[Any], value: Any) -> bool:
    try:
        wire_validated(contract, value)
    except ValidationError:
        return False
    return True


__all__ = [
    "UnsupportedSchemaError",
    "accepts",
    "from_json_schema",
    "payloads",
    "wire_validated",
]
