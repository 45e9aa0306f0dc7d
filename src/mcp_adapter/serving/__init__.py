"""Serving a catalog for real: the SDK's low-level server over stdio and streamable HTTP
(ASGI), with bearer auth and its token verifiers (JWT, introspection), limits, sessions,
resumable streams and toolsets."""

from typing import TYPE_CHECKING

from mcp_adapter.lazy_exports import on_first_use
from mcp_adapter.serving.auth import BearerAuth
from mcp_adapter.serving.events import (
    EventLog,
    InMemoryEventLog,
    InMemoryEventStore,
    Resumability,
    SessionEvents,
    SessionEventStore,
    StoredEvent,
)
from mcp_adapter.serving.host_security import default_transport_security
from mcp_adapter.serving.http import http_app, mcp_lifespan, run_mcp_apps
from mcp_adapter.serving.lifespan import serve_lifespan
from mcp_adapter.serving.limits import HttpLimits
from mcp_adapter.serving.local_identity import os_user
from mcp_adapter.serving.servable import Compilable, NotServableError, Servable, catalog_of
from mcp_adapter.serving.stdio import run_stdio, serve_stdio
from mcp_adapter.serving.toolsets import TOOLSETS_HEADER
from mcp_adapter.serving.uvicorn_config import uvicorn_config

if TYPE_CHECKING:
    from mcp_adapter.serving.introspection import IntrospectionVerifier
    from mcp_adapter.serving.jwt_verifier import JwtVerifier

_ON_FIRST_USE = {
    "mcp_adapter.serving.introspection": ("IntrospectionVerifier",),
    "mcp_adapter.serving.jwt_verifier": ("JwtVerifier",),
}
"""Imported when first asked for: pyjwt and its X.509 support cost every process that
serves without them a share of its start-up."""

__getattr__ = on_first_use(globals(), _ON_FIRST_USE)


__all__ = [
    "TOOLSETS_HEADER",
    "BearerAuth",
    "Compilable",
    "EventLog",
    "InMemoryEventLog",
    "HttpLimits",
    "IntrospectionVerifier",
    "JwtVerifier",
    "InMemoryEventStore",
    "NotServableError",
    "Resumability",
    "Servable",
    "SessionEventStore",
    "SessionEvents",
    "StoredEvent",
    "catalog_of",
    "default_transport_security",
    "http_app",
    "mcp_lifespan",
    "os_user",
    "run_mcp_apps",
    "run_stdio",
    "serve_lifespan",
    "serve_stdio",
    "uvicorn_config",
]
