"""Task status notifications: ``notifications/tasks`` on a ``subscriptions/listen`` stream.

A client that negotiated the tasks extension names the tasks it follows under the
listen filter's ``taskIds``. Each one it owns is followed through Docket's state
events (which cross processes through Redis, so a task run by another process or a
separate worker is heard too); at each change of status the stream carries the
whole task, exactly what ``tasks/get`` would answer then, until it has ended, and so
at each new ``statusMessage`` the body reports (rate-bounded: ``tasks.status``). A task
that is absent, expired or another caller's is followed by nothing: the stream
stays silent about it, as it would for a task id nobody ever held.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

import anyio
from mcp import MCPError, types
from pydantic import BaseModel

from mcp_adapter.tasks.engine import TaskEngine
from mcp_adapter.tasks.frozen import owner_of
from mcp_adapter.tasks.reading import execution_of
from mcp_adapter.tasks.wire import TERMINAL, DetailedTask, negotiated

METHOD = "notifications/tasks"
"""The extension's status notification (its params: the task, as ``tasks/get``)."""

FILTER_KEY = "taskIds"
"""The listen filter's key naming the tasks a stream follows."""

MAX_TASK_IDS = 16
"""Task ids one listen stream may follow (each holds a pub/sub subscription)."""

Send = Callable[[Any], Awaitable[None]]


class TaskNotification(BaseModel):
    """``notifications/tasks``: the task's whole state, stamped with the subscription."""

    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: dict[str, Any]


class TaskWatch:
    """Follows the tasks a listen stream names, for the caller that listens."""

    key: str = FILTER_KEY

    def __init__(self, engine: TaskEngine, describe: Callable[[Any], Any]) -> None:
        self.engine = engine
        self.describe = describe

    def requested(self, ctx: Any, extra: Mapping[str, Any] | None) -> tuple[str, ...] | None:
        """The task ids a listen filter names (``None``: it names none, or the client did
        not negotiate the extension, for which the key means nothing and is not
        acknowledged); a malformed list or one longer than :data:`MAX_TASK_IDS` is
        refused (``-32602``)."""
        if not extra or FILTER_KEY not in extra:
            return None
        if not negotiated(self.describe(ctx).client_capabilities):
            return None
        ids = extra[FILTER_KEY]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise MCPError(types.INVALID_PARAMS, f"{FILTER_KEY} must be a list of task ids")
        if len(ids) > MAX_TASK_IDS:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Too many {FILTER_KEY}: {len(ids)}, at most {MAX_TASK_IDS} per listen stream",
            )
        return tuple(dict.fromkeys(ids))

    async def __call__(self, ctx: Any, ids: Sequence[str], send: Send) -> None:
        """Follow ``ids`` (what ``requested`` acknowledged) for the caller of ``ctx``."""
        owner = owner_of(self.describe(ctx))
        async with anyio.create_task_group() as group:
            for task_id in ids:
                group.start_soon(self._follow, task_id, owner, send)

    async def _follow(self, task_id: str, owner: str, send: Send) -> None:
        try:
            await self.engine.get(task_id, owner)  # absent, expired or another's: silence
            with self.engine.bounded():
                execution = await execution_of(self.engine.docket, task_id)
        except MCPError:
            return
        if execution is None:
            return
        last: tuple[str, str | None] | None = None
        async for event in execution.subscribe():
            if event.get("type") not in ("state", "progress"):
                continue
            try:
                task = await self.engine.get(task_id, owner)
            except MCPError:
                return  # expired meanwhile
            if (task.status, task.status_message) != last:
                last = (task.status, task.status_message)
                await send(TaskNotification(params=_params(task)))
            if task.status in TERMINAL:
                return


def _params(task: DetailedTask) -> dict[str, Any]:
    params = task.model_dump(by_alias=True, mode="json", exclude_none=True)
    params.pop("resultType", None)
    return params
