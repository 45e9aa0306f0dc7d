"""Schema separation as a property, over generated tools.

Random payload contracts (nested models, optional fields, lists, unions, maps,
defaults, constraints) and random injected parameters (scoped, singleton,
transient services and ``McpRequest``), as class tools and as ``@tool``
methods of an extension. For each generated tool:

- the published ``inputSchema`` never names an injected parameter;
- every payload generated from that schema validates and reaches the handler,
  with every injected parameter filled by the server;
- a payload carrying an injected parameter's name as a key never replaces it;
- invalid payloads never reach the handler.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st

from mcp_adapter import Catalog, McpRequest, compile_server
from mcp_adapter.compiled.catalog import CompiledTool
from mcp_adapter.declare.request import freeze
from mcp_adapter.testing import McpResult, McpTestClient, from_json_schema
from tests.reliability.conftest import BOUNDED, ERAS
from tests.reliability.generated import Built, class_tools, extension_tools

PLANTED = "planted-by-the-client"


def _catalog(built: Built) -> Catalog:
    if built.platform is not None:
        catalog: Catalog = built.platform.compile(built.container)
        return catalog
    return compile_server(built.server, built.container)


def _properties(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties") or {})


def _said(result: McpResult) -> str:
    return json.dumps(result.message)


def _check_schema(built: Built, tool: CompiledTool) -> None:
    for entry in (tool.modern, tool.legacy):
        names = _properties(entry.input_schema)
        assert entry.input_schema == tool.input.json_schema
        if built.platform is None:
            # a class tool receives the payload whole: only the contract's own fields are named
            assert names == _properties(tool.input.json_schema)
            assert (set(built.injected) & names) <= built.fields()
        else:
            assert not set(built.injected) & names
            assert names == built.fields()


def _check_received(built: Built, tool: CompiledTool, sent: dict[str, Any]) -> None:
    assert len(built.calls) == 1, "the payload did not reach the handler exactly once"
    received = built.calls[0]
    for name, kind in built.injected.items():
        assert isinstance(received[name], kind), f"{name} is {type(received[name])}, not {kind}"
        if kind is McpRequest:
            assert received[name].arguments == freeze(sent)
    expected, errors = tool.input.check_wire(sent)
    assert not errors
    if built.platform is None:
        assert tool.input.dump(received["payload"]) == tool.input.dump(expected)
    else:
        for argument in built.fields():
            assert received[argument] == getattr(expected, argument)


def _mutations(payload: dict[str, Any], required: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    wrong: st.SearchStrategy[Any] = st.sampled_from(
        [{"x": [PLANTED]}, [PLANTED, {}], PLANTED, True, 1.5, None]
    )
    options = [st.just({**payload, "not_a_field": PLANTED})]
    if payload:
        options.append(
            st.tuples(st.sampled_from(sorted(payload)), wrong).map(
                lambda kv: {**payload, kv[0]: kv[1]}
            )
        )
    present = [name for name in required if name in payload]
    if present:
        options.append(
            st.sampled_from(present).map(lambda k: {n: v for n, v in payload.items() if n != k})
        )
    return st.one_of(options)


def _exercise(built: Built, data: st.DataObject) -> None:
    catalog = _catalog(built)
    tool = catalog.tools[built.name]
    _check_schema(built, tool)
    era = data.draw(st.sampled_from(ERAS), label="era")
    payload = data.draw(from_json_schema(tool.modern.input_schema).map(_roundtrip), label="payload")
    # a class tool's payload field may share a name with an injected parameter: the first
    # call covers it (the field stays in the payload, the parameter gets the service)
    outside = sorted(set(built.injected) - built.fields())
    injected = data.draw(st.sampled_from(outside), label="injected name") if outside else None
    required = list(tool.input.json_schema.get("required", ()))
    bad = data.draw(_mutations(payload, required), label="invalid payload")
    anyio.run(
        _calls,
        built,
        tool,
        McpTestClient(built.container, catalog, protocol=era),
        payload,
        injected,
        bad,
    )


async def _calls(
    built: Built,
    tool: CompiledTool,
    client: McpTestClient,
    payload: dict[str, Any],
    injected: str | None,
    bad: dict[str, Any],
) -> None:
    # every payload generated from the published schema validates and reaches the handler
    errors = tool.input.check_wire(payload)[1]
    assert not errors, f"the schema allows a payload the validator rejects: {errors}"
    (await client.tool(built.name, payload)).assertOk()
    _check_received(built, tool, payload)

    # an injected parameter's name as a payload key never replaces the injected value
    if injected is not None:
        built.calls.clear()
        sent = {**payload, injected: PLANTED}
        result = await client.tool(built.name, sent)
        result.assertError("Invalid tool arguments")
        assert built.calls == []
        assert PLANTED not in _said(result)

    # invalid payloads never reach the handler, and are not echoed
    if tool.input.check_wire(bad)[1]:
        built.calls.clear()
        result = await client.tool(built.name, bad)
        result.assertError("Invalid tool arguments")
        assert built.calls == []
        assert PLANTED not in _said(result)


def _roundtrip(value: Any) -> Any:
    return json.loads(json.dumps(value))


@BOUNDED
@given(built=class_tools(), data=st.data())
def test_generated_class_tools_keep_injected_parameters_out_of_the_payload(
    built: Built, data: st.DataObject
) -> None:
    _exercise(built, data)


@BOUNDED
@given(built=extension_tools(), data=st.data())
def test_generated_extension_tools_keep_injected_parameters_out_of_the_payload(
    built: Built, data: st.DataObject
) -> None:
    _exercise(built, data)
