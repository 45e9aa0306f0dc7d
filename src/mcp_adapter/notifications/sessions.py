"""2025-11-25: change notifications on a session's standalone stream.

That era has no listen request. A server that advertises ``listChanged`` sends
``notifications/*/list_changed`` to every session, and ``resources/subscribe``
asks for ``notifications/resources/updated`` of one URI on the session's
stream (stdio's pipe, or the ``GET`` stream of a stateful HTTP session).

Each session gets its :class:`Feed` when its client announces
``notifications/initialized``: that notification's handler is the session's
delivery task (the SDK runs each notification handler in a task of the
session's own, cancelled when the session ends). A resource's update is sent
only if the request that subscribed to it may see the resource, its hooks run
with that request at delivery, as for a listen stream.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mcp import MCPError, types
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcp_adapter.compat import connection_of
from mcp_adapter.notifications.feed import Feed, unsubscribe_from_bus
from mcp_adapter.notifications.gate import ResourceGate
from mcp_adapter.notifications.limits import SubscriptionLimits

WATCHED_KEY = "mcp_adapter.watched"
"""Where a connection's ``state`` keeps its subscribed URIs, each with the subscribing ctx
and that request's ``McpRequest`` (built once, when it subscribed)."""
FEED_KEY = "mcp_adapter.feed"
"""Where a connection's ``state`` marks that its delivery task runs."""

LIST_EVENTS: dict[str, ServerEvent] = {
    "tools": ToolsListChanged(),
    "prompts": PromptsListChanged(),
    "resources": ResourcesListChanged(),
}


def legacy_notification(event: ServerEvent) -> types.ServerNotification:
    """The 2025-11-25 notification of ``event`` (no subscription id: there is no stream id)."""
    if isinstance(event, ToolsListChanged):
        return types.ToolListChangedNotification()
    if isinstance(event, PromptsListChanged):
        return types.PromptListChangedNotification()
    if isinstance(event, ResourcesListChanged):
        return types.ResourceListChangedNotification()
    assert isinstance(event, ResourceUpdated)
    return types.ResourceUpdatedNotification(
        params=types.ResourceUpdatedNotificationParams(uri=event.uri)
    )


class SessionDelivery:
    """``resources/subscribe``, ``resources/unsubscribe`` and each session's delivery task."""

    def __init__(
        self,
        bus: SubscriptionBus,
        gate: ResourceGate,
        limits: SubscriptionLimits,
        lists: Collection[str],
    ) -> None:
        self.bus = bus
        self.gate = gate
        self.limits = limits
        self.lists = frozenset(LIST_EVENTS[kind] for kind in lists)
        """The list events this server announces: one per kind it serves."""
        self._feeds: set[Feed] = set()

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        watched = self._watched(ctx)
        uri = str(params.uri)
        if uri not in watched and len(watched) >= self.limits.max_uris:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Too many resource subscriptions on this session (at most {self.limits.max_uris})",
            )
        # whoever subscribed last: its caller decides what is delivered
        watched[uri] = (ctx, self.gate.request(ctx))
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Any, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._watched(ctx).pop(str(params.uri), None)
        return types.EmptyResult()

    @staticmethod
    def _watched(ctx: Any) -> dict[str, Any]:
        connection = connection_of(ctx)
        if connection is None:
            raise MCPError(types.INTERNAL_ERROR, "This transport keeps no session to subscribe in")
        watched: dict[str, Any] = connection.state.setdefault(WATCHED_KEY, {})
        return watched

    async def deliver(self, ctx: Any, params: types.NotificationParams) -> None:
        """The handler of ``notifications/initialized``: deliver until the session ends."""
        connection = connection_of(ctx)
        if connection is None or not connection.has_standalone_channel:
            return
        if connection.state.get(FEED_KEY):
            return  # a second notifications/initialized: its session already has a feed
        connection.state[FEED_KEY] = True
        watched: dict[str, Any] = connection.state.setdefault(WATCHED_KEY, {})

        def admits(event: ServerEvent) -> bool:
            if isinstance(event, ResourceUpdated):
                return event.uri in watched
            return event in self.lists

        feed = Feed(admits)
        unsubscribe = self.bus.subscribe(feed.put)
        self._feeds.add(feed)
        try:
            async for event in feed:
                if isinstance(event, ResourceUpdated):
                    subscriber = watched.get(event.uri)
                    if subscriber is None or not await self.gate.readable(
                        subscriber[0], event.uri, subscriber[1]
                    ):
                        continue
                await ctx.session.send_notification(legacy_notification(event))
        finally:
            self._feeds.discard(feed)
            feed.close()
            unsubscribe_from_bus(unsubscribe)

    def close(self) -> None:
        for feed in list(self._feeds):
            feed.close()
