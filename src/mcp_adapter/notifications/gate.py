"""What delivery asks of the dispatcher: who is listening, and whether they may see a resource.

The dispatcher answers (``Dispatcher.request`` and ``Dispatcher.readable``); this
folder only names the questions, so it imports nothing of dispatch.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Protocol

from mcp_adapter.declare.request import McpRequest

KeptRequests = MutableMapping[str, tuple[Any, McpRequest]]
"""A stream's requests by URI, kept across its deliveries (see ``ResourceGate.readable``)."""


class ResourceGate(Protocol):
    """Visibility of resources for one caller, decided as a read would decide it."""

    def request(self, ctx: Any) -> McpRequest:
        """The ``McpRequest`` snapshot of the request ``ctx`` describes (its caller)."""
        ...

    async def readable(
        self,
        ctx: Any,
        uri: str,
        request: McpRequest | None = None,
        kept: KeptRequests | None = None,
    ) -> bool:
        """Whether the caller of ``ctx`` would find ``uri``: a resource serves it, and its
        ``shouldRegister``/``authorize`` hooks neither hide nor refuse it for that caller.

        ``request``: ``request(ctx)``, when the caller built it already (a stream builds
        it once for all its deliveries); the hooks get it with the URI filled in.
        ``kept``: where the caller keeps that request per URI (a stream, for the URIs it
        subscribed to): made at the first delivery of a URI, the same at the next."""
        ...
