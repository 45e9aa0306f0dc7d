"""Event stores: replay after a ``Last-Event-ID``, per session and stream, bounded."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from examples.conformance.app import create_app
from examples.demo.container import build_container
from examples.demo.server import DemoServer
from mcp import types
from mcp.server.streamable_http import EventId, EventMessage, EventStore, StreamId

from mcp_adapter import http_app
from mcp_adapter.serving import InMemoryEventStore, Resumability, SessionEvents
from mcp_adapter.serving.events import EVENT_OVERHEAD
from tests.serving.clients import connect
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

LEGACY = "2025-11-25"
WAIT = 30.0


def message(n: int, padding: str = "") -> types.JSONRPCNotification:
    return types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/message", params={"n": n, "padding": padding}
    )


def size_of(note: types.JSONRPCNotification) -> int:
    return EVENT_OVERHEAD + len(note.model_dump_json(by_alias=True, exclude_unset=True))


async def replayed(view: EventStore, last: EventId) -> tuple[StreamId | None, list[EventMessage]]:
    sent: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        sent.append(event)

    return await view.replay_events_after(last, send), sent


async def test_replays_only_later_events_of_the_same_stream() -> None:
    view = InMemoryEventStore().open_session()
    priming = await view.store_event("a", None)
    first = await view.store_event("a", message(1))
    await view.store_event("b", message(2))
    third = await view.store_event("a", message(3))

    stream, sent = await replayed(view, priming)
    assert stream == "a"
    assert [event.event_id for event in sent] == [first, third]
    assert [event.message for event in sent] == [message(1), message(3)]
    assert await replayed(view, "unknown") == (None, [])


async def test_event_ids_are_random_128_bit_tokens() -> None:
    ids: list[str] = []
    for store in (InMemoryEventStore(), InMemoryEventStore()):
        view = store.open_session()
        ids += [await view.store_event("1", message(n)) for n in range(50)]
    assert len(set(ids)) == len(ids)
    for event_id in ids:
        assert not event_id.isdigit()
        assert len(base64.urlsafe_b64decode(event_id + "==")) == 16


async def test_a_session_replays_none_of_another_sessions_events() -> None:
    store = InMemoryEventStore()
    alice, bob = store.open_session(), store.open_session()
    alice_priming = await alice.store_event("1", None)
    alice_result = await alice.store_event("1", message(1))
    bob_priming = await bob.store_event("1", None)
    bob_result = await bob.store_event("1", message(2))

    assert await replayed(bob, alice_priming) == (None, [])
    assert await replayed(alice, bob_priming) == (None, [])
    stream, sent = await replayed(alice, alice_priming)
    assert (stream, [e.event_id for e in sent]) == ("1", [alice_result])
    stream, sent = await replayed(bob, bob_priming)
    assert (stream, [e.event_id for e in sent]) == ("1", [bob_result])


async def test_a_closed_session_forgets_its_events() -> None:
    store = InMemoryEventStore()
    view = store.open_session()
    priming = await view.store_event("1", None)
    await view.store_event("1", message(1))
    await view.close()
    assert await replayed(view, priming) == (None, [])
    assert store.log.size == 0


async def test_a_stream_keeps_its_last_events_and_others_keep_theirs() -> None:
    view = InMemoryEventStore(max_events_per_stream=2).open_session()
    quiet = await view.store_event("quiet", None)
    quiet_result = await view.store_event("quiet", message(0))
    oldest = await view.store_event("busy", message(1))
    second = await view.store_event("busy", message(2))
    third = await view.store_event("busy", message(3))

    assert await replayed(view, oldest) == (None, [])
    stream, sent = await replayed(view, second)
    assert (stream, [e.event_id for e in sent]) == ("busy", [third])
    stream, sent = await replayed(view, quiet)
    assert (stream, [e.event_id for e in sent]) == ("quiet", [quiet_result])


async def test_a_stream_keeps_at_most_its_bytes() -> None:
    big = message(1, "x" * 1000)
    store = InMemoryEventStore(max_bytes_per_stream=2 * size_of(big) + EVENT_OVERHEAD)
    view = store.open_session()
    priming = await view.store_event("a", None)
    first = await view.store_event("a", big)
    second = await view.store_event("a", big)
    assert store.log.size == EVENT_OVERHEAD + 2 * size_of(big)
    third = await view.store_event("a", big)

    assert store.log.size == 2 * size_of(big)
    assert await replayed(view, priming) == (None, [])
    assert await replayed(view, first) == (None, [])
    stream, sent = await replayed(view, second)
    assert (stream, [e.event_id for e in sent]) == ("a", [third])


async def test_an_event_larger_than_a_stream_may_hold_is_not_kept() -> None:
    store = InMemoryEventStore(max_bytes_per_stream=1024)
    view = store.open_session()
    priming = await view.store_event("a", None)
    await view.store_event("a", message(1, "x" * 2048))
    after = await view.store_event("a", message(2))

    stream, sent = await replayed(view, priming)
    assert (stream, [e.event_id for e in sent]) == ("a", [after])


async def test_over_the_global_cap_the_largest_session_loses_its_oldest_streams() -> None:
    note = message(1, "x" * 400)
    store = InMemoryEventStore(max_bytes=10 * size_of(note), max_bytes_per_stream=size_of(note))
    victim, flooder = store.open_session(), store.open_session()
    kept = [await victim.store_event(str(n), note) for n in range(3)]
    flooded = [await flooder.store_event(str(n), note) for n in range(100)]

    assert store.log.size <= store.log.max_bytes
    for event_id in kept:
        assert await store.log.locate(event_id) is not None
    assert await store.log.locate(flooded[0]) is None
    assert await store.log.locate(flooded[-1]) is not None


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_events_per_stream"):
        InMemoryEventStore(max_events_per_stream=0)
    with pytest.raises(ValueError, match="max_bytes_per_stream <= max_bytes"):
        InMemoryEventStore(max_bytes_per_stream=2048, max_bytes=1024)
    assert InMemoryEventStore().log.max_bytes <= 64 * 1024 * 1024


def test_resumability_needs_sessions() -> None:
    with pytest.raises(ValueError, match="stateless=False"):
        http_app(DemoServer, build_container(), resumability=Resumability(InMemoryEventStore()))


class SharedStore(EventStore):
    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        raise AssertionError("never used")

    async def replay_events_after(self, last_event_id: EventId, send_callback: Any) -> None:
        raise AssertionError("never used")


def test_a_store_shared_by_all_sessions_is_refused() -> None:
    with pytest.raises(TypeError, match="SessionEventStore"):
        Resumability(SharedStore())  # type: ignore[arg-type]


def test_a_retry_interval_is_not_negative() -> None:
    with pytest.raises(ValueError, match="milliseconds"):
        Resumability(InMemoryEventStore(), retry_interval=-1)
    assert Resumability(InMemoryEventStore(), retry_interval=0).retry_interval == 0


def test_session_views_are_sdk_event_stores() -> None:
    assert isinstance(InMemoryEventStore().open_session(), SessionEvents)
    assert isinstance(InMemoryEventStore().open_session(), EventStore)


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


# Two raw 2025-11-25 sessions over real HTTP, each calling greet with request id 1.

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": LEGACY,
}
Event = tuple[str | None, str]
"""An SSE event's id and data."""


