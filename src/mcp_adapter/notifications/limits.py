"""How much one client, and all of them, may hold open: listen streams and subscribed URIs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

from mcp_adapter.declare.request import McpRequest

DEFAULT_MAX_LISTENERS = 1000
DEFAULT_MAX_LISTENERS_PER_CLIENT = 10
DEFAULT_MAX_URIS = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionLimits:
    """The bounds of subscriptions; ``http_app(subscription_limits=...)`` and
    ``serve_stdio(subscription_limits=...)`` take them.

    A ``subscriptions/listen`` request beyond ``max_listeners`` open streams in
    all, or beyond ``max_listeners_per_client`` for its client (the token's
    principal, else the peer address; one client over stdio), is refused with a
    JSON-RPC error before anything is streamed. So is a listen request, or a
    2025-11-25 session's ``resources/subscribe``, beyond ``max_uris`` resource URIs.
    """

    max_listeners: int = DEFAULT_MAX_LISTENERS
    """Open ``subscriptions/listen`` streams at most, all clients together."""
    max_listeners_per_client: int = DEFAULT_MAX_LISTENERS_PER_CLIENT
    """Open ``subscriptions/listen`` streams at most per client."""
    max_uris: int = DEFAULT_MAX_URIS
    """Resource URIs one listen stream, or one 2025-11-25 session, may watch."""

    def __post_init__(self) -> None:
        for name in ("max_listeners", "max_listeners_per_client", "max_uris"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")


def client_of(request: McpRequest) -> Hashable:
    """Who a request comes from: the authenticated principal, else the peer's address,
    else the one client of a transport without either (stdio, in process)."""
    token = request.authentication
    if token is not None:
        claims = token.get("claims") or {}
        issuer = claims.get("iss")
        return ("principal", token.get("client_id"), issuer, token.get("subject"))
    client = getattr(request.http_request, "client", None)
    if client is not None:
        return ("peer", client.host)
    return ("local",)


class ListenerQuota:
    """Counts open listen streams per client and in all; ``take`` refuses past the limits."""

    def __init__(self, limits: SubscriptionLimits) -> None:
        self.limits = limits
        self.total = 0
        self.by_client: Counter[Hashable] = Counter()

    def take(self, client: Hashable) -> str | None:
        """Count one more stream for ``client``; the reason it may not have one, else ``None``."""
        if self.total >= self.limits.max_listeners:
            return f"the server has {self.total} subscription streams open, its limit"
        if self.by_client[client] >= self.limits.max_listeners_per_client:
            limit = self.limits.max_listeners_per_client
            return f"this client has {limit} subscription streams open, its limit"
        self.total += 1
        self.by_client[client] += 1
        return None

    def give_back(self, client: Hashable) -> None:
        self.total -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]
