"""Two ``mcp-adapter serve --redis redis+sentinel://...`` replicas on a real Sentinel
deployment (a primary, a replica, three Sentinels: ``benchmarks/harness/redis_topology``):
a task is started and a listener subscribed, then the primary goes (a forced
``SENTINEL FAILOVER``, or SIGKILL); afterwards, within a bound, ``/readyz`` answers 200
again, calls are answered on both replicas, the task ends ``completed`` with its result
readable, and a change announced on one replica reaches the listener on the other.

Before the primary goes, the test waits until the replica has every write the primary
acknowledged: Redis replicates asynchronously, and what the old primary had not sent on
is lost in a failover (docs/deployment.md says so).

Skipped with the reason when ``redis-server`` is missing, failed instead with ``CI=true``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from benchmarks.harness.redis_topology import SentinelTopology
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated

from mcp_adapter.cli.settings import KEYS_ENV
from tests.notifications.support import next_event
from tests.replicas.cluster import KEY_1, VERIFIER, Replica, free_port, wait_until
from tests.replicas.tasks import (
    ADA,
    CONTAINER,
    TIMEOUT,
    ended,
    new_mark,
    release,
    started,
    tasks_client,
)
from tests.replicas.workers import Deployed, worker
from tests.serving.harness import CLI, serve_process

pytestmark = pytest.mark.anyio

APP = "tests.replicas.sentinel_app:SentinelServer"
RECOVERED_WITHIN = 60.0
"""Seconds the replicas have, after the Sentinels report the new primary, to answer
again (redis-py's retries, the bus's backoff, Docket's reconnects; room for a loaded
machine)."""
PUBLIC = ResourceUpdated(uri="notes://public")


@contextmanager
def serving(
    topology: SentinelTopology, marks: Path, names: Sequence[str], flags: Sequence[str] = ()
) -> Iterator[list[Replica]]:
    """A replica per name, serving on the Sentinel URL, each ready."""
    started = [Replica(name, free_port()) for name in names]
    with ExitStack() as stack:
        for replica in started:
            command = [
                *CLI,
                "serve",
                APP,
                "--http",
                "--port",
                str(replica.port),
                "--redis",
                topology.url,
                "--auth",
                VERIFIER,
                *CONTAINER,
                *flags,
            ]
            env = {"REPLICA": replica.name, "TASK_MARKS": str(marks), KEYS_ENV: KEY_1}
            replica.served = stack.enter_context(serve_process(command, env))
        for replica in started:
            wait_until(lambda r=replica: r.ready() == 200, f"{replica.name} ready")  # type: ignore[misc]
        yield started


@pytest.fixture
def replicas(topology: SentinelTopology, marks: Path) -> Iterator[list[Replica]]:
    """``r1`` and ``r2``, each serving and running task bodies, on the Sentinel URL."""
    with serving(topology, marks, ["r1", "r2"]) as started:
        yield started


async def ready_again(replicas: Sequence[Replica]) -> None:
    for replica in replicas:
        await anyio.to_thread.run_sync(
            lambda r=replica: wait_until(
                lambda: r.ready() == 200, f"{r.name} ready again", RECOVERED_WITHIN
            )
        )


@asynccontextmanager
async def connect(url: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {ADA}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http)) as client,  # type: ignore[arg-type]
    ):
        yield client


async def answered(url: str) -> str:
    """What ``where`` answers on ``url``, asked again (bounded) while it fails."""
    with anyio.fail_after(RECOVERED_WITHIN):
        while True:
            try:
                async with connect(url) as client:
                    result = await client.call_tool("where", {})
            except (MCPError, httpx2.HTTPError):
                await anyio.sleep(0.2)
                continue
            if not result.is_error:
                text: str = result.content[0].text  # type: ignore[union-attr]
                return text
            await anyio.sleep(0.2)


async def touch(url: str) -> None:
    async with connect(url) as client:
        await client.call_tool("touch", {"uri": PUBLIC.uri})


async def heard_again(changes: Any, announcer: str) -> None:
    """Announce on ``announcer`` until the listener hears it (bounded): the listening
    replica's bus subscribed again, on the new primary."""
    with anyio.fail_after(RECOVERED_WITHIN):
        while True:
            await touch(announcer)
            with anyio.move_on_after(1):
                assert await next_event(changes) == PUBLIC
                return


@pytest.mark.parametrize("loss", ["failover", "kill_primary"])
async def test_serving_goes_on_when_the_primary_goes(
    topology: SentinelTopology, replicas: list[Replica], marks: Path, loss: str
) -> None:
    r1, r2 = replicas
    mark = new_mark()
    with anyio.fail_after(TIMEOUT * 2):
        async with (
            tasks_client(r1.url, ADA) as ada,
            connect(r1.url) as listener,
            listener.listen(resource_subscriptions=[PUBLIC.uri]) as changes,
        ):
            created = await ada.call("held", {"mark": mark})
            assert created["resultType"] == "task"
            runner = await started(marks, mark)
            await touch(r2.url)
            assert await next_event(changes) == PUBLIC  # crosses replicas through Redis
            await anyio.to_thread.run_sync(topology.wait_replicated)
            old = topology.primary_address()

            new = await anyio.to_thread.run_sync(getattr(topology, loss))

            assert new != old
            await ready_again(replicas)
            assert [await answered(r.url) for r in replicas] == ["r1", "r2"]
            release(marks, mark)
            done = await ended(ada, created["taskId"])
            assert (done["status"], done.get("error")) == ("completed", None)
            assert done["result"]["content"] == [
                {"type": "text", "text": f"{mark} ran on {runner}"}
            ]
            await heard_again(changes, r2.url)


async def test_a_worker_on_the_sentinel_url_runs_what_serve_enqueues_across_a_failover(
    topology: SentinelTopology, marks: Path
) -> None:
    """``serve --enqueue-only`` and ``mcp-adapter worker``, both on the Sentinel URL: the
    task started before the failover and one started after run on the worker."""
    env = {"TASK_MARKS": str(marks)}
    with (
        serving(topology, marks, ["r1"], ["--enqueue-only"]) as (r1,),
        worker(Deployed(APP, topology.url, CONTAINER, env), "w1"),
        anyio.fail_after(TIMEOUT * 2),
    ):
        async with tasks_client(r1.url, ADA) as ada:
            before = new_mark()
            first = (await ada.call("held", {"mark": before}))["taskId"]
            assert await started(marks, before) == "w1"
            await anyio.to_thread.run_sync(topology.wait_replicated)

            await anyio.to_thread.run_sync(topology.failover)

            await ready_again([r1])
            release(marks, before)
            after = new_mark()
            release(marks, after)
            second = (await ada.call("held", {"mark": after}))["taskId"]
            for mark, task_id in ((before, first), (after, second)):
                done = await ended(ada, task_id)
                assert (done["status"], done.get("error")) == ("completed", None)
                assert done["result"]["content"][0]["text"] == f"{mark} ran on w1"
