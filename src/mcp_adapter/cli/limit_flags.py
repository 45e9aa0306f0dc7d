"""``serve``'s limits: one setting per :class:`~mcp_adapter.serving.limits.HttpLimits` field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.options import ServeOptions
from mcp_adapter.cli.sources import Resolved, Setting
from mcp_adapter.serving import limits as defaults


@dataclass(frozen=True, slots=True)
class LimitOption:
    name: str
    """The ``ServeOptions`` field and ``http_app`` keyword."""
    kind: type[int] | type[float]
    metavar: str
    help: str
    stateful_only: bool = False
    http_only: bool = True

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


LIMIT_OPTIONS = (
    LimitOption(
        "header_timeout",
        float,
        "SECONDS",
        "close a connection whose request headers are not complete after this long "
        f"(default {defaults.DEFAULT_HEADER_TIMEOUT:g})",
    ),
    LimitOption(
        "body_timeout",
        float,
        "SECONDS",
        "answer 408 to a request whose body has not arrived after this long "
        f"(default {defaults.DEFAULT_BODY_TIMEOUT:g})",
    ),
    LimitOption(
        "keep_alive_timeout",
        int,
        "SECONDS",
        "close an idle keep-alive connection after this long "
        f"(default {defaults.DEFAULT_KEEP_ALIVE_TIMEOUT})",
    ),
    LimitOption(
        "max_connections",
        int,
        "N",
        "open connections at most (default: the file-descriptor limit, raised to its hard "
        f"limit, less max({defaults.FD_RESERVE}, a tenth))",
    ),
    LimitOption(
        "shutdown_timeout",
        float,
        "SECONDS",
        "on SIGTERM, wait this long for calls in flight before cancelling them (HTTP), "
        "then this long for the shutdown (sessions, lifespan, singletons) before exiting "
        f"at once (default {defaults.DEFAULT_SHUTDOWN_TIMEOUT:g}); stdio too",
        http_only=False,
    ),
    LimitOption(
        "max_sse_streams",
        int,
        "N",
        f"open GET (SSE) streams at most (default {defaults.DEFAULT_MAX_SSE_STREAMS}); "
        "stateless servers answer GET with 405",
    ),
    LimitOption(
        "max_sessions",
        int,
        "N",
        f"open sessions at most, 503 beyond (default {defaults.DEFAULT_MAX_SESSIONS})",
        stateful_only=True,
    ),
    LimitOption(
        "max_sessions_per_client",
        int,
        "N",
        "open sessions per client (token principal, else address) at most, 429 beyond "
        f"(default {defaults.DEFAULT_MAX_SESSIONS_PER_CLIENT})",
        stateful_only=True,
    ),
    LimitOption(
        "max_calls",
        int,
        "N",
        "calls in flight at most, refused with JSON-RPC error -32004 beyond "
        f"(default {defaults.DEFAULT_MAX_CALLS})",
    ),
    LimitOption(
        "max_calls_per_client",
        int,
        "N",
        "calls in flight per client (token principal, else address) at most, -32004 beyond "
        f"(default {defaults.DEFAULT_MAX_CALLS_PER_CLIENT})",
    ),
    LimitOption(
        "session_idle_timeout",
        float,
        "SECONDS",
        "close a session with no request for this long "
        f"(default {defaults.DEFAULT_SESSION_IDLE_TIMEOUT:g})",
        stateful_only=True,
    ),
    LimitOption(
        "handle_idle_timeout",
        float,
        "SECONDS",
        "finalize a state handle with no call for this long "
        f"(default {defaults.DEFAULT_HANDLE_IDLE_TIMEOUT:g})",
    ),
    LimitOption(
        "max_handles",
        int,
        "N",
        f"open state handles at most, a tool error beyond (default {defaults.DEFAULT_MAX_HANDLES})",
    ),
    LimitOption(
        "max_handles_per_client",
        int,
        "N",
        "open state handles per client (token principal, else address) at most "
        f"(default {defaults.DEFAULT_MAX_HANDLES_PER_CLIENT})",
    ),
)


LIMIT_SETTINGS = tuple(
    Setting(
        option.name,
        option.flag,
        "int" if option.kind is int else "float",
        option.help + (" (--stateful)" if option.stateful_only else ""),
        option.metavar,
    )
    for option in LIMIT_OPTIONS
)
"""The limits as ``serve`` settings: each a flag and an ``MCP_ADAPTER_*`` variable."""


def limits_given(options: ServeOptions) -> list[str]:
    """The names of the HTTP-only limits set (by flag or variable)."""
    return [
        option.name
        for option in LIMIT_OPTIONS
        if option.http_only and getattr(options, option.name) is not None
    ]


def check_limits(options: ServeOptions, given: Resolved) -> None:
    for option in LIMIT_OPTIONS:
        value = getattr(options, option.name)
        if value is None:
            continue
        if not value > 0:
            raise CliError(f"{given.said(option.name, value)} is not positive")
        if option.stateful_only and not options.stateful:
            raise CliError(f"{given.label(option.name)} applies to sessions", "add --stateful")


def limit_kwargs(options: ServeOptions) -> dict[str, Any]:
    """The ``http_app`` keywords for the limits given; the others keep ``http_app``'s defaults."""
    return {
        option.name: value
        for option in LIMIT_OPTIONS
        if (value := getattr(options, option.name)) is not None
    }
