"""Stateful 2025-11-25 sessions across two ``serve --stateful --redis`` replicas: haproxy
keeps each session on the replica that made it (affinity by ``Mcp-Session-Id``, the
configuration docs/deployment.md shows), and the sessions' resumable streams keep their
events in Redis, each session replaying only its own.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
import redis
from mcp import types

from tests.replicas.cluster import Cluster, cluster
from tests.replicas.test_replicas import ADA, BOB, TIMEOUT, connect, text
from tests.serving.test_events import HEADERS, Event, ids_of, open_session, resume, sse_events

pytestmark = pytest.mark.anyio

EVENTS = "mcp_adapter:replicas:events"


@pytest.fixture(scope="module")
def sticky(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("sticky"), count=2, stateful=True) as running:
        yield running


async def test_a_session_keeps_to_its_replica_and_its_server_requests_reach_it(
    sticky: Cluster,
) -> None:
    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(TIMEOUT):
        async with connect(sticky.url, ADA, mode="legacy", elicitation_callback=answer) as ada:
            where = {text(await ada.call_tool("where", {})) for _ in range(4)}
            asked = text(await ada.call_tool("ask-twice", {}))
    (replica,) = where
    assert asked == f"accept {replica},{replica},{replica}"


async def test_a_session_hears_of_changes_announced_on_the_other_replica(sticky: Cluster) -> None:
    """A 2025-11-25 session subscribed to a resource through the balancer hears of its
    updates announced on either replica, on its own session stream."""
    heard_send, heard = anyio.create_memory_object_stream[str](10)

    async def message(incoming: Any) -> None:
        if getattr(incoming, "method", None) == "notifications/resources/updated":
            await heard_send.send(incoming.params.uri)

    with anyio.fail_after(TIMEOUT), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # subscribe_resource is deprecated at 2026-07-28
        async with connect(sticky.url, ADA, mode="legacy", message_handler=message) as ada:
            await ada.subscribe_resource("notes://public")
            for replica in sticky.replicas:
                async with connect(replica.url, ADA) as announcer:
                    await announcer.call_tool("touch", {"uri": "notes://public"})
                assert await heard.receive() == "notes://public"


def where(http: httpx2.Client, url: str, session: str) -> list[Event]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "where"}}
    answer = http.post(url, json=body, headers={"mcp-session-id": session})
    assert answer.status_code == 200, answer.text
    return list(sse_events(iter([*answer.text.splitlines(), ""])))


def test_events_live_in_redis_and_each_session_replays_only_its_own(sticky: Cluster) -> None:
    store = redis.Redis.from_url(sticky.redis.url)
    sessions: dict[str, tuple[str, list[Event]]] = {}
    clients = {
        name: httpx2.Client(timeout=TIMEOUT, headers={**HEADERS, "authorization": f"Bearer {t}"})
        for name, t in (("ada", ADA), ("bob", BOB))
    }
    try:
        for name, http in clients.items():
            session = open_session(http, sticky.url)
            sessions[name] = (session, where(http, sticky.url, session))
        ada_session, ada_events = sessions["ada"]
        bob_session, bob_events = sessions["bob"]
        assert len(ids_of(ada_events)) == 2, ada_events  # priming, result
        for event_id in ids_of(ada_events) + ids_of(bob_events):
            assert store.exists(f"{EVENTS}:event:{event_id}")
        # Bob, on any replica, with Ada's ids: nothing
        for copied in ids_of(ada_events):
            assert resume(clients["bob"], sticky.url, bob_session, copied) == []
        # Ada resumes her own stream: her result again
        priming = ids_of(ada_events)[0]
        replayed = resume(clients["ada"], sticky.url, ada_session, priming)
        assert [json.loads(data)["result"] for data in replayed] == [
            json.loads(ada_events[-1][1])["result"]
        ]
        ended = clients["ada"].delete(sticky.url, headers={"mcp-session-id": ada_session})
        assert ended.status_code == 200, ended.text
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(_until_gone, store, ids_of(ada_events))
        for event_id in ids_of(bob_events):
            assert store.exists(f"{EVENTS}:event:{event_id}")
    finally:
        for http in clients.values():
            http.close()
        store.close()


async def _until_gone(store: redis.Redis, event_ids: list[str]) -> None:
    with anyio.fail_after(TIMEOUT):
        while any(store.exists(f"{EVENTS}:event:{event_id}") for event_id in event_ids):
            await anyio.sleep(0.05)
