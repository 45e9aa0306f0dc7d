"""The tasks extension on the wire (``io.modelcontextprotocol/tasks``, 2026-07-28): what a
task-creating ``tools/call`` answers, what ``tasks/get`` answers, the acks, and the errors.

The SDK types no part of this extension: these models are its shapes, with the
``Ms`` field names, ``resultType`` ``"task"`` on a created task and ``"complete"``
elsewhere, and a finished task's result or error inlined on ``tasks/get``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from mcp import MCPError, types
from mcp_types import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY

from mcp_adapter.errors import TOO_MANY_CALLS

EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier, under ``capabilities.extensions`` on both sides."""

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class TaskFields(types.Result):
    """The ``Task`` every answer about one task carries, flat (no ``task`` wrapper)."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class CreateTaskResult(TaskFields):
    """A ``tools/call`` that started a task: its handle, at once."""

    result_type: Literal["task"] = "task"


class DetailedTask(TaskFields):
    """``tasks/get``: the task, with its result (completed) or error (failed) inlined, or
    the questions it waits for (``input_required``)."""

    result_type: Literal["complete"] = "complete"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class Ack(types.Result):
    """``tasks/cancel`` and ``tasks/update``: ``{"resultType": "complete"}`` and nothing else."""

    result_type: Literal["complete"] = "complete"


class TaskParams(types.RequestParams):
    """The params of ``tasks/get`` and ``tasks/cancel``."""

    task_id: str


class UpdateParams(TaskParams):
    """The params of ``tasks/update``."""

    input_responses: dict[str, Any] | None = None


def negotiated(client_capabilities: Mapping[str, Any]) -> bool:
    """Whether the client declared the extension (on this request, or its connection)."""
    extensions = client_capabilities.get("extensions")
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def missing_extension() -> MCPError:
    """``-32021``: the request needs a client that negotiated the extension."""
    return MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Client did not declare required extension {EXTENSION!r}",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def absent(task_id: str) -> MCPError:
    """The one answer for a task that does not exist, has expired, or is someone else's."""
    return MCPError(types.INVALID_PARAMS, "Unknown task", {"taskId": task_id[:200]})


def header_mismatch() -> MCPError:
    return MCPError(HEADER_MISMATCH, "Mcp-Name header does not match params.taskId")


def store_failed(how: str) -> MCPError:
    """``-32603``: the task store (Docket's Redis) did not answer in time, or failed."""
    return MCPError(types.INTERNAL_ERROR, f"The task store {how}; try again later")


def too_many(limit: str, value: int) -> MCPError:
    """A task refused at once: ``limit`` tasks not ended yet."""
    return MCPError(
        TOO_MANY_CALLS,
        f"Too many tasks: {limit} is {value}; wait for one to end or cancel one",
        {"limit": limit, "value": value},
    )
