"""What one delivery costs the server: found by counting, never by a clock.

A listen stream builds its caller's ``McpRequest`` once, not per delivery, and
keeps its copy for each URI it subscribed to; the hooks still get the URI and its
template variables of each update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp.shared.subscriptions import ResourceUpdated

from container import Container
from mcp_adapter.dispatch import resources, scopes
from mcp_adapter.dispatch.threads import Threads
from mcp_adapter.notifications import Notifier
from tests.notifications.support import client, next_event, notes_catalog

pytestmark = pytest.mark.anyio

UPDATES = 5


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """``module.name`` wrapped so each call adds one to the returned list."""
    calls: list[int] = []
    original: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


async def test_a_stream_builds_its_callers_request_once_and_one_per_uri(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ada's stream watches two diaries (the template's ``shouldRegister`` reads the
    owner from the URI): her request is built once, each URI's copy at its first
    delivery, and its variables still decide (bob's diary hidden, hers arrives)."""
    container = Container()
    catalog = notes_catalog(container)
    built = counting(monkeypatch, scopes, "snapshot")
    copied = counting(monkeypatch, resources, "replace")
    watched = ["notes://ada/diary", "notes://bob/diary"]
    async with (
        client(catalog, container, caller="ada") as ada,
        ada.listen(resource_subscriptions=watched) as hears,
    ):
        notifier = container.get(Notifier)
        before = len(built)
        for _ in range(UPDATES):
            await notifier.resource_updated("notes://bob/diary")  # hidden from ada
            await notifier.resource_updated("notes://ada/diary")
            assert await next_event(hears) == ResourceUpdated(uri="notes://ada/diary")
        assert len(built) == before  # the diary's hook ran 2 x UPDATES times on one snapshot
        assert len(copied) == len(watched)  # and on one copy per URI, not 2 x UPDATES


async def test_one_change_runs_every_listeners_sync_hooks_in_one_thread_hop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Five streams of ada's watch her diary (a sync ``shouldRegister``): each update is one
    worker-thread call for all five, not one each; bob's stream, watching it too, still
    hears only what he may see."""
    container = Container()
    catalog = notes_catalog(container)
    hops = counting(monkeypatch, Threads, "run")
    diary = ResourceUpdated(uri="notes://ada/diary")
    async with (
        client(catalog, container, caller="ada") as ada,
        ada.listen(resource_subscriptions=["notes://ada/diary"]) as first,
        ada.listen(resource_subscriptions=["notes://ada/diary"]) as second,
        ada.listen(resource_subscriptions=["notes://ada/diary"]) as third,
        ada.listen(resource_subscriptions=["notes://ada/diary"]) as fourth,
        ada.listen(resource_subscriptions=["notes://ada/diary"]) as fifth,
        client(catalog, container, caller="bob") as bob,
        bob.listen(resource_subscriptions=["notes://ada/diary", "notes://public"]) as intruder,
    ):
        streams = (first, second, third, fourth, fifth)
        notifier = container.get(Notifier)
        before = len(hops)
        for _ in range(UPDATES):
            # every stream back at its feed (a stream still busy with the last update
            # would check this one in a later turn: one more hop, not a lost update)
            await anyio.wait_all_tasks_blocked()
            await notifier.resource_updated("notes://ada/diary")
            for stream in streams:
                assert await next_event(stream) == diary
        # one per server and update (each client has a server of its own here): ada's five,
        # and bob's, fewer when his hidden updates pile up while his check is in its
        # thread (a feed holds an update once); one per stream without batching: 6 x UPDATES
        assert UPDATES <= len(hops) - before <= 2 * UPDATES
        await notifier.resource_updated("notes://public")
        assert await next_event(intruder) == ResourceUpdated(uri="notes://public")
