"""The SDK's session manager, giving each session its own view of one :class:`SessionEventStore`.

SDK reach-in (mcp 2.3.0), all of it in this module: ``StreamableHTTPSessionManager``
hands its one ``event_store`` to every transport it creates, in its private
``_admit_session``, and the transport calls the store without saying which
session it serves. So this subclass creates its transports with no store
(``event_store=None`` to the SDK), sets each new transport's private
``_event_store`` to a view of its own session (before the transport has handled
anything), and closes that view in the private ``_discard_session``, which the
SDK calls however a session ends (DELETE, idle timeout, crash, failed opening).
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server as SdkServer
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from mcp_adapter.serving.events import SessionEvents, SessionEventStore


class SessionScopedEventsManager(StreamableHTTPSessionManager):
    """A stateful session manager whose sessions resume only their own streams."""

    def __init__(self, app: SdkServer[Any], events: SessionEventStore, **options: Any) -> None:
        super().__init__(app, event_store=None, stateless=False, **options)
        self.events = events
        self._views: dict[str, SessionEvents] = {}

    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            view = self.events.open_session()
            self._views[transport.mcp_session_id] = view
            transport._event_store = view  # the reach-in this module is for
        return transport

    async def _discard_session(
        self, session_id: str, transport: StreamableHTTPServerTransport
    ) -> None:
        try:
            await super()._discard_session(session_id, transport)
        finally:
            view = self._views.pop(session_id, None)
            if view is not None:
                with anyio.CancelScope(shield=True):
                    await view.close()
