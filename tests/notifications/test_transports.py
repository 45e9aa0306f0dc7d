"""Notifications over real transports, through the SDK's own client in both eras: stdio
(``mcp-adapter serve`` in a subprocess) and streamable HTTP (uvicorn on 127.0.0.1) with
two signed-in callers, one of them the attacker."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

from container import Container
from mcp_adapter import BearerAuth, http_app
from mcp_adapter.notifications import SubscriptionLimits
from tests.notifications.apps import NotesServer, NoteVerifier
from tests.notifications.support import next_event
from tests.serving.clients import CALL_TIMEOUT, MODES, connect
from tests.serving.harness import CLI, REPO, cli_env, serve_app

pytestmark = pytest.mark.anyio

LOG_LEVEL = "io.modelcontextprotocol/logLevel"


class Heard:
    """What a client's ``message_handler`` (change notifications) and ``logging_callback``
    (log records) received, each in order."""

    def __init__(self) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[tuple[str, Any]](100)
        self.logs: list[tuple[str, Any]] = []

    async def message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method is not None and method != "notifications/message":
            await self.send.send((method, getattr(getattr(message, "params", None), "uri", None)))

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def next(self) -> tuple[str, Any]:
        with anyio.fail_after(CALL_TIMEOUT):
            return await self.receive.receive()


def notes_over_stdio() -> StdioServerParameters:
    return StdioServerParameters(
        command=CLI[0],
        args=[*CLI[1:], "serve", "tests.notifications.apps:NotesServer"],
        env=cli_env(),
        cwd=REPO,
    )


@asynccontextmanager
async def over_stdio(mode: str, heard: Heard) -> AsyncIterator[Client]:
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(
            notes_over_stdio(),
            mode=mode,  # type: ignore[arg-type]
            message_handler=heard.message,
            logging_callback=heard.log,
            log_level="info",
        ) as client:
            yield client


async def subscribe(client: Client, *uris: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK client's own method is deprecated at 2026
        for uri in uris:
            await client.subscribe_resource(uri)


async def set_level(client: Client, level: types.LoggingLevel) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await client.set_logging_level(level)


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio_changes_logs_and_progress_reach_the_client(mode: str) -> None:
    heard = Heard()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with over_stdio(mode, heard) as client:
        if mode == "legacy":
            await set_level(client, "info")
            await subscribe(client, "notes://public", "notes://ada/diary")
            await client.call_tool(
                "touch", {"uri": "notes://ada/diary"}
            )  # hidden: nobody signed in
            await client.call_tool("touch", {"uri": "notes://public"})
            await client.call_tool("announce", {"kind": "tools"})
            assert await heard.next() == ("notifications/resources/updated", "notes://public")
            assert await heard.next() == ("notifications/tools/list_changed", None)
        else:
            async with client.listen(
                tools_list_changed=True,
                resource_subscriptions=["notes://public", "notes://ada/diary"],
            ) as listening:
                await client.call_tool("touch", {"uri": "notes://ada/diary"})
                await client.call_tool("touch", {"uri": "notes://public"})
                await client.call_tool("announce", {"kind": "tools"})
                assert await next_event(listening) == ResourceUpdated(uri="notes://public")
                assert await next_event(listening) == ToolsListChanged()
        await client.call_tool("sync-work", {}, progress_callback=on_progress)
    assert heard.logs == [("info", "in the worker thread"), ("error", "in a thread of its own")]
    assert progress == [(1, 2, None), (2, 2, None)]


def notes_app(**options: Any) -> Any:
    return http_app(
        NotesServer,
        Container(),
        stateless=False,
        auth=BearerAuth(NoteVerifier()),
        **options,
    )


@asynccontextmanager
async def over_http(url: str, mode: str, token: str, heard: Heard) -> AsyncIterator[Client]:
    with anyio.fail_after(CALL_TIMEOUT):
        async with (
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"}, timeout=CALL_TIMEOUT
            ) as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode=mode,  # type: ignore[arg-type]
                message_handler=heard.message,
            ) as client,
        ):
            yield client


@pytest.mark.parametrize("mode", MODES)
async def test_over_http_an_identity_never_hears_of_anothers_hidden_resource(mode: str) -> None:
    """Bob (the attacker) watches Ada's diary and the vault too; he hears only of what he
    may read. Ada, who publishes, hears of her diary."""
    watched = ("notes://ada/diary", "notes://vault", "notes://bob/diary", "notes://public")
    with serve_app(notes_app()) as base:
        ada_heard, bob_heard = Heard(), Heard()
        async with (
            over_http(f"{base}/mcp", mode, "ada-token", ada_heard) as ada,
            over_http(f"{base}/mcp", mode, "bob-token", bob_heard) as bob,
        ):
            if mode == "legacy":
                await subscribe(bob, *watched)
                await subscribe(ada, *watched)
                for uri in watched:
                    await ada.call_tool("touch", {"uri": uri})
                updated = "notifications/resources/updated"
                assert await bob_heard.next() == (updated, "notes://bob/diary")
                assert await bob_heard.next() == (updated, "notes://public")
                assert await ada_heard.next() == (updated, "notes://ada/diary")
                return
            async with (
                bob.listen(resource_subscriptions=watched) as bob_hears,
                ada.listen(resource_subscriptions=watched) as ada_hears,
            ):
                for uri in watched:
                    await ada.call_tool("touch", {"uri": uri})
                assert await next_event(bob_hears) == ResourceUpdated(uri="notes://bob/diary")
                assert await next_event(bob_hears) == ResourceUpdated(uri="notes://public")
                assert await next_event(ada_hears) == ResourceUpdated(uri="notes://ada/diary")


async def test_over_http_a_flood_of_listen_requests_is_bounded_per_identity() -> None:
    limits = SubscriptionLimits(max_listeners=3, max_listeners_per_client=2)
    with serve_app(notes_app(subscription_limits=limits)) as base:
        async with (
            over_http(f"{base}/mcp", "auto", "ada-token", Heard()) as ada,
            over_http(f"{base}/mcp", "auto", "bob-token", Heard()) as bob,
        ):
            async with ada.listen(tools_list_changed=True), ada.listen(tools_list_changed=True):
                with pytest.raises(MCPError, match="this client has 2 subscription streams open"):
                    async with ada.listen(tools_list_changed=True):
                        pass
                async with bob.listen(tools_list_changed=True):
                    with pytest.raises(MCPError, match="the server has 3 subscription streams"):
                        async with bob.listen(tools_list_changed=True):
                            pass
            # the streams closed give their places back (once the server has seen them end:
            # the end travels on other HTTP requests, so it is awaited, not assumed)
            with anyio.fail_after(CALL_TIMEOUT):
                while True:
                    try:
                        async with ada.listen(tools_list_changed=True) as again:
                            await ada.call_tool("announce", {"kind": "tools"})
                            assert await next_event(again) == ToolsListChanged()
                            break
                    except MCPError as refused:
                        if "Subscription refused" not in str(refused):
                            raise
                        await anyio.sleep(0.05)


@pytest.mark.parametrize(
    ("options", "listen", "sessions"),
    [
        ({"stateless": False}, True, True),
        ({"stateless": True}, True, False),
        ({"stateless": False, "json_response": True}, False, True),
        ({"stateless": False, "subscription_bus": False}, False, False),
    ],
    ids=["stateful", "stateless", "json", "no-bus"],
)
async def test_capabilities_say_what_the_transport_can_carry(
    options: dict[str, Any], listen: bool, sessions: bool
) -> None:
    app = http_app(NotesServer, Container(), **options)
    with serve_app(app) as base:
        async with connect(f"{base}/mcp", "auto") as modern:
            found = (await modern.session.discover()).capabilities
            assert found.tools is not None
            assert bool(found.tools.list_changed) is listen
            assert found.resources is not None
            assert bool(found.resources.subscribe) is listen
        async with connect(f"{base}/mcp", "legacy") as legacy:
            advertised = legacy.server_capabilities
            assert advertised.tools is not None
            assert bool(advertised.tools.list_changed) is sessions
            assert advertised.resources is not None
            assert bool(advertised.resources.subscribe) is sessions
