"""Long-lived listeners through the balancer: per listening identity, a 2026-07-28
``subscriptions/listen`` stream and a 2025-11-25 session with ``resources/subscribe``,
each subscribed to its own secret and to another identity's. Every notification must
name the listener's own secret; another's is a leak. A stream a fault ends is opened
again (counted), after a short pause.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated

from benchmarks.chaos.invariants import Tally
from benchmarks.chaos.load import LISTENERS, subject, token

REOPEN_PAUSE = 0.5
LIFETIME = 30.0
"""Seconds a listener keeps one stream before it opens a new one (streams come and go)."""


class Listeners:
    def __init__(self, url: str, tally: Tally) -> None:
        self.url = url
        self.tally = tally
        self.reopened = 0

    def heard(self, identity: int, uri: str, kind: str) -> None:
        if uri == f"secret://{subject(identity)}":
            self.tally.notifications += 1
        else:
            self.tally.violation("isolation", f"{kind}: {subject(identity)} heard of {uri}")

    def watched(self, identity: int) -> list[str]:
        other = (identity + 1) % LISTENERS
        return [f"secret://{subject(identity)}", f"secret://{subject(other)}"]

    async def listen(self, identity: int) -> None:
        headers = {"Authorization": f"Bearer {token(identity)}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(self.url, http_client=http)) as client,  # type: ignore[arg-type]
            client.listen(resource_subscriptions=self.watched(identity)) as changes,
        ):
            async with asyncio.timeout(LIFETIME):
                async for event in changes:
                    if isinstance(event, ResourceUpdated):
                        self.heard(identity, event.uri, "listen")

    async def subscribe(self, identity: int) -> None:
        async def message(incoming: Any) -> None:
            if getattr(incoming, "method", None) == "notifications/resources/updated":
                self.heard(identity, str(incoming.params.uri), "resources/subscribe")

        headers = {"Authorization": f"Bearer {token(identity)}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(
                streamable_http_client(self.url, http_client=http),  # type: ignore[arg-type]
                mode="legacy",
                message_handler=message,
            ) as client,
        ):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated at 2026-07-28
                for uri in self.watched(identity):
                    await client.subscribe_resource(uri)
            await asyncio.sleep(LIFETIME)

    async def keep(self, identity: int, legacy: bool) -> None:
        """One listener, reopened whenever its stream ends, until cancelled."""
        while True:
            try:
                await (self.subscribe(identity) if legacy else self.listen(identity))
            except TimeoutError:
                pass  # its lifetime is over: a new stream
            except Exception as exc:  # noqa: BLE001  # a fault ended the stream: open another
                self.tally.scan("listen", repr(exc), subject(identity))
                self.reopened += 1
            await asyncio.sleep(REOPEN_PAUSE)

    def start(self) -> list[asyncio.Task[None]]:
        return [
            asyncio.create_task(self.keep(identity, legacy))
            for identity in range(LISTENERS)
            for legacy in (False, True)
        ]
