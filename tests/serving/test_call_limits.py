"""One client cannot exhaust what every client shares: worker threads and calls in flight.

Over real HTTP on 127.0.0.1 (uvicorn in a thread). Before: sync work ran on anyio's
default pool of 40 threads, shared by every client, with no bound on calls in flight,
and a thread-bound call that asked a 2025-11-25 client for input held its thread until
the answer came. So 40 slow sync calls of one client, or 40 unanswered confirmations
of one session, stalled every other client's sync calls (here: the other client's call
never answered, and the bounded wait failed). Now a server has its own threads
(``Server.threads``), calls in flight are bounded per client and in all
(``HttpLimits.max_calls_per_client``, ``max_calls``; a call beyond is refused at once
with ``-32004`` naming the limit), and a round that asks ends before the question.

No assertion depends on timing: a wait only bounds the test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool
from mcp_adapter.serving import BearerAuth, HttpLimits, http_app
from mcp_adapter.serving.limits import DEFAULT_MAX_CALLS_PER_CLIENT
from schemas import Schema
from tests.reliability.fuzz import LEGACY, MODERN, envelope
from tests.reliability.transports import decoded, http_headers
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

BOUND = 30.0
"""Seconds a wait may take before the test fails (a hang, not a threshold)."""
ANYIO_DEFAULT_THREADS = 40
"""What every sync call shared before: anyio's default thread limiter."""
FLOOD = ANYIO_DEFAULT_THREADS


class Gate:
    """Where the blocked handlers wait, and how many got there."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.entered = 0

    def enter(self) -> None:
        with self.lock:
            self.entered += 1
        self.release.wait(BOUND)


class Block(Tool):
    """A slow sync call: it holds a worker thread until the test releases it."""

    name = "block"

    def handle(self, gate: Gate) -> McpResponse:
        gate.enter()
        return McpResponse.text("released")


class Quick(Tool):
    """Another client's sync call."""

    name = "quick"

    def handle(self) -> McpResponse:
        return McpResponse.text("quick")


class Pause(Tool):
    """A slow async call (it holds no thread)."""

    name = "pause"

    async def handle(self, gate: Gate) -> McpResponse:
        await anyio.to_thread.run_sync(gate.enter)
        return McpResponse.text("released")


class Confirm(Schema):
    ok: bool


class ConfirmTool(Tool):
    """Thread-bound (all sync) and asks first."""

    name = "confirm"

    def handle(self, request: McpRequest) -> McpResponse:
        if request.input_responses.get("ok") is None:
            return McpResponse.elicit("Sure?", Confirm, key="ok")
        return McpResponse.text("confirmed")


class BlockTimed(Block):
    """A slow sync call with a timeout: answered at its deadline, its thread still busy."""

    name = "block_timed"
    timeout = 0.05


class Shared(Server):
    name = "shared"
    tools = (Block, Quick, Pause, BlockTimed)


class TwoThreads(Server):
    name = "two-threads"
    threads = 2
    tools = (ConfirmTool, Quick)


