"""``Notifier``: the service that announces "this changed" to the clients that listen.

One per container, resolvable by type anywhere and at any time: handlers, hooks,
middleware, the server's lifespan, background code, before a server is compiled
against the container as well as after (it is autowired as a singleton, and
compiling pins that one). It publishes typed events on the SDK's
``SubscriptionBus`` of every server serving the container; each server delivers
them to the clients that asked, in their protocol era, and only what each may
see (``mcp_adapter.notifications.listen``, ``mcp_adapter.notifications.sessions``).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from anyio.lowlevel import EventLoopToken, current_token
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from container import Container, Lifetime
from mcp_adapter.notifications.threads import DONE, reach, running_loop


@dataclass(frozen=True, slots=True)
class _Outlet:
    """A bus events go to, and the loop its listeners live on."""

    bus: SubscriptionBus
    token: EventLoopToken


class Notifier:
    """Announces changes: a resource's content, or the list of tools, resources or prompts.

    Each method returns an awaitable: ``await notifier.tool_list_changed()`` in
    async code; in a sync handler (a worker thread) or any other thread, the
    plain call ``notifier.tool_list_changed()`` publishes before it returns.
    With no server serving (no client can listen), a call does nothing: the
    announcement is dropped, not kept for a server that starts later.

    >>> import anyio
    >>> anyio.run(lambda: Notifier().resource_updated("notes://1"))  # nobody listens: a no-op
    """

    __lifetime__ = Lifetime.SINGLETON
    """One per container, also when nothing bound it: ``container.get(Notifier)`` before
    a server is compiled gives the one that server's buses are attached to."""

    def __init__(self) -> None:
        self._outlets: dict[int, tuple[_Outlet, int]] = {}
        self._lock = threading.Lock()

    def resource_updated(self, uri: str) -> Awaitable[None]:
        """The resource at ``uri`` changed: clients subscribed to it may read it again."""
        if not isinstance(uri, str) or not uri:
            raise TypeError(f"resource_updated() takes the resource's URI as a string, not {uri!r}")
        return self.publish(ResourceUpdated(uri=uri))

    def resource_list_changed(self) -> Awaitable[None]:
        """The list of resources (or resource templates) changed."""
        return self.publish(ResourcesListChanged())

    def tool_list_changed(self) -> Awaitable[None]:
        """The list of tools changed (a tool was added, removed, shown or hidden)."""
        return self.publish(ToolsListChanged())

    def prompt_list_changed(self) -> Awaitable[None]:
        """The list of prompts changed."""
        return self.publish(PromptsListChanged())

    def publish(self, event: ServerEvent) -> Awaitable[None]:
        """Publish one of the SDK's events (``mcp.shared.subscriptions``) on every bus."""
        with self._lock:
            outlets = [outlet for outlet, _ in self._outlets.values()]
        if not outlets:
            return DONE
        if running_loop() is None:  # a worker thread, or a thread of the caller's own
            for outlet in outlets:
                reach(outlet.token, outlet.bus.publish, event)
            return DONE
        return self._publish_all(outlets, event)

    @staticmethod
    async def _publish_all(outlets: list[_Outlet], event: ServerEvent) -> None:
        for outlet in outlets:
            await reach(outlet.token, outlet.bus.publish, event)

    def attach(self, bus: SubscriptionBus) -> Callable[[], None]:
        """Publish on ``bus`` from now on; returns the call that stops it (idempotent).

        Called on the event loop the bus's listeners live on: every serving
        path does it when it starts (a bus attached twice is published to once,
        until both detached). Attach a bus yourself to publish from a process
        that serves nothing, e.g. a worker sharing a Redis bus with the servers.
        """
        token = current_token()
        key = id(bus)
        with self._lock:
            outlet, count = self._outlets.get(key, (_Outlet(bus, token), 0))
            self._outlets[key] = (outlet, count + 1)
        detached = False

        def detach() -> None:
            nonlocal detached
            with self._lock:
                if detached:
                    return
                detached = True
                _, left = self._outlets.pop(key)
                if left > 1:
                    self._outlets[key] = (outlet, left - 1)

        return detach


def notifier_of(container: Container) -> Notifier | None:
    """The container's ``Notifier``, the one ``container.get(Notifier)`` gave before (or a
    new one), pinned on first use (``container.instance``: it outlives ``close()``);
    ``None`` when a test put something else in its place (then nothing is published on a
    bus)."""
    if container.binding(Notifier) is None:
        notifier = container.get(Notifier)
        container.instance(Notifier, notifier)
        return notifier
    found = container.get(Notifier)
    return found if isinstance(found, Notifier) else None
