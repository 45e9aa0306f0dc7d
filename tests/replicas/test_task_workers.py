"""Serving apart from working: two ``mcp-adapter serve --redis --enqueue-only`` replicas
behind haproxy run no task body; ``mcp-adapter worker`` processes on the same Redis run
them all. A worker killed mid-task leaves the task ``failed`` once another worker takes
it over; a worker stopped by SIGTERM cancels (or drains) its bodies and closes their
scopes.

Skipped with the reason when ``redis-server`` or ``haproxy`` is missing, failed instead
with ``CI=true``. The tests share one deployment (no worker of its own) and run in order.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcp_adapter.tasks.engine import SHUT_DOWN, WORKER_STOPPED
from tests.replicas.cluster import Cluster, cluster
from tests.replicas.tasks import (
    ADA,
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
from tests.replicas.workers import worker

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, marks: Path) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("enqueue-only")
    flags = (*CONTAINER, "--enqueue-only")
    with cluster(folder, 2, app=TASK_APP, flags=flags, env={"TASK_MARKS": str(marks)}) as running:
        yield running


async def test_the_worker_runs_every_task_the_replicas_enqueue(
    deployment: Cluster, marks: Path
) -> None:
    # six in a row, two at most per identity: each replica admits three, all run elsewhere
    answers = []
    with worker(deployment, "w1"), anyio.fail_after(TIMEOUT):
        async with tasks_client(deployment.url, ADA) as ada:
            for _ in range(6):
                mark = new_mark()
                release(marks, mark)
                task_id = (await ada.call("held", {"mark": mark}))["taskId"]
                done = await ended(ada, task_id)
                assert done["status"] == "completed", done
                answers.append(done["result"]["content"][0]["text"])
    assert [answer.split(" ran on ")[1] for answer in answers] == ["w1"] * 6


async def test_a_worker_killed_mid_task_leaves_it_failed_once_another_takes_over(
    deployment: Cluster, marks: Path
) -> None:
    mark = new_mark()
    with anyio.fail_after(TIMEOUT):
        async with tasks_client(deployment.url, ADA) as ada:
            with worker(deployment, "w1") as first:
                task_id = (await ada.call("held", {"mark": mark}))["taskId"]
                assert await started(marks, mark) == "w1"
                first.process.send_signal(signal.SIGKILL)
                first.wait()
            assert (await ada.get(task_id))["status"] == "working"  # nobody to take it yet
            with worker(deployment, "w2"):
                done = await ended(ada, task_id)  # within Docket's redelivery bound
                assert done["status"] == "failed", done
                assert done["error"]["message"] == WORKER_STOPPED
                after = new_mark()
                release(marks, after)
                task_id = (await ada.call("held", {"mark": after}))["taskId"]
                assert (await ended(ada, task_id))["status"] == "completed"


async def test_sigterm_cancels_a_workers_bodies_and_closes_their_scopes(
    deployment: Cluster, marks: Path
) -> None:
    mark = new_mark()
    with anyio.fail_after(TIMEOUT):
        async with tasks_client(deployment.url, ADA) as ada:
            with worker(deployment, "w3") as running:
                task_id = (await ada.call("held", {"mark": mark}))["taskId"]
                await started(marks, mark)
                before = closed(marks)
                running.process.send_signal(signal.SIGTERM)
                status = running.wait()
            done = await ended(ada, task_id)
    assert status == -signal.SIGTERM
    assert closed(marks)[len(before) :] == ["w3"]
    assert done["status"] == "failed", done
    assert done["error"]["message"] == SHUT_DOWN
    assert running.said("stopping (cancel)")


async def test_sigterm_lets_a_draining_worker_finish_its_bodies(
    deployment: Cluster, marks: Path
) -> None:
    mark = new_mark()
    with anyio.fail_after(TIMEOUT):
        async with tasks_client(deployment.url, ADA) as ada:
            # a grace far longer than the test waits: the worker must end with its last body
            drain = {"TASK_SHUTDOWN": "drain", "TASK_GRACE": "3600"}
            with worker(deployment, "w4", drain) as running:
                task_id = (await ada.call("held", {"mark": mark}))["taskId"]
                await started(marks, mark)
                running.process.send_signal(signal.SIGTERM)
                while not running.said("stopping (drain)"):
                    await anyio.sleep(0.05)
                assert running.process.poll() is None  # waiting for the body
                release(marks, mark)
                status = running.wait()
            done = await ended(ada, task_id)
    assert status == -signal.SIGTERM
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == f"{mark} ran on w4"
