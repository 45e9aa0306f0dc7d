"""The ASGI wrappers `http_app` puts around the SDK endpoint: by hand, and over uvicorn."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import httpx2
import pytest
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from container import Container
from mcp_adapter.serving import disconnect, http_app
from mcp_adapter.serving.disconnect import CancelOnDisconnect
from mcp_adapter.serving.invalid_requests import CleanInvalidRequests, RefuseInvalidIds
from tests.reliability.fuzz import LEGACY, MODERN, envelope
from tests.reliability.loadapp import Ledger, LoadServer, build_container
from tests.reliability.servers import FuzzServer
from tests.reliability.transports import http_headers
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

ERAS = (MODERN, LEGACY)
SCOPE: Scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
WAIT = 30.0
"""Bounds every wait of these tests; none of them depends on it."""


class Channel:
    """An ASGI connection driven by the test: the body, then a disconnect when told."""

    def __init__(self, *chunks: bytes) -> None:
        self.pending: list[Message] = [
            {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
            for i, chunk in enumerate(chunks)
        ]
        self.gone = anyio.Event()
        self.told_gone = anyio.Event()
        self.sent: list[Message] = []
        self.reads = 0

    async def receive(self) -> Message:
        self.reads += 1
        if self.pending:
            return self.pending.pop(0)
        await self.gone.wait()
        self.told_gone.set()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.gone.set()  # what an ASGI server reports once the response is complete


async def read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        assert message["type"] == "http.request"
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


@pytest.fixture(params=["asyncio task", "task group"])
def watcher(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways CancelOnDisconnect watches: a plain asyncio task, or (under trio) a task group."""
    if request.param == "task group":
        monkeypatch.setattr(disconnect, "_asyncio_loop", lambda: None)
    return str(request.param)


async def answer(send: Send, body: bytes = b"{}") -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


@pytest.mark.usefixtures("watcher")
async def test_a_disconnect_after_the_body_cancels_the_request() -> None:
    channel = Channel(b'{"a":', b"1}")
    seen: list[object] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(await read_body(receive))
        try:
            await anyio.sleep_forever()
        finally:
            seen.append("cancelled")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(CancelOnDisconnect(app), SCOPE, channel.receive, channel.send)
        with anyio.fail_after(WAIT):
            while not seen:
                await anyio.sleep(0.01)
        channel.gone.set()  # the client goes away mid-call
    assert seen == [b'{"a":1}', "cancelled"]
    assert channel.sent == []


@pytest.mark.usefixtures("watcher")
async def test_the_apps_own_receive_sees_the_disconnect() -> None:
    channel = Channel(b"{}")
    seen: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        seen.append("read")
        message = await receive()  # as sse-starlette does, to notice a disconnect
        seen.append(message["type"])
        await anyio.sleep_forever()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(CancelOnDisconnect(app), SCOPE, channel.receive, channel.send)
        with anyio.fail_after(WAIT):
            while not seen:
                await anyio.sleep(0.01)
        channel.gone.set()
    assert seen == ["read", "http.disconnect"]


@pytest.mark.usefixtures("watcher")
async def test_work_after_a_complete_answer_is_not_cancelled() -> None:
    """The SDK answers a notification 202 first and delivers it afterwards."""
    channel = Channel(b"{}")
    delivered = anyio.Event()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        await answer(send)
        await channel.told_gone.wait()  # the wrapper has read the end of the exchange
        await anyio.sleep(0)
        delivered.set()

    with anyio.fail_after(WAIT):
        await CancelOnDisconnect(app)(SCOPE, channel.receive, channel.send)
    assert delivered.is_set()
    assert [m["type"] for m in channel.sent] == ["http.response.start", "http.response.body"]


@pytest.mark.usefixtures("watcher")
async def test_an_app_that_never_reads_the_body_is_left_alone() -> None:
    channel = Channel(b"{}")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, b"refused")

    with anyio.fail_after(WAIT):
        await CancelOnDisconnect(app)(SCOPE, channel.receive, channel.send)
    assert channel.reads == 0
    assert channel.sent[-1]["body"] == b"refused"


@pytest.mark.usefixtures("watcher")
async def test_an_apps_exception_propagates_as_itself() -> None:
    channel = Channel(b"{}")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        raise LookupError("boom")

    with anyio.fail_after(WAIT), pytest.raises(LookupError, match="boom"):
        await CancelOnDisconnect(app)(SCOPE, channel.receive, channel.send)


async def test_a_lifespan_scope_passes_through() -> None:
    calls: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        calls.append(scope["type"])

    async def receive() -> Message:
        raise AssertionError("not read")

    async def send(message: Message) -> None:
        raise AssertionError("not sent")

    await CancelOnDisconnect(app)({"type": "lifespan"}, receive, send)
    assert calls == ["lifespan"]


