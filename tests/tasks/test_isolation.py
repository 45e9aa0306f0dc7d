"""Tasks across a trust boundary, over HTTP with bearer tokens: a task is visible only to
the identity that created it; another caller gets exactly an absent task's answer and
cannot cancel it. A task's TTL: readable until it passes, absent after."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import anyio
import httpx2
import pytest
from mcp import MCPError

from mcp_adapter import BearerAuth, McpResponse, Server, Tasks, Tool, http_app
from tests.serving.apps import StaticVerifier
from tests.serving.harness import serve_app
from tests.tasks.fixtures import Ledger, TaskServer, container_with
from tests.tasks.helpers import connected, over_http

pytestmark = pytest.mark.anyio


@pytest.fixture
def served() -> Iterator[tuple[str, Ledger]]:
    ledger = Ledger()
    app = http_app(TaskServer, container_with(ledger), auth=BearerAuth(StaticVerifier()))
    with serve_app(app) as url:
        yield f"{url}/mcp", ledger


async def _refusal(call: object) -> tuple[int, str]:
    with pytest.raises(MCPError) as refused:
        await call  # type: ignore[misc]
    return refused.value.code, refused.value.message


async def test_another_identity_gets_exactly_the_answer_for_an_absent_task(
    served: tuple[str, Ledger],
) -> None:
    url, ledger = served
    async with over_http(url, "reader-token") as reader, over_http(url, "admin-token") as admin:
        task_id = (await reader.call("waits"))["taskId"]
        absent = await _refusal(admin.get("no-such-task-" + "x" * 30))
        assert absent == (-32602, "Unknown task")
        assert await _refusal(admin.get(task_id)) == absent
        assert await _refusal(admin.cancel(task_id)) == absent
        assert await _refusal(admin.request("tasks/update", taskId=task_id, inputResponses={})) == (
            absent
        )
        assert (await reader.get(task_id))["status"] == "working"  # the probe changed nothing
        ledger.gate.set()
        assert (await reader.until(task_id))["status"] == "completed"
        assert await _refusal(admin.get(task_id)) == absent  # ended: still not theirs


async def test_task_ids_are_unguessable_and_caps_count_per_identity(
    served: tuple[str, Ledger],
) -> None:
    url, ledger = served
    async with over_http(url, "reader-token") as reader, over_http(url, "admin-token") as admin:
        ids = {(await reader.call("waits"))["taskId"] for _ in range(2)}
        assert len(ids) == 2
        assert all(len(task_id) >= 40 for task_id in ids)
        with pytest.raises(MCPError) as mine:  # reader's cap (2) is full
            await reader.call("waits")
        assert "max_running_per_identity" in mine.value.message
        await admin.call("waits")  # admin has places of its own...
        with pytest.raises(MCPError) as everyone:  # ...until all (3) are taken
            await admin.call("waits")
        assert "max_running is 3" in everyone.value.message
        ledger.gate.set()


class Quick(Tool):
    name = "quick"
    task_support = "required"

    async def handle(self) -> McpResponse:
        return McpResponse.text("quick")


class ShortLived(Server):
    tools = (Quick,)
    tasks = Tasks(ttl=1.0)


async def test_a_task_is_readable_until_its_ttl_and_absent_after() -> None:
    async with connected(ShortLived) as tasks:
        created = await tasks.call("quick")
        assert created["ttlMs"] == 1000
        done = await tasks.until(created["taskId"])
        assert done["result"]["content"] == [{"type": "text", "text": "quick"}]
        created_at = datetime.fromisoformat(created["createdAt"].replace("Z", "+00:00"))
        expiry = created_at + timedelta(milliseconds=created["ttlMs"])
        await anyio.sleep((expiry - datetime.now(UTC)).total_seconds() + 0.05)
        with pytest.raises(MCPError) as gone:
            await tasks.get(created["taskId"])
        assert gone.value.code == -32602


async def test_the_test_client_names_the_task_in_mcp_name_over_http() -> None:
    """``TaskClient`` sends what a real client must: ``tasks/*`` carry ``Mcp-Name``."""
    sent: list[tuple[str | None, str | None]] = []

    async def record(request: httpx2.Request) -> None:
        sent.append((request.headers.get("Mcp-Method"), request.headers.get("Mcp-Name")))

    app = http_app(TaskServer, container_with(Ledger()))
    with serve_app(app) as url:
        async with over_http(f"{url}/mcp", event_hooks={"request": [record]}) as tasks:
            started = await tasks.call("echo")
            task_id = started["taskId"]
            await tasks.get(task_id)
            await tasks.cancel(task_id)
    assert ("tasks/get", task_id) in sent
    assert ("tasks/cancel", task_id) in sent
