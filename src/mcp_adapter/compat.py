"""What the adapter reads of the ``mcp`` SDK and of Docket beyond their public API, in one place.

Each piece names the private attribute it reads and the version it was checked
against; an upgrade that moves one fails here, not deep in a call.
The SDK's module-level names (``mcp.server.stdio``'s, the session manager's methods)
are checked when this module is imported, so a moved one fails the import;
the instance attributes (``_connection``, ``_server_instances``,
``_event_store``) are read only here.

``MCPServer``'s tool manager (``_tool_manager``: its ``_tools`` table) and its
low-level server (``_lowlevel_server``) are read here for ``put_on_server``. The
uvicorn and sse-starlette reach-ins are in :mod:`mcp_adapter.serving.internals`.

Docket's (the ``tasks`` extra, imported only where called) are the pieces of
``Execution.sync()`` that :mod:`mcp_adapter.tasks.reading` reads a task with in one
round trip; tests/tasks/test_reading.py checks their call shapes on the installed
Docket.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Set
from importlib.metadata import version
from typing import IO, Any, TypeVar

from mcp.server import stdio as sdk_stdio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from mcp_adapter.distribution import needs_extra

T = TypeVar("T")

CHECKED_AGAINST = "2.3.0"
SDK_VERSION = version("mcp")

if SDK_VERSION != CHECKED_AGAINST:  # pragma: no cover - the lock pins the checked version
    import warnings

    warnings.warn(
        f"mcp_adapter was checked against mcp {CHECKED_AGAINST}; mcp {SDK_VERSION} may "
        "have moved what mcp_adapter.compat reads",
        stacklevel=2,
    )

_PRIVATE_NAMES: tuple[tuple[Any, str], ...] = (
    (sdk_stdio, "_claim_fd"),
    (sdk_stdio, "_open_stdin_diversion"),
    (sdk_stdio, "_UnownedTextWrapper"),
    (StreamableHTTPSessionManager, "_admit_session"),
    (StreamableHTTPSessionManager, "_discard_session"),
)
_missing = [
    f"{owner.__name__}.{name}" for owner, name in _PRIVATE_NAMES if not hasattr(owner, name)
]
if _missing:  # pragma: no cover - the lock pins the checked version
    raise ImportError(
        f"mcp {SDK_VERSION} has no {', '.join(_missing)}, which "
        f"mcp_adapter.compat uses (checked against mcp {CHECKED_AGAINST})"
    )


def connection_of(ctx: Any) -> Any:
    """The SDK ``Connection`` a request arrived on (``None`` when it has none).

    ``ServerSession`` keeps it as ``_connection`` (mcp 2.3.0); its ``state`` and
    ``exit_stack`` are public and outlive a request exactly as long as the MCP
    session: the handshake's connection on stdio and stateful HTTP, one request
    on the stateless paths.
    """
    session = getattr(ctx, "session", None)
    return getattr(session, "_connection", None)


def claim_stdin() -> tuple[IO[str], Callable[[], None] | None]:
    """The process's stdin as the SDK's ``stdio_server`` claims it, as text, and its release.

    ``mcp.server.stdio._claim_fd`` (with ``_open_stdin_diversion``, mcp 2.3.0)
    serves the wire from a private duplicate of fd 0 while fd 0 points at the
    null device, and raises on a second concurrent claim;
    ``_UnownedTextWrapper`` decodes it without closing the buffer it does not
    own. The release (``None`` when nothing is to restore) points fd 0 back.
    """
    buffer, release = sdk_stdio._claim_fd(0, sys.stdin, "rb", sdk_stdio._open_stdin_diversion)
    text = sdk_stdio._UnownedTextWrapper(buffer, encoding="utf-8", errors="replace")
    return text, release


def open_session_ids(manager: StreamableHTTPSessionManager) -> Set[str]:
    """The ids of the sessions ``manager`` holds open now (gone once DELETEd or expired).

    ``StreamableHTTPSessionManager._server_instances`` (mcp 2.3.0): the table of
    live sessions, which the SDK prunes on DELETE and expiry.
    """
    return manager._server_instances.keys()


def set_event_store(transport: StreamableHTTPServerTransport, store: Any) -> None:
    """Give one transport its own event store (``StreamableHTTPServerTransport._event_store``).

    Only before the transport has handled anything; see :class:`SessionHooksManager`.
    """
    transport._event_store = store


class SessionHooksManager(StreamableHTTPSessionManager):
    """The SDK's session manager, telling a subclass when a stateful session opens and ends.

    Overrides the private ``_admit_session`` (which creates a session's
    transport) and ``_discard_session`` (which the SDK calls however a session
    ends: DELETE, idle timeout, crash, failed opening), mcp 2.3.0, and calls
    :meth:`session_opened` and :meth:`session_closed` from them.
    """

    def session_opened(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        """A session's transport was created and has handled nothing yet."""

    async def session_closed(self, session_id: str) -> None:
        """A session ended, after the SDK discarded it (even when that failed)."""

    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            self.session_opened(transport.mcp_session_id, transport)
        return transport

    async def _discard_session(
        self, session_id: str, transport: StreamableHTTPServerTransport
    ) -> None:
        try:
            await super()._discard_session(session_id, transport)
        finally:
            await self.session_closed(session_id)


def mcpserver_tools(server: Any) -> dict[str, Any]:
    """``MCPServer``'s table of its tools by name (``_tool_manager._tools``, mcp 2.3.0):
    what ``put_on_server`` adds its entries to, so the server lists and calls them."""
    tools: dict[str, Any] = server._tool_manager._tools
    return tools


def mcpserver_tool(server: Any, name: str) -> Any:
    """The tool entry ``MCPServer`` serves under ``name`` (``None`` when none)."""
    return server._tool_manager.get_tool(name)


def mcpserver_lowlevel(server: Any) -> Any:
    """The low-level ``Server`` an ``MCPServer`` answers with (``_lowlevel_server``)."""
    return server._lowlevel_server


def built_unvalidated(model: type[T], **fields: Any) -> T:
    """An SDK model built without validation (``model_construct``): for an ``MCPServer``
    tool entry whose fields are already valid and whose ``description`` may be ``None``,
    which its validation would refuse."""
    return model.model_construct(**fields)  # type: ignore[attr-defined, no-any-return]


# Docket (pydocket): read from 0.27.2; as used here since 0.25.0 (0.24.1 has none of them).
# Public API that would replace all three: Docket.get_execution(key), at a second round trip.


def queue_progress_read(docket: Any, key: str, pipe: Any) -> None:
    """Queue the read of task ``key``'s progress hash onto ``pipe`` (a Redis pipeline of
    ``docket``'s); the reply is what :func:`apply_execution_reads` takes as ``progress``."""
    with needs_extra("tasks", "reading a task"):
        from docket.execution import ExecutionProgress  # type: ignore[attr-defined]

    # pydocket 0.27.2 ExecutionProgress._read(pipe); public: ExecutionProgress.sync(), own trip
    ExecutionProgress(docket, key)._read(pipe)


def apply_execution_reads(
    execution: Any, runs: Mapping[bytes, bytes], progress: Mapping[bytes, bytes]
) -> None:
    """Set ``execution``'s state, worker, timestamps, error, result key and progress from
    one read of its runs hash and of its progress hash, as ``Execution.sync()`` does."""
    # pydocket 0.27.2 Execution._apply_runs_data(data); public: Execution.sync(), own trip
    execution._apply_runs_data(runs)
    # pydocket 0.27.2 ExecutionProgress._apply(data); public: ExecutionProgress.sync(), own trip
    execution.progress._apply(progress)
