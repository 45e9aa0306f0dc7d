"""Three ``mcp-adapter serve --redis`` replicas behind haproxy (round-robin, no affinity),
driven through the balancer by the SDK's own client, 2026-07-28.

Skipped with the reason when ``redis-server`` or ``haproxy`` is missing, failed instead
with ``CI=true``. The tests share one deployment and run in order: the last ones
restart the replicas (new keys) and Redis.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated

from tests.notifications.support import next_event
from tests.replicas.cluster import APP, KEY_1, KEY_2, Cluster, cluster, wait_until
from tests.serving.harness import CLI, REPO, cli_env

pytestmark = pytest.mark.anyio

TIMEOUT = 120
ADA, BOB = "ada-token", "bob-token"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("replicas")) as running:
        yield running


@asynccontextmanager
async def connect(
    url: str, token: str, mode: str = "auto", **options: Any
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client,  # type: ignore[arg-type]
    ):
        yield client


def text(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def test_the_balancer_spreads_calls_over_every_replica(deployment: Cluster) -> None:
    async with connect(deployment.url, ADA) as ada:
        answered = {text(await ada.call_tool("where", {})) for _ in range(6)}
    assert answered == {"r1", "r2", "r3"}


async def test_a_multi_round_elicitation_crosses_replicas(deployment: Cluster) -> None:
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(TIMEOUT):
        async with connect(deployment.url, ADA, elicitation_callback=answer) as ada:
            result = text(await ada.call_tool("ask-twice", {}))
    assert asked == ["First?", "Second?"]
    action, rounds = result.split(" ")
    assert action == "accept"
    served = rounds.split(",")
    assert len(served) == 3
    assert len(set(served)) > 1, f"every round on one replica: {served}"


async def test_a_change_announced_on_any_replica_reaches_a_listener_on_another(
    deployment: Cluster,
) -> None:
    """Ada listens through the balancer (on one replica); the change is announced on each
    replica in turn, straight to it: at least two of the three cross."""
    with anyio.fail_after(TIMEOUT):
        async with (
            connect(deployment.url, ADA) as listener,
            listener.listen(resource_subscriptions=["notes://public"]) as changes,
        ):
            for replica in deployment.replicas:
                async with connect(replica.url, ADA) as announcer:
                    await announcer.call_tool("touch", {"uri": "notes://public"})
                assert await next_event(changes) == ResourceUpdated(uri="notes://public")


async def test_a_second_identity_hears_nothing_of_the_first(deployment: Cluster) -> None:
    """Bob watches Ada's diary through the balancer; Ada's changes to it, announced on every
    replica, reach Ada and never Bob, who hears the public note announced after them."""
    watched = ["notes://ada/diary", "notes://public"]
    with anyio.fail_after(TIMEOUT):
        async with (
            connect(deployment.url, BOB) as bob,
            connect(deployment.url, ADA) as ada,
            bob.listen(resource_subscriptions=watched) as bob_hears,
            ada.listen(resource_subscriptions=watched) as ada_hears,
        ):
            for replica in deployment.replicas:
                async with connect(replica.url, ADA) as announcer:
                    await announcer.call_tool("touch", {"uri": "notes://ada/diary"})
                assert await next_event(ada_hears) == ResourceUpdated(uri="notes://ada/diary")
            async with connect(deployment.replicas[0].url, ADA) as announcer:
                await announcer.call_tool("touch", {"uri": "notes://public"})
            assert await next_event(bob_hears) == ResourceUpdated(uri="notes://public")
            assert await next_event(ada_hears) == ResourceUpdated(uri="notes://public")


async def test_a_stdio_server_sharing_the_redis_announces_to_http_listeners(
    deployment: Cluster,
) -> None:
    """``serve --redis`` over stdio (a worker, a local tool) shares the channel too."""
    stdio = StdioServerParameters(
        command=CLI[0],
        args=[*CLI[1:], "serve", APP, "--redis", deployment.redis.url],
        env=cli_env({"REPLICA": "stdio"}),
        cwd=REPO,
    )
    with anyio.fail_after(TIMEOUT):
        async with (
            connect(deployment.url, ADA) as listener,
            listener.listen(resource_subscriptions=["notes://public"]) as changes,
            Client(stdio, mode="auto") as local,
        ):
            assert text(await local.call_tool("where", {})) == "stdio"
            await local.call_tool("touch", {"uri": "notes://public"})
            assert await next_event(changes) == ResourceUpdated(uri="notes://public")


async def test_one_rate_limit_holds_across_replicas(deployment: Cluster) -> None:
    async with connect(deployment.url, ADA) as ada, connect(deployment.url, BOB) as bob:
        allowed = [text(await ada.call_tool("limited", {})) for _ in range(3)]
        refused = await ada.call_tool("limited", {})
        bobs = text(await bob.call_tool("limited", {}))
    # spread over two replicas or more, none counted three calls alone: the fourth call was
    # refused by the count they share
    assert len({line.split()[-1] for line in allowed}) > 1
    assert refused.is_error
    assert "Rate limit exceeded" in str(refused.content)
    assert bobs.startswith("allowed on")


async def test_keys_rotated_mid_call_keep_the_call_working(deployment: Cluster) -> None:
    """Round 1 is sealed under KEY_1; before the client answers, every replica restarts with
    the ring KEY_2, KEY_1: round 2 opens the old seal and seals under the new key, which
    round 3 opens."""
    rotated: list[tuple[str, ...]] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not rotated:
            await anyio.to_thread.run_sync(deployment.stop_replicas)
            await anyio.to_thread.run_sync(deployment.start_replicas, (KEY_2, KEY_1))
            rotated.append(deployment.keys)
        return types.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(TIMEOUT * 3):
        async with connect(deployment.url, ADA, elicitation_callback=answer) as ada:
            result = text(await ada.call_tool("ask-twice", {}))
    assert rotated == [(KEY_2, KEY_1)]
    assert result.startswith("accept ")


async def test_replicas_are_not_ready_without_redis_and_recover_when_it_is_back(
    deployment: Cluster,
) -> None:
    assert [replica.ready() for replica in deployment.replicas] == [200, 200, 200]
    deployment.redis.stop()
    for replica in deployment.replicas:
        wait_until(lambda r=replica: r.ready() == 503, f"{replica.name} not ready")  # type: ignore[misc]
    answer = httpx2.get(f"http://127.0.0.1:{deployment.replicas[0].port}/readyz", timeout=10)
    assert answer.json() == {"status": "not ready", "reason": "redis unreachable"}
    health = httpx2.get(f"http://127.0.0.1:{deployment.replicas[0].port}/healthz", timeout=10)
    assert health.status_code == 200
    deployment.redis.start()
    for replica in deployment.replicas:
        wait_until(lambda r=replica: r.ready() == 200, f"{replica.name} ready again")  # type: ignore[misc]
    # the same processes, subscribed again: a change still crosses
    await test_a_change_announced_on_any_replica_reaches_a_listener_on_another(deployment)


def test_the_haproxy_configuration_is_the_documented_one(deployment: Cluster) -> None:
    documented = (Path(__file__).parents[2] / "docs" / "deployment.md").read_text()
    for line in deployment.haproxy_config().splitlines():
        if line.strip() and not line.strip().startswith(("bind", "server")):
            assert line.strip() in documented, line