class Tokens:
    """``user-<n>`` is a valid token of principal ``user-<n>``."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token.startswith("user-"):
            return None
        return AccessToken(token=token, client_id="limits", subject=token, scopes=[])


def _container(gate: Gate) -> Container:
    container = Container()
    container.instance(Gate, gate)
    return container


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    try:
        yield gate
    finally:
        gate.release.set()


def _client(address: str = "127.0.0.1", connections: int = FLOOD + 2) -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    transport = httpx2.AsyncHTTPTransport(local_address=address, limits=limits)
    return httpx2.AsyncClient(transport=transport, timeout=BOUND)


async def _call(
    http: httpx2.AsyncClient, url: str, era: str, name: str, request_id: int, token: str = ""
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if era == MODERN:
        params["_meta"] = envelope()
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    text = json.dumps(body)
    headers = http_headers(text, era)
    if token:
        headers["authorization"] = f"Bearer {token}"
    response = await http.post(url, content=text, headers=headers)
    assert response.status_code == 200, response.text
    message = decoded(response)
    assert message is not None, response.text
    assert message["id"] == request_id, response.text
    return message


async def _until(condition: Any) -> None:
    with anyio.fail_after(BOUND):
        while not condition():
            await anyio.sleep(0.01)


def _refused_per_client(message: dict[str, Any], limit: int) -> bool:
    error = message.get("error")
    if error is None:
        return False
    assert error["code"] == -32004, message
    assert f"max_calls_per_client is {limit}" in error["message"], message
    assert error["data"] == {"limit": "max_calls_per_client", "value": limit}
    return True


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("by", ["address", "principal"])
async def test_one_clients_slow_sync_calls_cannot_stall_another_clients_sync_call(
    gate: Gate, era: str, by: str
) -> None:
    """``FLOOD`` slow sync calls of one client (an address, or a token's principal) while
    another client (another address, or another principal from the same address) calls."""
    auth = BearerAuth(Tokens()) if by == "principal" else None
    app = http_app(Shared, _container(gate), json_response=True, auth=auth)
    flooder, other = ("user-1", "user-2") if by == "principal" else ("", "")
    other_address = "127.0.0.1" if by == "principal" else "127.0.0.2"
    with serve_app(app) as base:
        url = f"{base}/mcp"
        answers: list[dict[str, Any]] = []
        async with _client() as http, anyio.create_task_group() as group:

            async def flood(i: int) -> None:
                answers.append(await _call(http, url, era, "block", i, flooder))

            def refused() -> int:
                return sum(_refused_per_client(a, DEFAULT_MAX_CALLS_PER_CLIENT) for a in answers)

            for i in range(FLOOD):
                group.start_soon(flood, i)
            await _until(lambda: gate.entered + refused() == FLOOD)
            async with _client(other_address) as elsewhere:
                with anyio.fail_after(BOUND):
                    quick = await _call(elsewhere, url, era, "quick", 10_000, other)
            assert quick["result"]["content"][0]["text"] == "quick"
            gate.release.set()
    assert gate.entered == DEFAULT_MAX_CALLS_PER_CLIENT
    assert refused() == FLOOD - DEFAULT_MAX_CALLS_PER_CLIENT
    released = [a for a in answers if "result" in a]
    assert len(released) == DEFAULT_MAX_CALLS_PER_CLIENT


async def test_calls_beyond_max_calls_are_refused_and_a_place_is_given_back(gate: Gate) -> None:
    """The bound in all, counted across clients; an answered call frees its place."""
    limits = HttpLimits(max_calls=3, max_calls_per_client=None)
    app = http_app(Shared, _container(gate), json_response=True, limits=limits)
    with serve_app(app) as base:
        url = f"{base}/mcp"
        answers: list[dict[str, Any]] = []
        async with anyio.create_task_group() as group:
            for i, address in enumerate(("127.0.0.1", "127.0.0.2", "127.0.0.3")):

                async def pause(i: int = i, address: str = address) -> None:
                    async with _client(address, 2) as http:
                        answers.append(await _call(http, url, MODERN, "pause", i))

                group.start_soon(pause)
            await _until(lambda: gate.entered == 3)
            async with _client("127.0.0.4", 2) as http:
                refused = await _call(http, url, LEGACY, "quick", 99)
                assert refused["error"]["code"] == -32004
                assert "max_calls is 3" in refused["error"]["message"]
                assert refused["error"]["data"] == {"limit": "max_calls", "value": 3}
                gate.release.set()
                await _until(lambda: len(answers) == 3)
                again = await _call(http, url, LEGACY, "quick", 100)
    assert [a["result"]["content"][0]["text"] for a in answers] == ["released"] * 3
    assert again["result"]["content"][0]["text"] == "quick"


async def test_a_timed_out_call_keeps_its_place_until_its_thread_returns(gate: Gate) -> None:
    """Answered at its deadline, its sync work still runs: it still counts, so a client
    cannot pile up abandoned work past its limit."""
    limits = HttpLimits(max_calls_per_client=1)
    app = http_app(Shared, _container(gate), json_response=True, limits=limits)
    with serve_app(app) as base:
        url = f"{base}/mcp"
        async with _client(connections=2) as http:
            for attempt in range(10):  # until its handler started before its deadline
                with anyio.fail_after(BOUND):
                    timed_out = await _call(http, url, MODERN, "block_timed", attempt)
                assert timed_out["result"]["isError"] is True
                assert "timed out" in timed_out["result"]["content"][0]["text"]
                probe = await _call(http, url, MODERN, "quick", 100 + attempt)
                if "error" in probe:  # its handler still runs: it still holds the place
                    assert _refused_per_client(probe, 1)
                    break
                assert gate.entered == 0, "only a handler that never started frees it"
            else:
                pytest.fail("no handler started before its deadline in 10 calls")
            gate.release.set()
            with anyio.fail_after(BOUND):
                while "error" in (again := await _call(http, url, MODERN, "quick", 21)):
                    assert _refused_per_client(again, 1)
                    await anyio.sleep(0.01)
    assert again["result"]["content"][0]["text"] == "quick"


# -- 2025-11-25 questions hold no thread ------------------------------------------------------

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "never-answers", "version": "0"},
    },
}
_SSE = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


async def _session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    response = await http.post(url, content=json.dumps(_INITIALIZE), headers=_SSE)
    assert response.status_code == 200, response.text
    headers = {**_SSE, "mcp-session-id": response.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = LEGACY
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    sent = await http.post(url, content=json.dumps(initialized), headers=headers)
    assert sent.status_code == 202
    return headers


async def _ask_and_never_answer(
    http: httpx2.AsyncClient, url: str, headers: dict[str, str], i: int, seen: list[str]
) -> None:
    """Call ``confirm``; note what comes first (the question, or a refusal); then hold the
    stream open without answering until the test ends."""
    body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "confirm"}}
    async with http.stream("POST", url, content=json.dumps(body), headers=headers) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("method") == "elicitation/create":
                seen.append("asked")
            elif "error" in message:
                assert _refused_per_client(message, DEFAULT_MAX_CALLS_PER_CLIENT)
                seen.append("refused")
                return


async def test_unanswered_2025_questions_of_one_session_hold_no_thread() -> None:
    """``FLOOD`` calls of one session wait for answers that never come, on a server with
    two threads; another client's sync call still answers."""
    app = http_app(TwoThreads, Container(), stateless=False)
    with serve_app(app) as base:
        url = f"{base}/mcp"
        seen: list[str] = []
        async with _client() as http:
            headers = await _session(http, url)
            async with anyio.create_task_group() as group:
                for i in range(1, FLOOD + 1):
                    group.start_soon(_ask_and_never_answer, http, url, headers, i, seen)
                await _until(lambda: len(seen) == FLOOD)
                async with _client("127.0.0.2", 2) as elsewhere:
                    with anyio.fail_after(BOUND):
                        quick = await _call(elsewhere, url, MODERN, "quick", 10_000)
                assert quick["result"]["content"][0]["text"] == "quick"
                group.cancel_scope.cancel()
    assert seen.count("asked") == DEFAULT_MAX_CALLS_PER_CLIENT
    assert seen.count("refused") == FLOOD - DEFAULT_MAX_CALLS_PER_CLIENT