def sse_events(lines: Iterator[str]) -> Iterator[Event]:
    event_id: str | None = None
    data: list[str] = []
    for line in lines:
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and (event_id is not None or data):
            yield event_id, "\n".join(data)
            event_id, data = None, []


def open_session(http: httpx2.Client, url: str) -> str:
    opened = http.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
    )
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    done = http.post(url, json=initialized, headers={"mcp-session-id": session})
    assert done.status_code == 202, done.text
    return session


def greet(http: httpx2.Client, url: str, session: str, name: str) -> list[Event]:
    """``tools/call greet`` with request id 1; the events of its SSE answer."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": name}},
    }
    answer = http.post(url, json=body, headers={"mcp-session-id": session})
    assert answer.status_code == 200, answer.text
    return list(sse_events(iter([*answer.text.splitlines(), ""])))


def resume(http: httpx2.Client, url: str, session: str, last: str) -> list[str]:
    """GET with ``Last-Event-ID``: the data of the events replayed, up to the new priming event."""
    headers = {"mcp-session-id": session, "last-event-id": last, "accept": "text/event-stream"}
    data: list[str] = []
    with http.stream("GET", url, headers=headers) as answer:
        assert answer.status_code == 200
        for _, text in sse_events(answer.iter_lines()):
            if not text:  # the priming event minted after the replay: the live tail follows
                break
            data.append(text)
    return data


def greeting(data: str) -> str:
    result = json.loads(data)["result"]
    return str(result["structuredContent"]["result"])


@dataclass
class TwoSessions:
    """Ada's and Bob's sessions on one app, each after ``greet`` as request 1."""

    http: httpx2.Client
    url: str
    store: InMemoryEventStore
    sessions: dict[str, tuple[str, list[Event]]]
    """Name -> (session id, the SSE events of its greet call)."""


@pytest.fixture
def two() -> Iterator[TwoSessions]:
    store = InMemoryEventStore()
    app = http_app(DemoServer, build_container(), stateless=False, resumability=Resumability(store))
    with serve_app(app) as base, httpx2.Client(timeout=WAIT, headers=HEADERS) as http:
        url = f"{base}/mcp"
        sessions = {}
        for name in ("Ada", "Bob"):
            session = open_session(http, url)
            sessions[name] = (session, greet(http, url, session, name))
        yield TwoSessions(http, url, store, sessions)


def ids_of(events: list[Event]) -> list[str]:
    return [event_id for event_id, _ in events if event_id]


def test_over_http_another_sessions_event_ids_replay_nothing(two: TwoSessions) -> None:
    _, ada_events = two.sessions["Ada"]
    bob, _ = two.sessions["Bob"]
    assert len(ids_of(ada_events)) == 2, ada_events  # priming, result
    for copied in ids_of(ada_events):
        assert resume(two.http, two.url, bob, copied) == []


def test_over_http_sessions_using_one_request_id_resume_only_their_own_events(
    two: TwoSessions,
) -> None:
    for name, (session, events) in two.sessions.items():
        priming, data = events[0]
        assert priming is not None
        assert data == ""
        replay = resume(two.http, two.url, session, priming)
        assert [greeting(text) for text in replay] == [greeting(events[-1][1])]
        assert name in greeting(replay[0])


async def test_over_http_an_ended_session_leaves_no_events(two: TwoSessions) -> None:
    ada, ada_events = two.sessions["Ada"]
    _, bob_events = two.sessions["Bob"]
    ended = two.http.delete(two.url, headers={"mcp-session-id": ada})
    assert ended.status_code == 200, ended.text
    # The SDK answers the DELETE, then its session task ends and the session is discarded.
    with anyio.fail_after(WAIT):
        while any([await two.store.log.locate(event_id) for event_id in ids_of(ada_events)]):
            await anyio.sleep(0.01)
    for event_id in ids_of(bob_events):
        assert await two.store.log.locate(event_id) is not None


def test_over_http_the_priming_event_carries_the_retry_interval() -> None:
    resumable = Resumability(InMemoryEventStore(), retry_interval=250)
    app = http_app(DemoServer, build_container(), stateless=False, resumability=resumable)
    with serve_app(app) as base, httpx2.Client(timeout=WAIT, headers=HEADERS) as http:
        url = f"{base}/mcp"
        session = open_session(http, url)
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        answer = http.post(url, json=body, headers={"mcp-session-id": session})
    assert answer.status_code == 200, answer.text
    assert "retry: 250" in answer.text.splitlines(), answer.text
