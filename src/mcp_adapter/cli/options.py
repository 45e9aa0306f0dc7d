"""What ``serve`` was asked for, in a form that survives a trip through the environment.

``uvicorn --workers N`` imports the app by name in every worker process; the
workers rebuild it from :data:`ENV_VAR` (see ``mcp_adapter.cli.asgi``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

ENV_VAR = "MCP_ADAPTER_SERVE"


@dataclass(frozen=True, slots=True)
class ServeOptions:
    target: str
    container: str | None = None
    http: bool = False
    identity: str | None = None
    """stdio's caller: ``os-user`` or ``MODULE:ATTR`` (``None``: anonymous)."""
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    workers: int = 1
    reload: bool = False
    toolsets: tuple[str, ...] | None = None
    stateful: bool = False
    json_response: bool = False
    auth: str | None = None
    scopes: tuple[str, ...] = ()
    anonymous: bool = False
    resource_url: str | None = None
    issuer_url: str | None = None
    allowed_hosts: tuple[str, ...] | None = None
    forwarded_allow_ips: tuple[str, ...] | None = None
    """Proxies whose ``X-Forwarded-*`` headers are trusted (``None``: nobody's)."""
    max_body_size: int | None = None
    request_state_keys: tuple[str, ...] = field(default=(), repr=False)
    """The ``requestState`` key ring, newest first (secrets: never printed)."""
    redis_url: str | None = field(default=None, repr=False)
    """``--redis``: may hold a password, so never printed."""
    redis_prefix: str | None = None
    redis_wait_replicas: int | None = None
    """``--redis-wait-replicas``: replicas that must hold an answered round (``None``: 0)."""
    enqueue_only: bool = False
    """``--enqueue-only``: tasks are enqueued here and run by ``mcp-adapter worker``."""
    # Limits (None: http_app's default; see LIMIT_OPTIONS in cli/limit_flags.py)
    header_timeout: float | None = None
    body_timeout: float | None = None
    keep_alive_timeout: int | None = None
    max_connections: int | None = None
    shutdown_timeout: float | None = None
    max_sse_streams: int | None = None
    max_sessions: int | None = None
    max_sessions_per_client: int | None = None
    session_idle_timeout: float | None = None
    max_calls: int | None = None
    max_calls_per_client: int | None = None
    handle_idle_timeout: float | None = None
    max_handles: int | None = None
    max_handles_per_client: int | None = None
    sys_path: tuple[str, ...] = field(default=(), compare=False)
    debug: bool = field(default=False, compare=False)
    """``--debug``: the processes ``--reload`` and ``--workers`` start print tracebacks too."""

    def to_env(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ServeOptions:
        raw = environ.get(ENV_VAR)
        if not raw:
            raise RuntimeError(f"{ENV_VAR} is not set: start workers with `mcp-adapter serve`")
        data = json.loads(raw)
        for key in (
            "toolsets",
            "scopes",
            "allowed_hosts",
            "forwarded_allow_ips",
            "request_state_keys",
            "sys_path",
        ):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        return cls(**data)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"
