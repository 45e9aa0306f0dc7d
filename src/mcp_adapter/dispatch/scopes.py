"""What a call runs in: its request snapshot and its container scope, opened inside the
scope of the 2025-11-25 session it arrived on when the container has session bindings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from mcp.server.auth.provider import AccessToken

from container import Container, Scope, SessionScope
from mcp_adapter.compat import connection_of
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.compiled.context import RequestValues
from mcp_adapter.compiled.handles import HandleDesk
from mcp_adapter.declare.request import McpRequest, Transport
from mcp_adapter.dispatch.snapshot import is_modern, snapshot

Given: TypeAlias = Mapping[Any, Any]
"""Context values request-stage layers gave a call, by type."""

_SESSION_KEY = "mcp_adapter.session"
"""Where a connection's ``state`` keeps its session scope."""


class Scopes:
    """Part of the dispatcher (``core.DispatchCore``): a call's request and its scope."""

    catalog: Catalog
    container: Container
    transport: Transport
    caller: AccessToken | None
    handles: HandleDesk
    _sessions: bool
    """Whether the container has session-scoped bindings (``core.DispatchCore._load``)."""

    def request(self, ctx: Any, given: Given | None = None, **fields: Any) -> McpRequest:
        """The request snapshot; ``given``: the context values request-stage layers gave."""
        return snapshot(
            ctx,
            server_id=self.catalog.name,
            default_transport=self.transport,
            caller=self.caller,
            provided=given,
            **fields,
        )

    def scope(
        self, ctx: Any, request: McpRequest | None, session: SessionScope | None = None
    ) -> Scope:
        """The scope of one call: given the request's context values when it has one, and
        opened in ``session`` (a state handle's) when given, else in the MCP session's
        scope when the container has session-scoped bindings."""
        values = None if request is None else RequestValues(request, self.caller, self.handles)
        if session is not None:
            return session.scope(context=values)
        if self._sessions:
            session = self._session(ctx)
            if session is not None:
                return session.scope(context=values)
        return self.container.scope() if values is None else self.container.scope(values)

    def _session(self, ctx: Any) -> SessionScope | None:
        """The session scope of the 2025-11-25 connection ``ctx`` arrived on, made on its
        first request and closed with it (DELETE, idle timeout, client gone, shutdown).

        2026-07-28 has no session: each request scope is its own (``Lifetime.SESSION``
        values then live as long as the request), as on any transport without one.
        """
        if is_modern(ctx):
            return None
        connection = connection_of(ctx)
        if connection is None:
            return None
        session: SessionScope | None = connection.state.get(_SESSION_KEY)
        if session is None:
            session = self.container.session()
            connection.state[_SESSION_KEY] = session
            connection.exit_stack.push_async_callback(session.aclose)
        return session
