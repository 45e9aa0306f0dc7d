"""The HTTP limits a server enforces against slow, idle and greedy clients, with safe defaults.

``http_app(..., limits=HttpLimits(...))`` takes them. Connection-level limits
(``header_timeout``, ``max_connections``, ``keep_alive_timeout``,
``shutdown_timeout``) belong to the server: ``http_app`` records them on
``app.state.mcp_http_limits`` and :func:`mcp_adapter.serving.uvicorn_config`
(which ``mcp-adapter serve`` uses) applies them to uvicorn. The others are
enforced by the app itself.
"""

from __future__ import annotations

import math
import resource
from dataclasses import dataclass

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from mcp_adapter.stores.handles import DEFAULT_HANDLE_IDLE_TIMEOUT as DEFAULT_HANDLE_IDLE_TIMEOUT
from mcp_adapter.stores.handles import DEFAULT_MAX_HANDLES as DEFAULT_MAX_HANDLES
from mcp_adapter.stores.handles import (
    DEFAULT_MAX_HANDLES_PER_CLIENT as DEFAULT_MAX_HANDLES_PER_CLIENT,
)
from mcp_adapter.stores.handles import HandleLimits

DEFAULT_MAX_BODY_SIZE: int = DEFAULT_MAX_REQUEST_BODY_SIZE
"""4 MiB, the SDK's default."""
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_KEEP_ALIVE_TIMEOUT = 5
DEFAULT_SHUTDOWN_TIMEOUT = 30.0
DEFAULT_MAX_SSE_STREAMS = 1000
DEFAULT_MAX_SESSIONS = 1000
DEFAULT_MAX_SESSIONS_PER_CLIENT = 100
DEFAULT_SESSION_IDLE_TIMEOUT = 1800.0
DEFAULT_MAX_CALLS = 2048
DEFAULT_MAX_CALLS_PER_CLIENT = 32
"""Below ``Server.threads`` (40 by default), so that one client's sync calls cannot hold
every worker thread."""
FD_RESERVE = 128
"""File descriptors kept back from the connection cap: logs, files, outgoing sockets."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpLimits:
    """Every limit ``http_app`` and ``mcp-adapter serve`` accept; ``None`` lifts a limit.

    ``max_connections=None`` means "derived from the file-descriptor limit"
    (:func:`connection_cap`), not unlimited. The session limits apply to a
    stateful app (``stateless=False``) only.
    """

    max_body_size: int = DEFAULT_MAX_BODY_SIZE
    """Bytes: a POST body larger than this is refused with ``413`` before it is buffered."""
    header_timeout: float | None = DEFAULT_HEADER_TIMEOUT
    """Seconds for a connection to send complete request headers (after opening, or after
    its previous answer), or it is closed (by :func:`uvicorn_config`'s protocol)."""
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT
    """Seconds for a request's whole body to arrive after its headers, or ``408``."""
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE_TIMEOUT
    """Seconds an idle keep-alive connection is kept (uvicorn's ``timeout_keep_alive``)."""
    max_connections: int | None = None
    """Open connections at most; one accepted beyond it is closed at once."""
    shutdown_timeout: float | None = DEFAULT_SHUTDOWN_TIMEOUT
    """Seconds calls in flight may take to finish on SIGTERM before they are cancelled."""
    max_sse_streams: int | None = DEFAULT_MAX_SSE_STREAMS
    """Open standalone ``GET`` (SSE) streams at most; one more gets ``503``."""
    max_sessions: int | None = DEFAULT_MAX_SESSIONS
    """Open sessions at most; a request opening one more gets ``503``."""
    max_sessions_per_client: int | None = DEFAULT_MAX_SESSIONS_PER_CLIENT
    """Open sessions per client (token principal, else peer address); one more gets ``429``."""
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT
    """Seconds a session with no request in flight is kept before it is closed."""
    max_calls: int | None = DEFAULT_MAX_CALLS
    """Calls in flight at most (``tools/call``, ``resources/read``, ``prompts/get``,
    ``completion/complete``), sync work a call left running past its timeout included;
    one more is refused at once with the JSON-RPC error ``-32004``."""
    max_calls_per_client: int | None = DEFAULT_MAX_CALLS_PER_CLIENT
    """Calls in flight per client (token principal, else peer address), counted as
    ``max_calls``; one more is refused with ``-32004``."""
    handle_idle_timeout: float | None = DEFAULT_HANDLE_IDLE_TIMEOUT
    """Seconds a state handle with no call in flight is kept after its last use, then
    finalized (docs/state.md)."""
    max_handles: int | None = DEFAULT_MAX_HANDLES
    """Open state handles at most; ``StateHandles.open()`` beyond is a tool error."""
    max_handles_per_client: int | None = DEFAULT_MAX_HANDLES_PER_CLIENT
    """Open state handles per client (token principal, else peer address)."""

    @property
    def handles(self) -> HandleLimits:
        """The state handle limits, as the handle store takes them."""
        return HandleLimits(
            idle_timeout=self.handle_idle_timeout,
            max_per_client=self.max_handles_per_client,
            max_handles=self.max_handles,
        )

    def __post_init__(self) -> None:
        timeouts = (
            "header_timeout",
            "body_timeout",
            "shutdown_timeout",
            "session_idle_timeout",
            "handle_idle_timeout",
        )
        for name in timeouts:
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds or None")
        if self.max_body_size < 1:
            raise ValueError("max_body_size must be a positive number of bytes")
        counts = (
            "max_connections",
            "max_sse_streams",
            "max_sessions",
            "max_sessions_per_client",
            "max_calls",
            "max_calls_per_client",
            "max_handles",
            "max_handles_per_client",
        )
        for name in counts:
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1 or None")
        if self.keep_alive_timeout < 1:
            raise ValueError("keep_alive_timeout must be at least 1 second")


def raise_fd_limit() -> int:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit; return the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # not allowed here (some containers): keep the soft limit
            pass
    return soft if soft != resource.RLIM_INFINITY else 65536


def connection_cap(fd_limit: int) -> int:
    """The default connection cap: ``FD_RESERVE`` (or a tenth, if more) below ``fd_limit``."""
    return max(1, fd_limit - max(FD_RESERVE, fd_limit // 10))
