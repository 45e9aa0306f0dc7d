"""A task body's ``Progress`` and ``ClientLogger`` messages, as the task's ``statusMessage``:
read by ``tasks/get`` (``memory://`` and a real Redis), heard by the owner's listen stream
at a bounded rate under a flood of reports, and by nobody else."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import anyio
import pytest
from mcp import MCPError

from container import Container
from mcp_adapter import BearerAuth, ClientLogger, McpResponse, Progress, Server, Tool, http_app
from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.tasks.status import MAX_STATUS_CHARS, STATUS_INTERVAL
from mcp_adapter.testing import TaskClient
from mcp_adapter.testing.tasks import WAIT
from tests.serving.apps import StaticVerifier
from tests.serving.harness import serve_app
from tests.tasks.test_status_notifications import follow, listening

pytestmark = pytest.mark.anyio

FLOOD = 2000


@dataclass
class Board:
    """What the test lets the bodies do, and how long each flood took."""

    gate: anyio.Event = field(default_factory=anyio.Event)
    flood_seconds: list[float] = field(default_factory=list)


class Steps(Tool):
    """Reports three steps and a log record, then waits for the gate."""

    name = "steps"
    task_support = "required"

    async def handle(self, progress: Progress, board: Board) -> McpResponse:
        for done in (1, 2, 3):
            await progress.report(done, 3, f"step {done} of 3")
        await progress.report(3, 3)
        await board.gate.wait()
        return McpResponse.text("done")


class Logs(Tool):
    """Logs a long record and one below ``info``, then waits for the gate."""

    name = "logs"
    task_support = "required"

    async def handle(self, log: ClientLogger, board: Board) -> McpResponse:
        await log.info({"line": "x" * MAX_STATUS_CHARS})
        await log.debug("below the asked level")
        await board.gate.wait()
        return McpResponse.text("logged")


class SyncSteps(Tool):
    """A sync handler: reports from its worker thread, plainly."""

    name = "sync_steps"
    task_support = "required"

    def handle(self, progress: Progress) -> McpResponse:
        progress.report(1, 2, "from the worker thread")
        progress.report(2, 2)
        return McpResponse.text("synced")


class Floods(Tool):
    """Reports ``FLOOD`` times as fast as it can, then waits for the gate."""

    name = "floods"
    task_support = "required"

    async def handle(self, progress: Progress, board: Board) -> McpResponse:
        began = anyio.current_time()
        for done in range(1, FLOOD + 1):
            await progress.report(done, FLOOD, f"item {done}")
        board.flood_seconds.append(anyio.current_time() - began)
        await board.gate.wait()
        return McpResponse.text("flooded")


def container_with(board: Board) -> Container:
    container = Container()
    container.instance(Board, board)
    return container


def server_on(url: str) -> type[Server]:
    class Reporting(Server):
        tools = (Steps, Logs, SyncSteps, Floods)
        tasks = Tasks(url=url)

    return Reporting


async def until_message(tasks: TaskClient, task_id: str, message: str) -> dict[str, object]:
    with anyio.fail_after(WAIT):
        while True:
            task = await tasks.get(task_id)
            if task.get("statusMessage") == message:
                return task
            await anyio.sleep(0.01)


@pytest.fixture
def redis_or_memory(request: pytest.FixtureRequest) -> str:
    if request.param == "memory":
        return "memory://"
    url: str = request.getfixturevalue("redis_url")
    return url


@pytest.mark.parametrize("redis_or_memory", ["memory", "redis"], indirect=True)
async def test_tasks_get_shows_the_latest_progress_message(redis_or_memory: str) -> None:
    board = Board()
    async with TaskClient.connect(container_with(board), server_on(redis_or_memory)) as tasks:
        task_id = (await tasks.call("steps"))["taskId"]
        working = await until_message(tasks, task_id, "3/3")  # the last report, never lost
        assert working["status"] == "working"
        board.gate.set()
        done = await tasks.until(task_id)
        assert done["status"] == "completed"
        assert done["statusMessage"] == "3/3"  # kept with the outcome


async def test_a_sync_handler_reports_from_its_worker_thread() -> None:
    async with TaskClient.connect(container_with(Board()), server_on("memory://")) as tasks:
        done = await tasks.until((await tasks.call("sync_steps"))["taskId"])
    assert done["result"]["content"] == [{"type": "text", "text": "synced"}]
    assert done["statusMessage"] == "2/2"


@pytest.mark.parametrize("level", ["info", None])
async def test_a_log_record_at_the_asked_level_is_the_status_message_cut_to_its_bound(
    level: str | None,
) -> None:
    board = Board()
    async with TaskClient.connect(container_with(board), server_on("memory://")) as tasks:
        meta = {} if level is None else {"io.modelcontextprotocol/logLevel": level}
        started = await tasks.request("tools/call", name="logs", arguments={}, _meta=meta)
        board.gate.set()
        done = await tasks.until(started["taskId"])
    assert done["result"]["content"] == [{"type": "text", "text": "logged"}]
    if level is None:  # the call asked for no log: the records are the server's only
        assert "statusMessage" not in done
        return
    message = done["statusMessage"]
    assert len(message) == MAX_STATUS_CHARS
    assert message.startswith('{"line": "xxx')
    assert message.endswith("x…")


@pytest.fixture
def served() -> Iterator[tuple[str, Board]]:
    board = Board()
    app = http_app(server_on("memory://"), container_with(board), auth=BearerAuth(StaticVerifier()))
    with serve_app(app) as url:
        yield f"{url}/mcp", board


async def test_a_flood_of_reports_is_heard_at_a_bounded_rate_by_the_owner_only(
    served: tuple[str, Board],
) -> None:
    url, board = served
    last = f"item {FLOOD}"
    async with (
        listening(url, "reader-token") as (reader, reader_heard),
        listening(url, "admin-token") as (admin, admin_heard),
    ):
        theirs = (await reader.call("floods"))["taskId"]
        mine = (await admin.call("floods"))["taskId"]
        async with follow(admin, theirs, mine), follow(reader, theirs):
            with anyio.fail_after(WAIT):
                while not any(h.get("statusMessage") == last for h in reader_heard.heard):
                    await reader_heard.changed.wait()
                while not any(h.get("statusMessage") == last for h in admin_heard.heard):
                    await admin_heard.changed.wait()
            board.gate.set()
            await reader_heard.until(theirs, "completed")
            await admin_heard.until(mine, "completed")
        with pytest.raises(MCPError) as hidden:
            await admin.get(theirs)
        assert hidden.value.message == "Unknown task"
    assert {h["taskId"] for h in admin_heard.heard} == {mine}
    assert {h["taskId"] for h in reader_heard.heard} == {theirs}
    # at most one write per interval while the flood lasted, plus the first and the last
    # (and the first status, before any report, and the completed one)
    bound = math.ceil(max(board.flood_seconds) / STATUS_INTERVAL) + 4
    working = [h for h in reader_heard.heard if h["status"] == "working"]
    assert len(working) <= bound < FLOOD
    assert working[-1]["statusMessage"] == last
