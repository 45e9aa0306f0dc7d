"""The comparison itself can fail: deliberate differences between the two sides are found,
and the normalisation only hides what legitimately differs (incident ids, server identity,
the input model's name)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from tests.parity.cases import ARGUMENTS
from tests.parity.kit import (
    MODERN,
    Arg,
    Call,
    Case,
    Scoped,
    Unit,
    assert_same,
    check_expectations,
    differences,
    kind_of,
    normalise_entry,
    normalise_result,
    serve,
)

pytestmark = pytest.mark.anyio

BASE = Case(
    "selfcheck",
    fields=(Arg("name", str),),
    inject={"unit": Unit},
    body=lambda args, injected: f"hello {args['name']}",
    calls=(Call({"name": "a"}, "ok"),),
)


def answer(text: str) -> Any:
    def body(args: Mapping[str, Any], injected: Mapping[str, Any]) -> str:
        return text

    return body


async def test_a_different_result_is_found() -> None:
    classes = await serve(BASE, "class", MODERN)
    functions = await serve(dataclasses.replace(BASE, body=answer("goodbye")), "function", MODERN)
    with pytest.raises(AssertionError, match=r"\[0\]\.content\[0\]\.text: class 'hello a'"):
        assert_same(classes.calls, functions.calls, "calls")


async def test_an_error_instead_of_a_result_is_found() -> None:
    def fails(args: Mapping[str, Any], injected: Mapping[str, Any]) -> str:
        raise RuntimeError("deliberate")

    classes = await serve(BASE, "class", MODERN)
    functions = await serve(dataclasses.replace(BASE, body=fails), "function", MODERN)
    found = differences(classes.calls, functions.calls)
    assert "[0].isError: class False != function True" in found
    with pytest.raises(AssertionError, match="outcomes"):
        check_expectations(BASE, functions, "function")


async def test_a_different_listing_is_found() -> None:
    classes = await serve(BASE, "class", MODERN)
    functions = await serve(dataclasses.replace(BASE, doc="Another tool."), "function", MODERN)
    assert differences(classes.listed, functions.listed) == [
        "[0].description: class 'A parity tool.' != function 'Another tool.'"
    ]
    schema = dataclasses.replace(BASE, fields=(Arg("name", str), Arg("extra", int, 1)))
    other = await serve(schema, "function", MODERN)
    assert any(
        "inputSchema.properties.extra: only in function" in d
        for d in differences(classes.listed, other.listed)
    )


async def test_a_different_journal_is_found() -> None:
    classes = await serve(BASE, "class", MODERN)
    functions = await serve(
        dataclasses.replace(BASE, inject={"scoped": Scoped}), "function", MODERN
    )
    assert classes.journal == ["open unit#1", "commit unit#1"]
    with pytest.raises(AssertionError, match="journal"):
        assert_same(classes.journal, functions.journal, "journal")


async def test_a_missing_finalizer_is_found() -> None:
    observed = await serve(BASE, "class", MODERN)
    observed.journal = observed.journal[:1]
    with pytest.raises(AssertionError, match="finalizer once"):
        check_expectations(BASE, observed, "class")


def test_only_incident_ids_and_server_identity_are_normalised() -> None:
    def failed(incident: str, server: str) -> dict[str, Any]:
        return {
            "result": {
                "content": [
                    {"type": "text", "text": f"Tool execution failed (incident {incident})"}
                ],
                "isError": True,
                "_meta": {
                    "incident": incident,
                    "io.modelcontextprotocol/serverInfo": {"name": server},
                },
            }
        }

    one = normalise_result(failed("0123456789ab", "classes"))
    other = normalise_result(failed("ba9876543210", "mcp-adapter"))
    assert one == other
    assert kind_of(one) == "failed"
    message = failed("0123456789ab", "x")
    message["result"]["content"][0]["text"] = "Tool execution failed (incident 0123456789ab)!"
    assert normalise_result(message) != one
    assert normalise_result({"error": {"code": -32602, "message": "Unknown tool: a"}}) != (
        normalise_result({"error": {"code": -32602, "message": "Unknown tool: b"}})
    )


def test_only_the_input_models_title_is_normalised() -> None:
    entry = {"name": "t", "inputSchema": {"title": "tInput", "type": "object", "properties": {}}}
    renamed = {**entry, "inputSchema": {**entry["inputSchema"], "title": "tArguments"}}
    assert normalise_entry(entry) == normalise_entry(renamed)
    described = {**entry, "description": "x"}
    assert differences(normalise_entry(entry), normalise_entry(described)) == [
        "description: only in function: 'x'"
    ]


def test_lists_of_different_lengths_differ() -> None:
    assert differences([1, 2], [1]) == [": class [1, 2] != function [1]"]
    assert differences({"a": 1}, {"a": 1}) == []
    assert differences(1, True) != []  # equal in Python, not on the wire


def test_every_argument_case_can_be_refused() -> None:
    """Each argument family sends at least one invalid call, so its schema is exercised."""
    assert all(any(call.expect == "invalid" for call in case.calls) for case in ARGUMENTS)
