"""``InMemoryEventStore``: replay after a ``Last-Event-ID``, per stream, bounded."""

from __future__ import annotations

from typing import Any

import pytest
from examples.conformance.app import create_app
from examples.demo.container import build_container
from examples.demo.server import DemoServer
from mcp import types
from mcp.server.streamable_http import EventMessage

from mcp_adapter import http_app
from mcp_adapter.serving import InMemoryEventStore
from tests.serving.clients import connect
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio


def message(n: int) -> types.JSONRPCNotification:
    return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"n": n})


async def test_replays_only_later_events_of_the_same_stream() -> None:
    store = InMemoryEventStore()
    priming = await store.store_event("a", None)
    first = await store.store_event("a", message(1))
    await store.store_event("b", message(2))
    third = await store.store_event("a", message(3))
    sent: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        sent.append(event)

    assert await store.replay_events_after(priming, send) == "a"
    assert [event.event_id for event in sent] == [first, third]
    assert await store.replay_events_after("unknown", send) is None


async def test_keeps_only_the_last_events() -> None:
    store = InMemoryEventStore(limit=2)
    oldest = await store.store_event("a", message(1))
    await store.store_event("a", message(2))
    await store.store_event("a", message(3))

    async def send(event: EventMessage) -> None:
        raise AssertionError("nothing to replay after a forgotten event")

    assert await store.replay_events_after(oldest, send) is None


def test_an_event_store_needs_sessions() -> None:
    with pytest.raises(ValueError, match="stateless=False"):
        http_app(DemoServer, build_container(), event_store=InMemoryEventStore())


class Recorder:
    """ASGI wrapper noting each HTTP request's method and ``Last-Event-ID``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, str | None]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            last = headers.get(b"last-event-id")
            self.requests.append((scope["method"], last.decode() if last else None))
        await self.app(scope, receive, send)


async def test_a_closed_stream_resumes_with_the_result() -> None:
    """A tool closes its SSE stream mid-call; the SDK client reconnects and gets the result."""
    recorder = Recorder(create_app())
    with serve_app(recorder) as base:
        async with connect(f"{base}/mcp", "legacy") as client:
            result = await client.call_tool("test_reconnection", {})
    assert [getattr(c, "text", None) for c in result.content] == [
        "Reconnection test completed successfully"
    ]
    resumed = [last for method, last in recorder.requests if method == "GET" and last]
    assert resumed, recorder.requests