@pytest.mark.parametrize("era", ERAS)
async def test_json_mode_cancels_a_call_whose_client_left_in_both_eras(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.CRITICAL)
    ledger = Ledger()
    params: dict[str, Any] = {"name": "slow", "arguments": {"key": era}}
    if era == MODERN:
        params["_meta"] = envelope()
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    app = http_app(LoadServer, build_container(ledger), json_response=True)
    with serve_app(app) as base:
        try:
            async with httpx2.AsyncClient(timeout=WAIT) as http, anyio.create_task_group() as tg:

                async def post() -> None:
                    await http.post(f"{base}/mcp", content=text, headers=http_headers(text, era))

                tg.start_soon(post)
                with anyio.fail_after(WAIT):
                    while era not in ledger.started or not ledger.started[era].is_set():
                        await anyio.sleep(0.01)
                tg.cancel_scope.cancel()  # the client drops the connection
            with anyio.fail_after(WAIT):
                while not ledger.finalized:
                    await anyio.sleep(0.01)
            assert len(ledger.cancelled) == 1, "the handler was cancelled, not left running"
            assert ledger.live == set()
        finally:
            ledger.release.set()


# -- CleanInvalidRequests -------------------------------------------------------------------------

INVALID_REQUEST = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Invalid Request"},
}
SDK_VALIDATION_ERROR = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {
        "code": -32602,
        "message": "Validation error: 4 validation errors for union[JSONRPCRequest,...] "
        "[type=string_type, input_value=5, input_type=int]",
    },
}


async def sent_by(app: Any) -> list[Message]:
    channel = Channel(b"{}")
    with anyio.fail_after(WAIT):
        await CleanInvalidRequests(app)(SCOPE, channel.receive, channel.send)
    return channel.sent


def replying(response: Response) -> Any:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await response(scope, receive, send)

    return app


def decoded_reply(sent: list[Message]) -> tuple[int, dict[bytes, bytes], bytes]:
    start, *bodies = sent
    body = b"".join(m.get("body", b"") for m in bodies)
    return start["status"], {bytes(k): bytes(v) for k, v in start["headers"]}, body


async def test_the_sdks_validation_error_becomes_invalid_request() -> None:
    sdk = Response(
        json.dumps(SDK_VALIDATION_ERROR),
        status_code=400,
        headers={"mcp-session-id": "abc"},
        media_type="application/json",
    )
    status, headers, body = decoded_reply(await sent_by(replying(sdk)))
    assert status == 400
    assert json.loads(body) == INVALID_REQUEST
    assert headers[b"content-length"] == str(len(body)).encode()
    assert headers[b"mcp-session-id"] == b"abc"
    assert headers[b"content-type"].startswith(b"application/json")


@pytest.mark.parametrize(
    "response",
    [
        Response(json.dumps({**SDK_VALIDATION_ERROR, "id": 7}), 400, media_type="application/json"),
        Response(
            json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "P"}}),
            400,
            media_type="application/json",
        ),
        Response(json.dumps(SDK_VALIDATION_ERROR), 404, media_type="application/json"),
        Response(json.dumps(SDK_VALIDATION_ERROR), 400, media_type="text/plain"),
        Response(b"[" * 10_000, 400, media_type="application/json"),
        Response("Invalid Content-Type header", 400),
    ],
    ids=["with an id", "parse error", "not 400", "not json", "deep", "plain text"],
)
async def test_other_answers_pass_unchanged(response: Response) -> None:
    expected = decoded_reply(await sent_by_plain(response))
    assert decoded_reply(await sent_by(replying(response))) == expected


async def sent_by_plain(response: Response) -> list[Message]:
    channel = Channel(b"{}")
    await response(SCOPE, channel.receive, channel.send)
    return channel.sent


async def test_a_large_answer_is_never_held() -> None:
    chunk = b"x" * 65_536
    seen_before_body: list[int] = []
    channel = Channel(b"{}")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % (4 * len(chunk))),
        ]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        seen_before_body.append(len(channel.sent))
        for i in range(4):
            await send({"type": "http.response.body", "body": chunk, "more_body": i < 3})
            seen_before_body.append(len(channel.sent))

    with anyio.fail_after(WAIT):
        await CleanInvalidRequests(app)(SCOPE, channel.receive, channel.send)
    assert seen_before_body == [1, 2, 3, 4, 5], "every message went out as it was sent"


async def test_an_answer_longer_than_it_declared_is_let_through() -> None:
    channel = Channel(b"{}")
    chunk = b"y" * 10_000

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"100")]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        for i in range(3):
            await send({"type": "http.response.body", "body": chunk, "more_body": i < 2})

    with anyio.fail_after(WAIT):
        await CleanInvalidRequests(app)(SCOPE, channel.receive, channel.send)
    status, headers, body = decoded_reply(channel.sent)
    assert (status, headers[b"content-length"], body) == (400, b"100", chunk * 3)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"json_response": True},
        {"stateless": False},
        {"stateless": False, "json_response": True},
    ],
    ids=["sse", "json", "stateful-sse", "stateful-json"],
)
def test_over_http_json_that_is_no_message_is_an_invalid_request(options: dict[str, bool]) -> None:
    bodies = [
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        5,
    ]
    with (
        serve_app(http_app(FuzzServer, Container(), **options)) as base,
        httpx2.Client(timeout=WAIT) as http,
    ):
        for value in bodies:
            text = json.dumps(value)
            response = http.post(f"{base}/mcp", content=text, headers=http_headers(text, LEGACY))
            assert response.status_code == 400, response.text
            assert response.json() == INVALID_REQUEST, value


