"""``RateLimit``: calls per caller over time, counted in a pluggable ``RateStore``."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection
from typing import Any, Literal

from mcp_adapter.declare.middleware import Call, Next, Stage, checked_stage
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.errors import ToolError
from mcp_adapter.stores.rates import InMemoryRateStore, Rate, RateStore

__all__ = [
    "InMemoryRateStore",
    "Per",
    "Rate",
    "RateLimit",
    "RateStore",
    "client_key",
    "identity_key",
]

Per = Literal["identity", "client"] | Callable[[McpRequest], str]
"""Whose calls are counted together: see ``RateLimit``."""


def client_key(request: McpRequest) -> str:
    """``client:<address>`` of the HTTP client; ``client:<transport>`` off HTTP (stdio has
    one client). Behind a proxy the address is the proxy's unless the server trusts its
    forwarded headers (``serve --forwarded-allow-ips``; none are trusted by default).

    >>> client_key(McpRequest(transport="stdio"))
    'client:stdio'
    """
    http = request.http_request
    client = getattr(http, "client", None) if http is not None else None
    if client is not None:
        return f"client:{client.host}"
    if http is not None:
        return "client:unknown"
    return f"client:{request.transport}"


def identity_key(request: McpRequest) -> str:
    """``identity:<subject>`` of a signed-in caller, else the ``client_key``."""
    identity = request.identity
    return f"identity:{identity.subject}" if identity is not None else client_key(request)


class RateLimit:
    """Middleware that lets each caller make ``calls`` calls per ``period`` seconds.

    ``per`` decides who a caller is: ``"identity"`` (the signed-in subject, else the
    client), ``"client"`` (the HTTP client's address; off HTTP the transport: one key) or a
    function of the ``McpRequest`` returning a key. Keys are stored as
    ``<namespace>:<key>``: layers that share a store with different rates need their own
    ``namespace``. ``methods`` limits which calls count (``{"tools/call"}``); by default
    every call through the layer does (on ``Server.middleware``: listings too).

    ``stage`` (``"request"``, the default) counts every request of the server, unknown
    names, refused and invalid calls included, before any hook runs or any service is
    opened; ``"call"`` counts only calls that reached the handler's stage (the one way
    to put it on a single component).

    Over the limit it raises ``ToolError("Rate limit exceeded; retry after N s")``: a
    tool answers a tool error, other kinds ``-32603``. Arguments play no part in the key,
    so changing them does not escape the limit.
    """

    __slots__ = ("_key", "clock", "methods", "namespace", "rate", "stage", "store")

    def __init__(
        self,
        calls: int,
        period: float = 1.0,
        *,
        per: Per = "identity",
        store: RateStore | None = None,
        namespace: str = "mcp_adapter.rate",
        methods: Collection[str] | None = None,
        clock: Callable[[], float] = time.time,
        stage: Stage = "request",
    ) -> None:
        self.rate = Rate(calls, period)
        self.stage = checked_stage(stage, "RateLimit")
        self.store: RateStore = InMemoryRateStore() if store is None else store
        self.namespace = namespace
        self.methods = None if methods is None else frozenset(methods)
        self.clock = clock
        if per == "identity":
            self._key: Callable[[McpRequest], str] = identity_key
        elif per == "client":
            self._key = client_key
        elif callable(per):
            self._key = per
        else:
            raise ValueError(f"RateLimit per= is 'identity', 'client' or a function, not {per!r}")

    def key(self, request: McpRequest) -> str:
        """The store key the calls of ``request``'s caller are counted under."""
        return f"{self.namespace}:{self._key(request)}"

    async def __call__(self, call: Call, call_next: Next, request: McpRequest) -> Any:
        if self.methods is None or call.method in self.methods:
            wait = await self.store.hit(self.key(request), self.rate, self.clock())
            if wait is not None:
                raise ToolError(f"Rate limit exceeded; retry after {_seconds(wait)} s")
        return await call_next(call)


def _seconds(wait: float) -> str:
    """``wait`` rounded up to a tenth of a second: ``0.31`` is ``0.4``, ``2.0`` is ``2``."""
    return f"{max(math.ceil(round(wait * 10, 6)), 1) / 10:g}"
