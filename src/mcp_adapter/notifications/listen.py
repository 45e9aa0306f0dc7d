"""``subscriptions/listen`` (2026-07-28): one request is one stream of change events.

The SDK's ``ListenHandler`` serves the stream for everyone alike; this one
keeps its wire contract (the acknowledgment first, every frame stamped with the
subscription id, only the kinds and URIs asked for, a graceful end on
shutdown) and adds what a server with visibility hooks and many clients needs:

- a resource's update reaches a listener only if that listener may see the
  resource: its ``shouldRegister``/``authorize`` hooks run at delivery, with
  the listener's own request (identity included), as a read would run them;
- streams are counted per client and in all (:class:`SubscriptionLimits`), and
  one beyond a limit is refused with a JSON-RPC error before the acknowledgment;
- each listener's backlog is a :class:`Feed`: deduplicated, so bounded by what
  it subscribed to, and drained (hooks included) by the listener's own task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, cast

import anyio
from mcp import MCPError, types
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.subscriptions import (
    SUBSCRIPTION_ID_META_KEY,
    ResourceUpdated,
    ServerEvent,
    event_matches,
    event_to_notification,
)

from mcp_adapter.declare.request import McpRequest
from mcp_adapter.notifications.feed import Feed, unsubscribe_from_bus
from mcp_adapter.notifications.gate import KeptRequests, ResourceGate
from mcp_adapter.notifications.limits import ListenerQuota, SubscriptionLimits, client_of


def honored(requested: types.SubscriptionFilter) -> types.SubscriptionFilter:
    """What the acknowledgment promises: every kind asked for (false flags and an empty URI
    list dropped), as the SDK's handler answers; a URI no resource serves never fires."""
    return types.SubscriptionFilter(
        tools_list_changed=True if requested.tools_list_changed else None,
        prompts_list_changed=True if requested.prompts_list_changed else None,
        resources_list_changed=True if requested.resources_list_changed else None,
        resource_subscriptions=list(requested.resource_subscriptions or ()) or None,
    )


class Followed(Protocol):
    """What a stream may follow besides the bus's events (the tasks extension's
    ``taskIds``): the filter key it reads, and the coroutine that follows them,
    sending its own notifications on the stream."""

    key: str

    def requested(self, ctx: Any, extra: Mapping[str, Any] | None) -> tuple[str, ...] | None:
        """The ids the filter's extra keys name for the caller of ``ctx``; ``None``: none
        (the key is then not acknowledged)."""
        ...

    async def __call__(
        self, ctx: Any, ids: Sequence[str], send: Callable[[Any], Awaitable[None]]
    ) -> None: ...


class Listening:
    """The ``subscriptions/listen`` handler of one SDK server."""

    def __init__(self, bus: SubscriptionBus, gate: ResourceGate, limits: SubscriptionLimits):
        self.bus = bus
        self.gate = gate
        self.limits = limits
        self.quota = ListenerQuota(limits)
        self._feeds: set[Feed] = set()
        self.followed: Followed | None = None
        """Set by a server with task tools (``taskIds`` in the filter)."""

    async def __call__(
        self, ctx: Any, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        subscription_id = ctx.request_id
        if subscription_id is None:
            raise MCPError(types.INVALID_REQUEST, "subscriptions/listen requires a request id")
        wanted = honored(params.notifications)
        followed = self.followed
        extra = params.notifications.model_extra
        ids = None if followed is None else followed.requested(ctx, extra)
        if followed is not None and ids is not None:
            setattr(wanted, followed.key, list(ids))
        uris = frozenset(wanted.resource_subscriptions or ())
        if len(uris) > self.limits.max_uris:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Too many resource subscriptions: {len(uris)}, at most {self.limits.max_uris}",
            )
        request = self.gate.request(ctx)  # once per stream: every delivery's hooks get it
        client = client_of(request)
        refusal = self.quota.take(client)
        if refusal is not None:
            raise MCPError(types.INTERNAL_ERROR, f"Subscription refused: {refusal}")
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        feed = Feed(lambda event: event_matches(wanted, uris, event))
        # Subscribe before the acknowledgment, so an event published while it is being
        # written waits in the feed; only this task writes the stream, ack first.
        unsubscribe = self.bus.subscribe(feed.put)
        self._feeds.add(feed)
        try:
            acknowledged = types.SubscriptionsAcknowledgedNotificationParams(
                notifications=wanted, _meta=meta
            )
            await ctx.session.send_notification(
                types.SubscriptionsAcknowledgedNotification(params=acknowledged),
                related_request_id=subscription_id,
            )
            if followed is not None and ids:
                async with anyio.create_task_group() as group:

                    async def send(notification: Any) -> None:
                        notification.params["_meta"] = meta
                        await ctx.session.send_notification(
                            cast(types.ServerNotification, notification),
                            related_request_id=subscription_id,
                        )

                    group.start_soon(followed, ctx, ids, send)
                    await self._relay(ctx, request, feed, meta, subscription_id)
                    group.cancel_scope.cancel()
            else:
                await self._relay(ctx, request, feed, meta, subscription_id)
        finally:
            self._feeds.discard(feed)
            feed.close()
            unsubscribe_from_bus(unsubscribe)
            self.quota.give_back(client)
        return types.SubscriptionsListenResult(_meta=meta)

    async def _relay(
        self,
        ctx: Any,
        request: McpRequest,
        feed: Feed,
        meta: dict[str, Any],
        subscription_id: Any,
    ) -> None:
        """The bus's events this stream asked for and may see, in order."""
        kept: KeptRequests = {}  # at most one request per URI the stream subscribed to
        async for event in feed:
            if await self._visible(ctx, request, event, kept):
                await ctx.session.send_notification(
                    event_to_notification(event, meta), related_request_id=subscription_id
                )

    async def _visible(
        self, ctx: Any, request: McpRequest, event: ServerEvent, kept: KeptRequests
    ) -> bool:
        if not isinstance(event, ResourceUpdated):
            return True
        return await self.gate.readable(ctx, event.uri, request, kept)

    def close(self) -> None:
        """End every open stream gracefully: each drains, then answers its final result."""
        for feed in list(self._feeds):
            feed.close()
