"""A notes server whose clients are told what changed, for the notification tests.

``touch`` and ``announce`` publish through the injected ``Notifier``; the
diaries are visible to their owner only, and ``notes://vault`` to nobody
anonymous, so the tests can check who hears of what.
"""

from __future__ import annotations

import threading
from typing import Literal

from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.notifications import ClientLogger, Notifier, Progress
from schemas import Schema

TOKENS = {"ada-token": "ada", "bob-token": "bob"}


class NoteVerifier:
    """Bearer tokens ``ada-token`` and ``bob-token``, for two different callers."""

    async def verify_token(self, token: str) -> AccessToken | None:
        subject = TOKENS.get(token)
        if subject is None:
            return None
        return AccessToken(token=token, client_id="notes-tests", subject=subject, scopes=[])


class PublicNote(Resource):
    name = "public-note"
    uri = "notes://public"

    def handle(self) -> McpResponse:
        return McpResponse.text("for everyone")


class Diary(Resource):
    """Each caller's own diary: another's is hidden."""

    name = "diary"
    uri_template = "notes://{owner}/diary"

    def shouldRegister(self, request: McpRequest) -> bool:
        owner = request.uri_variables.get("owner")
        return owner is None or (request.identity is not None and request.identity.subject == owner)

    def handle(self, owner: str) -> McpResponse:
        return McpResponse.text(f"{owner}'s diary")


class Vault(Resource):
    """Listed for signed-in callers only, and readable by nobody: refused."""

    name = "vault"
    uri = "notes://vault"

    def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is not None

    def authorize(self, request: McpRequest) -> bool:
        return False

    def handle(self) -> McpResponse:
        return McpResponse.text("secret")


class TouchInput(Schema):
    uri: str


class TouchTool(Tool[TouchInput]):
    """Announce that a resource changed."""

    name = "touch"

    async def handle(self, payload: TouchInput, notifier: Notifier) -> McpResponse:
        await notifier.resource_updated(payload.uri)
        return McpResponse.text(f"touched {payload.uri}")


class AnnounceInput(Schema):
    kind: Literal["tools", "resources", "prompts"]


class AnnounceTool(Tool[AnnounceInput]):
    """Announce that a list changed, from a sync handler (a worker thread)."""

    name = "announce"

    def handle(self, payload: AnnounceInput, notifier: Notifier) -> McpResponse:
        {
            "tools": notifier.tool_list_changed,
            "resources": notifier.resource_list_changed,
            "prompts": notifier.prompt_list_changed,
        }[payload.kind]()
        return McpResponse.text(f"announced {payload.kind}")


class WorkTool(Tool):
    """Reports progress and logs, the async way."""

    name = "work"

    async def handle(self, progress: Progress, log: ClientLogger) -> McpResponse:
        await log.debug("debugging")
        await progress.report(1, 2, "half")
        await log.info({"step": 1})
        await log.warning("careful", logger="notes")
        await progress.report(2, 2)
        return McpResponse.text("worked")


class SyncWorkTool(Tool):
    """Reports progress and logs from its worker thread, and from a thread it starts."""

    name = "sync-work"

    def handle(self, progress: Progress, log: ClientLogger) -> McpResponse:
        log.info("in the worker thread")
        progress.report(1, 2)

        def elsewhere() -> None:
            log.error("in a thread of its own")
            progress.report(2, 2)

        helper = threading.Thread(target=elsewhere)
        helper.start()
        helper.join()
        return McpResponse.text("worked")


class Summary(Prompt):
    name = "summary"

    def handle(self) -> McpResponse:
        return McpResponse.text("Summarize the notes.").asUser()


class NotesServer(Server):
    name = "notes"
    tools = (TouchTool, AnnounceTool, WorkTool, SyncWorkTool)
    resources = (PublicNote, Diary, Vault)
    prompts = (Summary,)


def build_container() -> Container:
    return Container()
