"""The server docs/tasks.md drives from real clients (``mcp.Client`` and raw HTTP):

    mcp-adapter serve examples.tasks.server:Reports --http

``build_report`` runs as a task when the client negotiated the tasks extension (inline
otherwise) and takes ``seconds`` (at most 600) to finish; ``delete_file`` always runs as
a task and asks the client to confirm before it answers.
"""

from __future__ import annotations

from typing import Annotated

import anyio

from mcp_adapter import Elicit, McpResponse, Resolve, Server, Tasks, Tool, ToolAnnotations
from schemas import Schema

LONGEST = 600.0
"""Seconds ``build_report`` takes at most, whatever it is asked."""


class ReportInput(Schema):
    seconds: float = 0.1


class BuildReport(Tool[ReportInput]):
    """Builds the quarterly report (takes ``seconds``)."""

    name = "build_report"
    task_support = "optional"
    annotations = ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )

    async def handle(self, payload: ReportInput) -> McpResponse:
        await anyio.sleep(min(max(payload.seconds, 0.0), LONGEST))  # the long part
        return McpResponse.text("report ready")


class Target(Schema):
    filename: str


class Confirm(Schema):
    confirm: bool


async def confirm_deletion(payload: Target) -> Elicit[Confirm]:
    return Elicit(f"Delete {payload.filename}?", Confirm)


class DeleteFile(Tool[Target]):
    """Deletes a file once the user confirmed it."""

    name = "delete_file"
    task_support = "required"
    annotations = ToolAnnotations(
        read_only=False, destructive=True, idempotent=True, open_world=False
    )

    async def handle(
        self, payload: Target, answer: Annotated[Confirm, Resolve(confirm_deletion)]
    ) -> McpResponse:
        return McpResponse.text(("deleted " if answer.confirm else "kept ") + payload.filename)


class Reports(Server):
    name = "reports"
    tools = (BuildReport, DeleteFile)
    tasks = Tasks(poll_interval=0.2)  # clients poll every 0.2 s (1 s by default)
