"""``requestState`` is sealed, and the answers a handler sees are the answers it asked for.

Every attack is a retry a client could send: a made-up state, a tampered one,
one replayed by another caller, with other arguments, to another tool, after
it expired, minted by a server with another key or name; answers without a
state, answers to questions nobody asked, answers outside the requested
schema; and, on 2025-11-25, ``inputResponses`` put into a ``tools/call``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import types
from mcp.server.request_state import RequestStateSecurity

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool, compile_server
from mcp_adapter.serving import BearerAuth, http_app
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.reliability.fuzz import MODERN, envelope
from tests.reliability.loadapp import NamedTokens
from tests.reliability.transports import decoded, http_headers
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

ELICITATION = {"elicitation": {"form": {}}}
INVALID = "Invalid or expired requestState"
KEY_A = "a" * 32
KEY_B = "b" * 32


class Confirm(Schema):
    ok: bool


class Target(Schema):
    target: str = "everything"


class Calls:
    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, Any], str | None]] = []
        self.deleted: list[str] = []


class DeleteTool(Tool[Target]):
    name = "delete"

    async def handle(self, payload: Target, request: McpRequest, calls: Calls) -> McpResponse:
        calls.seen.append((dict(request.input_responses), request.request_state))
        answer = request.input_responses.get("confirm")
        if answer is None:
            return McpResponse.elicit("Delete?", Confirm, key="confirm", state="asked")
        if answer["action"] == "accept" and answer["content"]["ok"]:
            calls.deleted.append(payload.target)
            return McpResponse.text(f"deleted {payload.target}")
        return McpResponse.text("kept")


class OtherTool(DeleteTool):
    name = "other"


class Desk(Server):
    name = "desk"
    tools = (DeleteTool, OtherTool)


class OtherDesk(Server):
    name = "other-desk"
    tools = (DeleteTool,)


def _client(
    server: type[Server] = Desk,
    security: RequestStateSecurity | None = None,
    **options: Any,
) -> tuple[McpTestClient, Calls]:
    container = Container()
    calls = Calls()
    container.instance(Calls, calls)
    client = McpTestClient(container, server, capabilities=ELICITATION, **options)
    if security is not None:
        from mcp_adapter.serving.lowlevel import build_sdk_server

        client.sdk_server = build_sdk_server(
            compile_server(server, container), container, request_state_security=security
        )
    return client, calls


YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


async def _state(client: McpTestClient, name: str = "delete", **arguments: Any) -> str:
    first = (await client.tool(name, arguments)).result
    assert first is not None
    assert first["resultType"] == "input_required"
    return str(first["requestState"])


async def _retry(
    client: McpTestClient,
    state: Any,
    answers: Any = YES,
    name: str = "delete",
    **arguments: Any,
) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments, "inputResponses": answers}
    if state is not None:
        params["requestState"] = state
    return await client.request("tools/call", params)


def _refused(result: Any) -> None:
    assert result.error is not None, result
    assert result.error["code"] == types.INVALID_PARAMS
    assert result.error["message"] == INVALID


async def test_an_honest_retry_passes() -> None:
    client, calls = _client()
    state = await _state(client)
    result = await _retry(client, state)
    assert result.texts == ["deleted everything"]
    assert calls.seen[-1] == ({"confirm": YES["confirm"]}, "asked")


async def test_the_state_on_the_wire_is_sealed() -> None:
    client, _ = _client()
    state = await _state(client)
    assert "asked" not in state
    assert "Delete?" not in state
    assert state != await _state(client)  # a fresh nonce each time


@pytest.mark.parametrize(
    "forged",
    ["asked", "", "v1.", "v1." + "A" * 200, json.dumps({"v": 1, "s": "asked", "q": {}}), 42, []],
)
async def test_a_made_up_state_is_refused_and_the_handler_does_not_run(forged: Any) -> None:
    client, calls = _client()
    _refused(await _retry(client, forged))
    assert calls.seen == []
    assert calls.deleted == []


async def test_a_tampered_state_is_refused() -> None:
    client, calls = _client()
    state = await _state(client)
    for index in (3, len(state) // 2, len(state) - 1):
        flipped = "A" if state[index] != "A" else "B"
        _refused(await _retry(client, state[:index] + flipped + state[index + 1 :]))
    assert calls.deleted == []


async def test_a_state_replayed_with_other_arguments_is_refused() -> None:
    client, calls = _client()
    state = await _state(client, target="drafts")
    _refused(await _retry(client, state, target="everything"))
    assert calls.deleted == []


async def test_a_state_replayed_to_another_tool_is_refused() -> None:
    client, calls = _client()
    state = await _state(client, "delete")
    _refused(await _retry(client, state, name="other"))
    assert calls.deleted == []


async def test_a_state_from_a_server_with_another_key_is_refused() -> None:
    minting, _ = _client(security=RequestStateSecurity(keys=[KEY_A]))
    state = await _state(minting)
    other, calls = _client(security=RequestStateSecurity(keys=[KEY_B]))
    _refused(await _retry(other, state))
    assert calls.seen == []


async def test_a_state_for_another_audience_is_refused() -> None:
    minting, _ = _client(OtherDesk, security=RequestStateSecurity(keys=[KEY_A]))
    state = await _state(minting)
    other, calls = _client(Desk, security=RequestStateSecurity(keys=[KEY_A]))
    _refused(await _retry(other, state))
    assert calls.seen == []


async def test_servers_sharing_a_key_ring_accept_each_others_state_across_a_rotation() -> None:
    old, _ = _client(security=RequestStateSecurity(keys=[KEY_A]))
    state = await _state(old)
    rotated, calls = _client(security=RequestStateSecurity(keys=[KEY_B, KEY_A]))
    assert (await _retry(rotated, state)).texts == ["deleted everything"]
    assert calls.deleted == ["everything"]
    retired, _ = _client(security=RequestStateSecurity(keys=[KEY_B]))
    _refused(await _retry(retired, state))


async def test_an_expired_state_is_refused() -> None:
    client, calls = _client(security=RequestStateSecurity(keys=[KEY_A], ttl=0.05))
    state = await _state(client)
    time.sleep(0.1)
    _refused(await _retry(client, state))
    assert calls.deleted == []


async def test_answers_without_a_state_are_no_answers() -> None:
    client, calls = _client()
    result = await _retry(client, None)
    assert result.result is not None
    assert result.result["resultType"] == "input_required"  # asked, not skipped
    assert calls.seen == [({}, None)]
    assert calls.deleted == []


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "accept", "content": {"ok": "yes"}},
        {"action": "accept", "content": {}},
        {"action": "accept", "content": {"ok": None}},
        {"action": "accept"},
    ],
)
async def test_an_answer_outside_the_requested_schema_is_asked_again(answer: Any) -> None:
    client, calls = _client()
    state = await _state(client)
    result = await _retry(client, state, {"confirm": answer})
    assert result.result is not None, result
    assert result.result["resultType"] == "input_required"
    assert calls.seen[-1] == ({}, "asked")
    assert calls.deleted == []


@pytest.mark.parametrize(
    "answer",
    [{"action": "accept", "content": ["ok"]}, {"action": "maybe"}, {"content": {}}, "yes", None],
)
async def test_an_answer_that_is_no_elicitation_result_is_refused(answer: Any) -> None:
    client, calls = _client()
    state = await _state(client)
    result = await _retry(client, state, {"confirm": answer})
    assert result.error is not None
    assert result.error["code"] == types.INVALID_PARAMS  # the SDK's own check of the shape
    assert len(calls.seen) == 1  # only the first round ran
    assert calls.deleted == []


async def test_answers_to_questions_nobody_asked_are_dropped() -> None:
    client, calls = _client()
    state = await _state(client)
    extra = {**YES, "admin": {"action": "accept", "content": {"ok": True}}}
    result = await _retry(client, state, extra)
    assert result.texts == ["deleted everything"]
    assert calls.seen[-1] == ({"confirm": YES["confirm"]}, "asked")


async def test_decline_content_never_reaches_the_handler() -> None:
    client, calls = _client()
    state = await _state(client)
    await _retry(client, state, {"confirm": {"action": "decline", "content": {"ok": True}}})
    assert calls.seen[-1] == ({"confirm": {"action": "decline"}}, "asked")


async def test_2025_input_responses_in_a_call_never_reach_the_handler() -> None:
    asked: list[str] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(method)
        return {"action": "decline"}

    client, calls = _client(protocol="2025-11-25", on_server_request=answer)
    result = await client.request(
        "tools/call",
        {"name": "delete", "arguments": {}, "inputResponses": YES, "requestState": None},
    )
    assert result.texts == ["kept"]
    assert asked == ["elicitation/create"]  # the server asked; the client's answer was ignored
    assert calls.seen[0] == ({}, None)
    assert calls.deleted == []


async def test_2025_an_answer_outside_the_schema_is_asked_again() -> None:
    replies = iter(
        [
            {"action": "accept", "content": {"ok": "definitely"}},
            {"action": "accept", "content": {"ok": True}},
        ]
    )
    asked: list[str] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(method)
        return next(replies)

    client, calls = _client(protocol="2025-11-25", on_server_request=answer)
    result = await client.tool("delete")
    assert result.texts == ["deleted everything"]
    assert len(asked) == 2
    assert [seen for seen, _ in calls.seen] == [{}, {}, {"confirm": YES["confirm"]}]


# -- over HTTP: the state is bound to the caller ------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    container = Container()
    container.instance(Calls, Calls())
    app = http_app(Desk, container, auth=BearerAuth(NamedTokens(), anonymous=True))
    with serve_app(app) as base:
        yield f"{base}/mcp"


def _post(url: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
    meta = envelope({"io.modelcontextprotocol/clientCapabilities": ELICITATION})
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {**params, "_meta": meta},
        }
    )
    headers = http_headers(body, MODERN)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    answer = decoded(httpx2.post(url, content=body, headers=headers, timeout=30))
    assert answer is not None
    return answer


@pytest.mark.parametrize("thief", ["user-mallory", None], ids=["other-caller", "anonymous"])
def test_another_caller_cannot_replay_a_state(served: str, thief: str | None) -> None:
    call = {"name": "delete", "arguments": {}}
    first = _post(served, call, "user-alice")
    state = first["result"]["requestState"]
    retry = {**call, "inputResponses": YES, "requestState": state}
    stolen = _post(served, retry, thief)
    assert stolen["error"]["code"] == types.INVALID_PARAMS
    assert stolen["error"]["message"] == INVALID
    honest = _post(served, retry, "user-alice")
    assert honest["result"]["content"][0]["text"] == "deleted everything"


# -- 2025-11-25: a client that never answers ----------------------------------------------------


class Held:
    """A scoped resource; it must be released when the call gives up waiting."""


class HoldingTool(Tool):
    name = "holding"

    async def handle(self, request: McpRequest, held: Held) -> McpResponse:
        if request.input_responses.get("confirm") is None:
            return McpResponse.elicit("Still there?", Confirm, key="confirm")
        return McpResponse.text("answered")


class Impatient(Server):
    name = "impatient"
    tools = (HoldingTool,)
    input_timeout = 0.2


async def test_2025_a_client_that_never_answers_releases_the_call() -> None:
    import anyio

    container = Container()
    released: list[str] = []

    def held() -> Iterator[Held]:
        yield Held()
        released.append("released")

    container.scoped(Held, held)
    waiting = anyio.Event()

    async def never(method: str, params: dict[str, Any]) -> dict[str, Any]:
        waiting.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    client = McpTestClient(
        container,
        Impatient,
        protocol="2025-11-25",
        capabilities=ELICITATION,
        on_server_request=never,
    )
    with anyio.fail_after(30):
        result = await client.tool("holding")
    assert waiting.is_set()
    result.assertError("did not answer the request for input within 0.2 s")
    assert released == ["released"]
    assert Server.input_timeout == 300.0
