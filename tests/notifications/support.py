"""Serving the notes server in process to the SDK's own client, as one caller or another."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp
from mcp.server.auth.provider import AccessToken
from mcp.shared.subscriptions import ServerEvent

from container import Container
from mcp_adapter import Catalog, build_sdk_server, compile_server
from tests.notifications.apps import NotesServer

CALL_TIMEOUT = 30
MODERN = "auto"
"""In process, ``auto`` speaks 2026-07-28 (it probes ``server/discover`` first)."""
LEGACY = "legacy"


def token(subject: str) -> AccessToken:
    return AccessToken(
        token=f"{subject}-token", client_id="notes-tests", subject=subject, scopes=[]
    )


def notes_catalog(container: Container) -> Catalog:
    return compile_server(NotesServer, container)


@asynccontextmanager
async def client(
    catalog: Catalog,
    container: Container,
    *,
    mode: str = MODERN,
    caller: str | None = None,
    **options: Any,
) -> AsyncIterator[mcp.Client]:
    """The SDK's client on a server of its own (sharing ``container``, so its ``Notifier``),
    every request made as ``caller``; ``options`` go to ``build_sdk_server``, except the
    client's own (``message_handler``, ``logging_callback``, ``log_level``)."""
    mine = {
        key: options.pop(key)
        for key in ("message_handler", "logging_callback", "log_level")
        if key in options
    }
    sdk = build_sdk_server(
        catalog, container, caller=None if caller is None else token(caller), **options
    )
    with anyio.fail_after(CALL_TIMEOUT):
        async with mcp.Client(sdk, mode=mode, cache=None, **mine) as connected:
            yield connected


async def next_event(subscription: Any) -> ServerEvent:
    with anyio.fail_after(CALL_TIMEOUT):
        event: ServerEvent = await subscription.__anext__()
        return event
