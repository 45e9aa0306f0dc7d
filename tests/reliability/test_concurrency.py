"""Many concurrent calls, cancellation and blocking handlers, in process and over HTTP.

Counts are bounded and everything listens on 127.0.0.1 only. No assertion
depends on timing: a blocked handler gives up after ``BLOCK_LIMIT`` seconds only
so that a broken build fails instead of hanging, and that shows as a wrong answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from mcp_adapter import build_sdk_server, compile_server
from mcp_adapter.serving import BearerAuth, http_app
from mcp_adapter.testing import McpTestClient
from tests.reliability.conftest import ERAS
from tests.reliability.fuzz import MODERN, envelope
from tests.reliability.loadapp import BLOCKERS, Ledger, LoadServer, NamedTokens, build_container
from tests.reliability.transports import decoded, http_headers
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

IN_PROCESS_CALLS = 1_000
HTTP_CALLS = 1_000
SETTLE = 20.0
"""The most any test waits for finalizers to have run (they normally have, at once)."""


def _check_answers(answers: list[dict[str, Any]], ledger: Ledger, count: int) -> None:
    whos = [f"caller-{i}" for i in range(count)]
    assert sorted(a["who"] for a in answers) == sorted(whos)
    for answer in answers:
        assert answer["owner"] == answer["who"], answer  # nobody else touched this scope
        assert answer["arguments_who"] == answer["who"], answer  # its own McpRequest
        assert answer.get("same_state", True), answer  # one RequestState per scope
    states = [a["state"] for a in answers]
    assert len(set(states)) == count, "every call had its own scoped instance"
    assert ledger.opened == count
    assert sorted(ledger.finalized) == sorted(states), "every finalizer ran exactly once"
    assert ledger.live == set()
    assert ledger.settings_built == 1, "the async singleton was built once"
    assert {a["settings"] for a in answers if "settings" in a} <= {1}


async def _settled(ledger: Ledger, count: int) -> None:
    with anyio.fail_after(SETTLE):
        while len(ledger.finalized) < count:
            await anyio.sleep(0.01)


def _tasks() -> int:
    return len(asyncio.all_tasks())


@pytest.mark.parametrize("era", ERAS)
async def test_a_thousand_concurrent_calls_through_json_rpc_text(era: str) -> None:
    ledger = Ledger()
    client = McpTestClient(build_container(ledger), LoadServer, protocol=era)  # type: ignore[arg-type]
    answers: list[dict[str, Any]] = []
    before = _tasks()

    async def call(i: int) -> None:
        result = await client.tool("work", {"who": f"caller-{i}"})
        answers.append(result.assertOk().structured)

    async with anyio.create_task_group() as tg:
        for i in range(IN_PROCESS_CALLS):
            tg.start_soon(call, i)
    _check_answers(answers, ledger, IN_PROCESS_CALLS)
    assert _tasks() == before, "no task outlived its call"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_thousand_concurrent_calls_on_one_sdk_connection(mode: str) -> None:
    ledger = Ledger()
    container = build_container(ledger)
    server = build_sdk_server(compile_server(LoadServer, container), container)
    answers: list[dict[str, Any]] = []
    before = _tasks()
    async with Client(server, mode=mode) as sdk:  # type: ignore[arg-type]

        async def call(i: int) -> None:
            name = "work" if i % 4 else "sync_work"
            result = await sdk.call_tool(name, {"who": f"caller-{i}"})
            assert not result.is_error, result
            answers.append(dict(result.structured_content or {}))

        async with anyio.create_task_group() as tg:
            for i in range(IN_PROCESS_CALLS):
                tg.start_soon(call, i)
    _check_answers(answers, ledger, IN_PROCESS_CALLS)
    assert _tasks() == before


async def _cancel_mid_call(era: str, ledger: Ledger, client: McpTestClient, key: str) -> None:
    started = ledger.started.setdefault(key, anyio.Event())
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.tool, "slow", {"key": key})
        with anyio.fail_after(SETTLE):
            await started.wait()
        tg.cancel_scope.cancel()  # the client goes away mid-call


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_that_goes_away_mid_call_finalizes_its_scope(era: str) -> None:
    ledger = Ledger()
    client = McpTestClient(build_container(ledger), LoadServer, protocol=era)  # type: ignore[arg-type]
    before = _tasks()
    for round_ in range(20):
        await _cancel_mid_call(era, ledger, client, f"{era}-{round_}")
    await _settled(ledger, 20)
    assert ledger.opened == 20
    assert len(ledger.finalized) == 20, "every cancelled call's scope finalized, once"
    assert len(ledger.cancelled) == 20, "every handler saw the cancellation"
    assert ledger.live == set()
    assert _tasks() == before, "no task leaked"
    (await client.tool("work", {"who": "after"})).assertOk()


async def test_a_cancel_notification_finalizes_the_calls_scope() -> None:
    """2025-11-25: ``notifications/cancelled`` for a request in flight, on one connection."""
    ledger = Ledger()
    container = build_container(ledger)
    server = build_sdk_server(compile_server(LoadServer, container), container)
    before = _tasks()
    async with Client(server, mode="legacy") as sdk:
        for round_ in range(10):
            key = f"notified-{round_}"
            started = ledger.started.setdefault(key, anyio.Event())
            async with anyio.create_task_group() as tg:

                async def call(key: str = key) -> None:
                    with pytest.raises(Exception):  # noqa: B017 - the SDK reports the cancel its way
                        await sdk.call_tool("slow", {"key": key})

                tg.start_soon(call)
                with anyio.fail_after(SETTLE):
                    await started.wait()
                tg.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
            await _settled(ledger, round_ + 1)
        result = await sdk.call_tool("work", {"who": "after"})
        assert not result.is_error
    assert len(ledger.cancelled) == 10
    assert ledger.live == set()
    assert len(ledger.finalized) == 11
    assert _tasks() == before


@pytest.mark.parametrize("era", ERAS)
async def test_a_blocking_sync_handler_does_not_stall_the_loop(era: str) -> None:
    BLOCKERS.clear()
    client = McpTestClient(build_container(Ledger()), LoadServer, protocol=era)  # type: ignore[arg-type]
    blocked: list[list[str]] = []

    async def block(i: int) -> None:
        blocked.append((await client.tool("block", {"who": f"b{i}"})).texts)

    async with anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(block, i)
        await anyio.sleep(0)
        (await client.tool("work", {"who": "meanwhile"})).assertOk()
        (await client.tool("release")).assertTextContains("released them")
    assert blocked == [["released"]] * 4


# -- over HTTP --------------------------------------------------------------------------------


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@pytest.fixture
def served(ledger: Ledger) -> Iterator[str]:
    auth = BearerAuth(NamedTokens())
    app = http_app(LoadServer, build_container(ledger), json_response=True, auth=auth)
    with serve_app(app) as base:
        yield f"{base}/mcp"


@pytest.fixture
def served_sse(ledger: Ledger) -> Iterator[str]:
    app = http_app(LoadServer, build_container(ledger), auth=BearerAuth(NamedTokens()))
    with serve_app(app) as base:
        yield f"{base}/mcp"


def _body(era: str, method: str, params: dict[str, Any], request_id: int) -> str:
    if era == MODERN:
        params = {**params, "_meta": envelope()}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


@pytest.mark.parametrize("era", ERAS)
async def test_concurrent_http_calls_keep_scopes_and_identities_apart(
    served: str, ledger: Ledger, era: str
) -> None:
    answers: list[dict[str, Any]] = []
    limits = httpx2.Limits(max_connections=HTTP_CALLS, max_keepalive_connections=HTTP_CALLS)
    async with httpx2.AsyncClient(timeout=120, limits=limits) as http:

        async def call(i: int) -> None:
            text = _body(
                era, "tools/call", {"name": "work", "arguments": {"who": f"caller-{i}"}}, i
            )
            headers = {**http_headers(text, era), "authorization": f"Bearer user-{i}"}
            response = await http.post(served, content=text, headers=headers)
            assert response.status_code == 200, response.text
            message = decoded(response)
            assert message is not None
            assert message["id"] == i
            structured = message["result"]["structuredContent"]
            assert structured["subject"] == f"user-{i}", "the caller's own identity"
            answers.append(structured)

        async with anyio.create_task_group() as tg:
            for i in range(HTTP_CALLS):
                tg.start_soon(call, i)
    await _settled(ledger, HTTP_CALLS)
    _check_answers(answers, ledger, HTTP_CALLS)


@pytest.mark.parametrize("era", ERAS)
async def test_http_without_a_valid_token_is_401(served: str, ledger: Ledger, era: str) -> None:
    text = _body(era, "tools/call", {"name": "work", "arguments": {"who": "anon"}}, 1)
    async with httpx2.AsyncClient(timeout=30) as http:
        for auth in ({}, {"authorization": "Bearer nobody"}, {"authorization": "Basic user-1"}):
            response = await http.post(
                served, content=text, headers={**http_headers(text, era), **auth}
            )
            assert response.status_code == 401
            assert "www-authenticate" in response.headers
    assert ledger.opened == 0, "no scope was opened for an unauthenticated request"


@pytest.mark.parametrize("era", ERAS)
async def test_an_http_client_that_disconnects_mid_call_finalizes_its_scope(
    served_sse: str, ledger: Ledger, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = served_sse
    caplog.set_level(logging.CRITICAL)
    rounds = 5
    for round_ in range(rounds):
        key = f"http-{era}-{round_}"
        text = _body(era, "tools/call", {"name": "slow", "arguments": {"key": key}}, round_)
        headers = {**http_headers(text, era), "authorization": "Bearer user-1"}
        async with httpx2.AsyncClient(timeout=120) as http, anyio.create_task_group() as tg:

            async def post(text: str = text, headers: dict[str, str] = headers) -> None:
                await http.post(served, content=text, headers=headers)

            tg.start_soon(post)
            with anyio.fail_after(SETTLE):
                while key not in ledger.started or not ledger.started[key].is_set():
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()  # the client drops the connection
    await _settled(ledger, rounds)
    assert len(ledger.cancelled) == rounds, "the handler was cancelled, not left running"
    assert ledger.live == set()


async def test_a_json_mode_http_client_that_disconnects_mid_call_finalizes_its_scope(
    served: str, ledger: Ledger, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.CRITICAL)
    text = _body(MODERN, "tools/call", {"name": "slow", "arguments": {"key": "json"}}, 1)
    headers = {**http_headers(text, MODERN), "authorization": "Bearer user-1"}
    async with httpx2.AsyncClient(timeout=120) as http, anyio.create_task_group() as tg:

        async def post() -> None:
            await http.post(served, content=text, headers=headers)

        tg.start_soon(post)
        with anyio.fail_after(SETTLE):
            while "json" not in ledger.started or not ledger.started["json"].is_set():
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    try:
        with anyio.move_on_after(3):  # finalization is immediate when it happens at all
            while not ledger.finalized:
                await anyio.sleep(0.01)
        assert ledger.cancelled, "the handler was cancelled"
        assert ledger.live == set()
    finally:
        ledger.release.set()  # let a still-running handler end before the server stops