# -- RefuseInvalidIds -----------------------------------------------------------------------------

LIMIT = 1024
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
BAD_ID = b'{"jsonrpc": "2.0", "id": true, "method": "ping", "params": {}}'


def post(*headers: tuple[bytes, bytes]) -> Scope:
    return {**SCOPE, "headers": [(b"content-type", b"application/json"), *headers]}


async def received_by_the_sdk(scope: Scope, channel: Channel) -> list[Message]:
    """What the wrapped app reads through ``RefuseInvalidIds``, and when it was called."""
    seen: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append({"type": "called", "reads": channel.reads})
        while True:
            message = await receive()
            seen.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        await answer(send)

    with anyio.fail_after(WAIT):
        await RefuseInvalidIds(app, LIMIT)(scope, channel.receive, channel.send)
    return seen


@pytest.mark.parametrize(
    "bad_id", [True, False, [1], {"n": 1}, None, 1.5, 2.0], ids=lambda v: json.dumps(v)
)
async def test_a_body_with_an_invalid_id_reaches_the_sdk_as_no_message(bad_id: object) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "ping"}).encode()
    seen = await received_by_the_sdk(post(), Channel(text[:10], text[10:]))
    assert seen[1:] == [{"type": "http.request", "body": b"null", "more_body": False}]


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": "1", "method": "ping"}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "id": tr',
        b"[" * 5_000,
    ],
    ids=["int id", "str id", "notification", "not json", "deep"],
)
async def test_other_bodies_reach_the_sdk_as_they_came(body: bytes) -> None:
    seen = await received_by_the_sdk(post(), Channel(body[:7], body[7:]))
    assert b"".join(m["body"] for m in seen[1:]) == body


async def test_a_body_over_the_limit_is_not_held_past_the_limit() -> None:
    chunk = b" " * 400  # JSON whitespace: the body would be a bad-id request but for its size
    channel = Channel(BAD_ID[:-1], *[chunk] * 10, b"}")
    seen = await received_by_the_sdk(post(), channel)
    assert seen[0] == {"type": "called", "reads": 4}, "read up to the limit, then handed on"
    assert b"".join(m["body"] for m in seen[1:]) == BAD_ID[:-1] + chunk * 10 + b"}"


@pytest.mark.parametrize(
    "scope",
    [
        post((b"content-length", b"%d" % (LIMIT + 1))),
        post((b"mcp-protocol-version", b"2026-07-28")),
        {**post(), "method": "GET"},
    ],
    ids=["declared too large", "2026-07-28", "not a POST"],
)
async def test_what_is_not_screened_is_not_read_first(scope: Scope) -> None:
    seen = await received_by_the_sdk(scope, Channel(BAD_ID))
    whole = {"type": "http.request", "body": BAD_ID, "more_body": False}
    assert seen == [{"type": "called", "reads": 0}, whole]


async def test_a_client_that_leaves_mid_upload_is_handed_on() -> None:
    channel = Channel(BAD_ID[:5], BAD_ID[5:])
    channel.pending.pop()  # the rest never comes
    channel.gone.set()
    seen = await received_by_the_sdk(post(), channel)
    assert [m["type"] for m in seen] == ["called", "http.request", "http.disconnect"]


@pytest.mark.parametrize(
    "options",
    [{}, {"json_response": True}, {"stateless": False}],
    ids=["sse", "json", "stateful"],
)
@pytest.mark.parametrize("version", [LEGACY, None], ids=["2025-11-25", "no version header"])
def test_over_http_a_request_with_an_invalid_id_is_an_invalid_request(
    options: dict[str, bool], version: str | None
) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if version is not None:
        headers["mcp-protocol-version"] = version
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    with (
        serve_app(http_app(FuzzServer, Container(), **options)) as base,
        httpx2.Client(timeout=WAIT, headers=headers) as http,
    ):
        if options.get("stateless") is False:  # inside a session, as its client would send them
            opened = http.post(f"{base}/mcp", json=INITIALIZE)
            assert opened.status_code == 200, opened.text
            http.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        for bad_id in (True, [1], {"n": 1}, None, 1.5):
            body = {"jsonrpc": "2.0", "id": bad_id, "method": "ping", "params": {}}
            response = http.post(f"{base}/mcp", json=body)
            assert response.status_code == 400, (bad_id, response.status_code, response.text)
            assert response.json() == INVALID_REQUEST, bad_id
        assert http.post(f"{base}/mcp", json=notification).status_code == 202
        # The SDK's own checks still come first.
        wrong_host = http.post(f"{base}/mcp", content=BAD_ID, headers={"host": "evil.example"})
        assert wrong_host.status_code == 421
        wrong_accept = http.post(f"{base}/mcp", content=BAD_ID, headers={"accept": "text/plain"})
        assert wrong_accept.status_code == 406
