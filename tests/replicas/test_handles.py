"""State handles across three ``mcp-adapter serve --redis`` replicas behind haproxy
(round-robin, no affinity), through the SDK's own client, 2026-07-28: a handle minted
through the balancer is served by every replica, its shared state (in Redis) is one,
its session services are each replica's own, a close through one replica makes it
unknown on all and finalizes its session services on all at once (before any call
presents it again), and another caller's handle is unknown everywhere.

Skipped with the reason when ``redis-server`` or ``haproxy`` is missing, failed instead
with ``CI=true``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import types

from tests.replicas.cluster import Cluster, cluster
from tests.replicas.test_replicas import ADA, BOB, connect, text

pytestmark = pytest.mark.anyio

APP = "tests.replicas.handle_app:HandleReplicaServer"
CONTAINER = ("--container", "tests.replicas.handle_app:build_container")
UNKNOWN = "Unknown state handle in argument 'basket'"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("handles"), app=APP, flags=CONTAINER) as running:
        yield running


def unknown(result: types.CallToolResult) -> bool:
    (content,) = result.content
    return (
        bool(result.is_error)
        and isinstance(content, types.TextContent)
        and (content.text == UNKNOWN)
    )


async def test_a_handle_works_through_every_replica_and_a_close_ends_it_on_all(
    deployment: Cluster,
) -> None:
    replicas = {r.name: r.url for r in deployment.replicas}
    async with connect(deployment.url, ADA) as balanced:
        basket = text(await balanced.call_tool("open_basket", {}))
        served = [
            text(await balanced.call_tool("add", {"basket": basket, "item": f"b{n}"})).split()
            for n in range(6)
        ]
    assert {where for where, _, _ in served} == set(replicas)
    assert served[-1][2] == "b0,b1,b2,b3,b4,b5"  # one basket: its items are in Redis
    calls: dict[str, list[int]] = {}
    for where, count, _ in served:
        calls.setdefault(where, []).append(int(count))
    for counts in calls.values():  # a counter per replica: it counts that replica's calls
        assert counts == list(range(1, len(counts) + 1)), calls

    for name, url in replicas.items():  # each replica, straight
        async with connect(url, ADA) as direct:
            answer = await direct.call_tool("add", {"basket": basket, "item": name})
            where, _, items = text(answer).split()
            assert where == name
            assert items.endswith(name)
    async with connect(replicas["r2"], ADA) as closer:
        assert text(await closer.call_tool("drop", {"handle": basket})) == "dropped"
    for name, url in replicas.items():  # the close note: no call of the handle needed
        async with connect(url, ADA) as direct:
            report = text(await direct.call_tool("until_finalized", {"finalized": 1}))
            assert report == f"{name} built=1 finalized=1"
    for name, url in replicas.items():
        async with connect(url, ADA) as direct:
            assert unknown(await direct.call_tool("add", {"basket": basket, "item": "late"}))
            report = text(await direct.call_tool("report", {}))
            assert report == f"{name} built=1 finalized=1"  # exactly once on each replica
    async with connect(deployment.url, ADA) as balanced:
        for _ in replicas:
            assert unknown(await balanced.call_tool("add", {"basket": basket, "item": "x"}))


async def test_another_callers_handle_is_unknown_on_every_replica(deployment: Cluster) -> None:
    async with connect(deployment.url, ADA) as ada:
        basket = text(await ada.call_tool("open_basket", {}))
    for replica in deployment.replicas:
        async with connect(replica.url, BOB) as bob:
            assert unknown(await bob.call_tool("add", {"basket": basket, "item": "theft"}))
            assert text(await bob.call_tool("drop", {"handle": basket})) == "dropped"
    async with connect(deployment.url, ADA) as ada:
        for n in range(len(deployment.replicas)):
            answer = text(await ada.call_tool("add", {"basket": basket, "item": f"a{n}"}))
            assert answer.split()[2] == "a0,a1,a2"[: 2 + 3 * n]  # bob added and closed nothing
