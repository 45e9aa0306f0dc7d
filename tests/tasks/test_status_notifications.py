"""Task status notifications (``notifications/tasks``) on a ``subscriptions/listen`` stream,
heard through the SDK client: the owner hears each change of status with the whole
task; another identity that names the same task id hears nothing about it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError, types
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, ConfigDict

from mcp_adapter import BearerAuth, http_app
from mcp_adapter.tasks import EXTENSION
from mcp_adapter.testing import TaskClient
from mcp_adapter.testing.tasks import WAIT
from tests.serving.apps import StaticVerifier
from tests.serving.harness import serve_app
from tests.tasks import asking
from tests.tasks.fixtures import Ledger, TaskServer, container_with
from tests.tasks.helpers import over_http

pytestmark = pytest.mark.anyio


class _Status(BaseModel):
    model_config = ConfigDict(extra="allow")


class Heard(ClientExtension):
    """The tasks extension on the client side: negotiates it and keeps what it hears."""

    identifier = EXTENSION

    def __init__(self) -> None:
        self.heard: list[dict[str, Any]] = []
        self.changed = anyio.Event()

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return (
            NotificationBinding(
                method="notifications/tasks", params_type=_Status, handler=self._on
            ),
        )

    async def _on(self, params: _Status) -> None:
        self.heard.append(params.model_dump(by_alias=True))
        self.changed.set()
        self.changed = anyio.Event()

    async def until(self, task_id: str, status: str) -> dict[str, Any]:
        with anyio.fail_after(WAIT):
            while True:
                for heard in self.heard:
                    if heard.get("taskId") == task_id and heard.get("status") == status:
                        return heard
                await self.changed.wait()


@asynccontextmanager
async def listening(
    url: str, token: str, **options: Any
) -> AsyncIterator[tuple[TaskClient, Heard]]:
    heard = Heard()
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=20) as http,
        Client(
            streamable_http_client(url, http_client=http),  # type: ignore[arg-type]
            extensions=[heard],
            **options,
        ) as client,
    ):
        yield TaskClient(client), heard


@asynccontextmanager
async def follow(tasks: TaskClient, *task_ids: str) -> AsyncIterator[None]:
    """A listen stream naming ``task_ids`` under ``taskIds``, open for the block."""
    async with anyio.create_task_group() as group:
        group.start_soon(
            lambda: tasks.request("subscriptions/listen", notifications={"taskIds": list(task_ids)})
        )
        yield
        group.cancel_scope.cancel()


@pytest.fixture
def served() -> Iterator[tuple[str, Ledger]]:
    ledger = Ledger()
    app = http_app(TaskServer, container_with(ledger), auth=BearerAuth(StaticVerifier()))
    with serve_app(app) as url:
        yield f"{url}/mcp", ledger


async def test_the_owner_hears_each_status_with_the_whole_task(served: tuple[str, Ledger]) -> None:
    url, ledger = served
    async with listening(url, "reader-token") as (reader, heard):
        task_id = (await reader.call("waits"))["taskId"]
        async with follow(reader, task_id):
            working = await heard.until(task_id, "working")
            assert working["ttlMs"] > 0
            assert working["pollIntervalMs"] > 0
            assert working["_meta"]["io.modelcontextprotocol/subscriptionId"]
            ledger.gate.set()
            completed = await heard.until(task_id, "completed")
        assert completed["result"] == (await reader.get(task_id))["result"]
        assert completed["result"]["content"] == [{"type": "text", "text": "let go"}]
        assert [h["status"] for h in heard.heard] == ["working", "completed"]


async def test_another_identity_naming_the_task_hears_nothing_of_it(
    served: tuple[str, Ledger],
) -> None:
    url, ledger = served
    async with (
        listening(url, "reader-token") as (reader, reader_heard),
        listening(url, "admin-token") as (admin, admin_heard),
    ):
        theirs = (await reader.call("waits"))["taskId"]
        mine = (await admin.call("waits"))["taskId"]
        async with follow(admin, theirs, mine), follow(reader, theirs):
            await admin_heard.until(mine, "working")  # the stream is live
            await reader_heard.until(theirs, "working")
            ledger.gate.set()
            await reader_heard.until(theirs, "completed")
            await admin_heard.until(mine, "completed")
        assert {h["taskId"] for h in admin_heard.heard} == {mine}
        assert {h["taskId"] for h in reader_heard.heard} == {theirs}


@pytest.mark.parametrize(
    ("task_ids", "message"),
    [([f"t{i}" for i in range(17)], "Too many taskIds: 17"), ("one", "list of task ids")],
)
async def test_a_malformed_or_huge_task_list_is_refused_before_the_stream(
    task_ids: object, message: str
) -> None:
    async with TaskClient.connect(container_with(Ledger()), TaskServer) as tasks:
        with pytest.raises(MCPError) as refused:
            await tasks.request("subscriptions/listen", notifications={"taskIds": task_ids})
        assert refused.value.code == -32602
        assert message in refused.value.message
        assert (await tasks.call("echo"))["resultType"] == "task"


async def test_the_owner_hears_a_task_wait_for_input_and_then_complete() -> None:
    runs = asking.Runs()
    app = http_app(
        asking.AskingServer, asking.container_with(runs), auth=BearerAuth(StaticVerifier())
    )
    with serve_app(app) as url:
        async with listening(f"{url}/mcp", "reader-token", elicitation_callback=asking.never) as (
            reader,
            heard,
        ):
            task_id = (await reader.call("delete", {"filename": "heard"}))["taskId"]
            async with follow(reader, task_id):
                waiting = await heard.until(task_id, "input_required")
                (key,) = waiting["inputRequests"]
                assert waiting["inputRequests"] == (await reader.get(task_id))["inputRequests"]
                await reader.update(task_id, {key: asking.accept(confirm=True)})
                completed = await heard.until(task_id, "completed")
            assert completed["result"]["content"] == [{"type": "text", "text": "deleted heard"}]
            statuses = [h["status"] for h in heard.heard]
            assert statuses[-1] == "completed"
            assert "input_required" in statuses[:-1]  # ("working" between: when heard in time)
            assert set(statuses) <= {"working", "input_required", "completed"}
    assert runs.handled == ["delete"]


async def test_the_owner_hears_a_waiting_task_cancelled() -> None:
    runs = asking.Runs()
    app = http_app(
        asking.AskingServer, asking.container_with(runs), auth=BearerAuth(StaticVerifier())
    )
    with serve_app(app) as url:
        async with listening(f"{url}/mcp", "reader-token", elicitation_callback=asking.never) as (
            reader,
            heard,
        ):
            task_id = (await reader.call("delete", {"filename": "dropped"}))["taskId"]
            async with follow(reader, task_id):
                await heard.until(task_id, "input_required")
                await reader.cancel(task_id)
                cancelled = await heard.until(task_id, "cancelled")
            assert "inputRequests" not in cancelled
    assert runs.handled == []


@pytest.mark.parametrize("negotiated", [True, False])
async def test_task_ids_are_acknowledged_only_for_a_client_that_negotiated_the_extension(
    served: tuple[str, Ledger], negotiated: bool
) -> None:
    """Without the extension ``taskIds`` means nothing: not echoed, not checked (a malformed
    list is not refused), and the kinds asked beside it are acknowledged as ever."""
    url, _ = served
    acknowledged: list[types.SubscriptionFilter] = []
    got_ack = anyio.Event()

    async def keep(message: Any) -> None:
        if isinstance(message, types.SubscriptionsAcknowledgedNotification):
            acknowledged.append(message.params.notifications)
            got_ack.set()

    requested = {"toolsListChanged": True, "taskIds": ["t1", "t2"] if negotiated else "t1"}
    client = over_http(url, "reader-token", negotiated=negotiated, message_handler=keep)
    async with client as tasks, anyio.create_task_group() as group:
        group.start_soon(lambda: tasks.request("subscriptions/listen", notifications=requested))
        with anyio.fail_after(WAIT):
            await got_ack.wait()
        group.cancel_scope.cancel()
    (honored,) = acknowledged
    assert honored.tools_list_changed is True
    echoed = (honored.model_extra or {}).get("taskIds")
    assert echoed == (["t1", "t2"] if negotiated else None)
