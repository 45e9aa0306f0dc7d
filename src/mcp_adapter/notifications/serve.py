"""Serving notifications on one SDK server: handlers, capabilities and the bus's lifetime.

:class:`Notifications` gathers what one low-level server serves of them: the
``subscriptions/listen`` handler (2026-07-28), ``resources/subscribe`` and the
session streams (2025-11-25), ``logging/setLevel`` (2025-11-25), and the
``listChanged`` flags of its ``initialize`` answer. A capability is advertised
only when the transport can carry what it promises (:class:`Delivery`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

from mcp import types
from mcp.server import Server as SdkServer
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, SubscriptionBus

from mcp_adapter.notifications.client_log import set_level
from mcp_adapter.notifications.gate import ResourceGate
from mcp_adapter.notifications.limits import SubscriptionLimits
from mcp_adapter.notifications.listen import Listening
from mcp_adapter.notifications.notifier import Notifier
from mcp_adapter.notifications.sessions import SessionDelivery

BusChoice = SubscriptionBus | Literal[False] | None
"""``subscription_bus=``: a bus, ``None`` for a new in-memory one, ``False`` for no
subscriptions at all (neither ``subscriptions/listen`` nor ``resources/subscribe``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """What the transport can carry to a client that did not just ask a question."""

    listen: bool = True
    """A request's answer can be a stream (stdio, HTTP with SSE answers): 2026-07-28
    ``subscriptions/listen``."""
    sessions: bool = True
    """A 2025-11-25 session has a stream of its own (stdio, stateful HTTP): list changes
    and ``resources/subscribe``."""


class NotifyingServer(SdkServer[Any]):
    """The SDK's low-level server, whose ``initialize`` answer advertises the list changes
    it sends (the SDK reads them from ``NotificationOptions``, which each transport would
    otherwise have to pass)."""

    notification_options: NotificationOptions = NotificationOptions()

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self.notification_options,
            experimental_capabilities,
            extensions,
        )


class Notifications:
    """What one SDK server serves of notifications, subscriptions and logging."""

    def __init__(
        self,
        notifier: Notifier | None,
        gate: ResourceGate,
        *,
        lists: Collection[str],
        logs: bool,
        bus: BusChoice = None,
        limits: SubscriptionLimits | None = None,
        delivery: Delivery | None = None,
    ) -> None:
        """``lists``: the kinds the server lists (``tools``, ``resources``, ``prompts``; with
        ``resources``, ``resources/subscribe`` is served too); ``logs``: a component may
        log to the client (``ClientLogger``), so ``logging/setLevel`` is served."""
        self.notifier = notifier
        self.logs = logs
        delivery = Delivery() if delivery is None else delivery
        limits = SubscriptionLimits() if limits is None else limits
        self.bus: SubscriptionBus | None = None
        self.listening: Listening | None = None
        self.sessions: SessionDelivery | None = None
        self.announced: frozenset[str] = frozenset()
        """The kinds whose list changes 2025-11-25 sessions are sent."""
        if bus is False:
            return
        self.bus = InMemorySubscriptionBus() if bus is None else bus
        if delivery.listen:
            self.listening = Listening(self.bus, gate, limits)
        if delivery.sessions:
            self.sessions = SessionDelivery(self.bus, gate, limits, lists)
            self.announced = frozenset(lists)

    def options(self) -> NotificationOptions:
        """The ``listChanged`` flags of the 2025-11-25 ``initialize`` answer."""
        return NotificationOptions(
            prompts_changed="prompts" in self.announced,
            resources_changed="resources" in self.announced,
            tools_changed="tools" in self.announced,
        )

    def install(self, server: NotifyingServer) -> None:
        """Register the handlers on ``server`` (its capabilities follow from them)."""
        server.notification_options = self.options()
        if self.logs:
            server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
        if self.listening is not None:
            server.add_request_handler(
                "subscriptions/listen", types.SubscriptionsListenRequestParams, self.listening
            )
        sessions = self.sessions
        if sessions is not None:
            server.add_notification_handler(
                "notifications/initialized", types.NotificationParams, sessions.deliver
            )
            if "resources" in self.announced:
                server.add_request_handler(
                    "resources/subscribe", types.SubscribeRequestParams, sessions.subscribe
                )
                server.add_request_handler(
                    "resources/unsubscribe", types.UnsubscribeRequestParams, sessions.unsubscribe
                )

    @asynccontextmanager
    async def lifespan(self, _: Any) -> AsyncIterator[dict[str, Any]]:
        """The SDK server's lifespan: its bus gets the notifier's events while it serves;
        at the end, open streams end gracefully."""
        notifier, bus = self.notifier, self.bus
        detach = notifier.attach(bus) if notifier is not None and bus is not None else None
        try:
            yield {}
        finally:
            if detach is not None:
                detach()
            for streams in (self.listening, self.sessions):
                if streams is not None:
                    streams.close()
