"""The ASGI wrappers `http_app` puts around the SDK endpoint: by hand, and over uvicorn."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import httpx2
import pytest
from starlette.types import Message, Receive, Scope, Send

from mcp_adapter.serving import http_app
from mcp_adapter.serving.http import CancelOnDisconnect
from tests.reliability.fuzz import MODERN, envelope
from tests.reliability.loadapp import Ledger, LoadServer, build_container
from tests.reliability.transports import http_headers
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

ERAS = (MODERN, "2025-11-25")
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


async def answer(send: Send, body: bytes = b"{}") -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


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


async def test_an_app_that_never_reads_the_body_is_left_alone() -> None:
    channel = Channel(b"{}")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, b"refused")

    with anyio.fail_after(WAIT):
        await CancelOnDisconnect(app)(SCOPE, channel.receive, channel.send)
    assert channel.reads == 0
    assert channel.sent[-1]["body"] == b"refused"


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
