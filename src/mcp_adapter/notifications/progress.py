"""``Progress``: the progress of the request being served, for the client that asked for it."""

from __future__ import annotations

from collections.abc import Awaitable

from mcp_adapter.declare.request import McpRequest
from mcp_adapter.notifications.threads import DONE, loop_token, reach


class Progress:
    """Reports how far the request has come: ``notifications/progress`` to its client.

    Inject it by type in a handler (or a hook, a middleware, a scoped service).
    A report reaches the client only when the client asked for progress on this
    request (a ``progressToken`` in ``_meta``, or ``progress_callback=`` on the
    SDK client's call); otherwise it does nothing, so a handler never checks.
    ``await progress.report(1, 3)`` in async code; in a sync handler (a worker
    thread) the plain call ``progress.report(1, 3)`` sends before it returns.
    """

    __slots__ = ("_request", "_token")

    def __init__(self, request: McpRequest) -> None:
        self._request = request
        self._token = loop_token()

    def report(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> Awaitable[None]:
        """``progress`` done (of ``total``, when known), with an optional ``message``."""
        session = getattr(self._request.context, "session", None)
        if session is None:  # not served through the SDK: nobody to tell
            return DONE
        return reach(self._token, session.report_progress, progress, total, message)
