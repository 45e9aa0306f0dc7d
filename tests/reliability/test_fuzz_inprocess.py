"""Hostile requests through the real JSON-RPC path, in process, in both protocol eras.

``McpTestClient.send`` carries each request as JSON text through the SDK's
decoding, session and dispatch to the adapter and back. Every request must get
one well-formed answer to its id, with no traceback, file path, internal
exception text or planted secret in it, and the same server object keeps
answering correctly afterwards.
"""

from __future__ import annotations

import json
import logging

import anyio
import pytest
from hypothesis import given, settings

from mcp_adapter.testing import McpTestClient
from tests.reliability.conftest import BOUNDED
from tests.reliability.fuzz import LEGACY, MODERN, Sent, check_answer, envelope, requests
from tests.reliability.servers import SECRET, FuzzServer, container

CLIENTS = {era: McpTestClient(container(), FuzzServer, protocol=era) for era in (MODERN, LEGACY)}
"""One server per era for the whole module: state that a bad request corrupted would show."""

FUZZ = settings(BOUNDED, max_examples=300)


@pytest.fixture(autouse=True)
def _quiet_incidents(caplog: pytest.LogCaptureFixture) -> None:
    """Failing handlers are logged with tracebacks by design; keep them out of the output."""
    caplog.set_level(logging.CRITICAL, logger="mcp_adapter")


async def _still_serving(client: McpTestClient) -> None:
    (await client.tool("echo", {"text": "alive"})).assertOk().assertTextContains("alive")


def _exchange(era: str, sent: Sent) -> None:
    async def run() -> None:
        client = CLIENTS[era]
        check_answer(sent, (await client.send(sent.text)).message)
        await _still_serving(client)

    anyio.run(run)


@FUZZ
@given(sent=requests(MODERN))
def test_hostile_requests_are_answered_safely_in_2026_07_28(sent: Sent) -> None:
    _exchange(MODERN, sent)


@FUZZ
@given(sent=requests(LEGACY))
def test_hostile_requests_are_answered_safely_in_2025_11_25(sent: Sent) -> None:
    _exchange(LEGACY, sent)


def _request(era: str, method: str, params: dict[str, object], request_id: int = 7) -> Sent:
    if era == MODERN:
        params = {**params, "_meta": envelope()}
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return Sent(json.dumps(body), request_id, method)


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize(
    ("method", "params", "expect"),
    [
        ("tools/call", {"name": "boom"}, "Tool execution failed"),
        ("tools/call", {"name": "sync_boom", "arguments": {"text": "x"}}, "Tool execution failed"),
        ("tools/call", {"name": "point", "arguments": {"text": "x"}}, "Tool execution failed"),
        ("resources/read", {"uri": "fuzz://boom"}, "Resource read failed"),
        ("prompts/get", {"name": "boom_prompt"}, "Prompt failed"),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "who", "value": "boom"},
            },
            "Completion failed",
        ),
    ],
)
def test_internal_failures_never_reach_the_client(
    era: str, method: str, params: dict[str, object], expect: str
) -> None:
    sent = _request(era, method, params)

    async def run() -> None:
        message = (await CLIENTS[era].send(sent.text)).message
        check_answer(sent, message)
        assert expect in json.dumps(message)
        assert SECRET not in json.dumps(message)

    anyio.run(run)


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("depth", [1, 50, 150])
def test_deeply_nested_arguments_are_rejected_as_arguments(era: str, depth: int) -> None:
    from tests.reliability.fuzz import nested

    sent = _request(era, "tools/call", {"name": "echo", "arguments": {"text": nested(depth)}})

    async def run() -> None:
        message = (await CLIENTS[era].send(sent.text)).message
        check_answer(sent, message)
        assert "Invalid tool arguments" in json.dumps(message)

    anyio.run(run)


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_a_huge_string_is_rejected_by_its_contract_not_echoed(era: str) -> None:
    huge = "y" * 2_000_000
    sent = _request(era, "tools/call", {"name": "echo", "arguments": {"text": huge}})

    async def run() -> None:
        message = (await CLIENTS[era].send(sent.text)).message
        check_answer(sent, message)
        text = json.dumps(message)
        assert "Invalid tool arguments" in text
        assert len(text) < 2_000  # the rejected value is not echoed

    anyio.run(run)
