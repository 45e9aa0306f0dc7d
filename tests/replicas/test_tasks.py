"""Tasks on three ``mcp-adapter serve --redis`` replicas behind haproxy (round-robin, no
affinity), each replica running a worker: a task is started, read and cancelled through
whichever replicas the balancer picks, is another identity's business through none of
them, and a replica killed mid-task leaves its task ``failed``, never ``working``.

Skipped with the reason when ``redis-server`` or ``haproxy`` is missing, failed instead
with ``CI=true``. The tests share one deployment and run in order: the last one kills a
replica.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import MCPError

from mcp_adapter.tasks.engine import WORKER_STOPPED
from tests.replicas.cluster import Cluster, cluster
from tests.replicas.tasks import (
    ADA,
    BOB,
    CONTAINER,
    TASK_APP,
    TIMEOUT,
    closed,
    ended,
    new_mark,
    release,
    started,
    tasks_client,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, marks: Path) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("task-replicas")
    with cluster(folder, app=TASK_APP, flags=CONTAINER, env={"TASK_MARKS": str(marks)}) as running:
        yield running


async def test_a_task_is_read_to_its_end_through_every_replica(
    deployment: Cluster, marks: Path
) -> None:
    mark = new_mark()
    with anyio.fail_after(TIMEOUT):
        async with tasks_client(deployment.url, ADA) as ada:
            created = await ada.call("held", {"mark": mark})
            assert created["resultType"] == "task"
            runner = await started(marks, mark)
            between: list[str] = []
            for _ in range(3):  # round-robin: each get lands on another replica
                between.append((await ada.call("where"))["content"][0]["text"])
                assert (await ada.get(created["taskId"]))["status"] == "working"
            release(marks, mark)
            done = await ended(ada, created["taskId"])
    assert sorted(between) == ["r1", "r2", "r3"]
    assert done["status"] == "completed", done
    assert done["result"]["content"] == [{"type": "text", "text": f"{mark} ran on {runner}"}]


async def test_a_running_task_is_cancelled_through_another_replica(
    deployment: Cluster, marks: Path
) -> None:
    mark = new_mark()
    before = closed(marks)
    with anyio.fail_after(TIMEOUT):
        async with tasks_client(deployment.url, ADA) as ada:
            task_id = (await ada.call("held", {"mark": mark}))["taskId"]
            runner = await started(marks, mark)
            await ada.call("where")  # the cancel goes to the replica after this one
            assert (await ada.cancel(task_id))["resultType"] == "complete"
            done = await ended(ada, task_id)
            while len(closed(marks)) == len(before):
                await anyio.sleep(0.05)  # the body's scope closes where it ran
    assert done["status"] == "cancelled", done
    assert closed(marks)[len(before) :] == [runner]


async def test_another_identity_gets_the_absent_answer_from_every_replica(
    deployment: Cluster, marks: Path
) -> None:
    mark = new_mark()
    with anyio.fail_after(TIMEOUT):
        async with (
            tasks_client(deployment.url, ADA) as ada,
            tasks_client(deployment.url, BOB) as bob,
        ):
            task_id = (await ada.call("held", {"mark": mark}))["taskId"]
            await started(marks, mark)
            answers = []
            for probe in (bob.get, bob.cancel, bob.get, bob.cancel, bob.get, bob.cancel):
                with pytest.raises(MCPError) as refused:
                    await probe(task_id)
                answers.append((refused.value.code, refused.value.message))
            with pytest.raises(MCPError) as unknown:
                await bob.get("no-such-task")
            assert (await ada.get(task_id))["status"] == "working"  # untouched by bob
            release(marks, mark)
            assert (await ended(ada, task_id))["status"] == "completed"
    assert set(answers) == {(unknown.value.code, unknown.value.message)}
    assert unknown.value.message == "Unknown task"


async def test_a_replica_killed_mid_task_leaves_it_failed_not_working(
    deployment: Cluster, marks: Path
) -> None:
    mark = new_mark()
    with anyio.fail_after(TIMEOUT):
        async with tasks_client(deployment.url, ADA) as ada:
            task_id = (await ada.call("held", {"mark": mark}))["taskId"]
            runner = await started(marks, mark)
            (killed,) = [r for r in deployment.replicas if r.name == runner]
            assert killed.served is not None
            killed.served.process.send_signal(signal.SIGKILL)
            killed.served.process.wait(timeout=TIMEOUT)
            done = await ended(ada, task_id)  # within Docket's redelivery bound
    assert done["status"] == "failed", done
    assert done["error"]["message"] == WORKER_STOPPED
