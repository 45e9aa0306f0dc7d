"""The SDK's session manager, giving each session its own view of one :class:`SessionEventStore`.

``StreamableHTTPSessionManager`` hands its one ``event_store`` to every
transport it creates, and the transport calls the store without saying which
session it serves. So this manager creates its transports with no store
(``event_store=None`` to the SDK), gives each new session's transport a view of
its own (before the transport has handled anything), and closes that view
however the session ends. The SDK's private parts this takes (the session
hooks, the transport's store) are in :mod:`mcp_adapter.compat`.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server as SdkServer
from mcp.server.streamable_http import StreamableHTTPServerTransport

from mcp_adapter.compat import SessionHooksManager, set_event_store
from mcp_adapter.serving.events import SessionEvents, SessionEventStore


class SessionScopedEventsManager(SessionHooksManager):
    """A stateful session manager whose sessions resume only their own streams."""

    def __init__(self, app: SdkServer[Any], events: SessionEventStore, **options: Any) -> None:
        super().__init__(app, event_store=None, stateless=False, **options)
        self.events = events
        self._views: dict[str, SessionEvents] = {}

    def session_opened(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        view = self.events.open_session()
        self._views[session_id] = view
        set_event_store(transport, view)

    async def session_closed(self, session_id: str) -> None:
        view = self._views.pop(session_id, None)
        if view is not None:
            with anyio.CancelScope(shield=True):
                await view.close()
