"""Opaque tokens checked by asking the authorization server (OAuth 2.0 Token
Introspection, RFC 7662), with the answers cached for a short while.

The verifier authenticates itself to the endpoint (``client_secret_basic`` or
``client_secret_post``), posts the token, and accepts it only when the answer says
``"active": true`` and nothing in it contradicts that (``exp`` passed, ``nbf`` to
come, another issuer or audience). An accepted answer is kept under a hash of the
token (never the token itself), for ``cache_ttl`` seconds at most and never past the
token's own ``exp``; the cache holds ``cache_size`` answers at most, the least
recently used going first. Refusals are not cached.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

import anyio
import httpx2
from mcp.server.auth.provider import AccessToken

from mcp_adapter.serving.token_claims import (
    DEFAULT_MAX_TOKEN_SIZE,
    DEFAULT_TIMEOUT,
    VerificationError,
    access_token,
    check_audience,
    check_endpoint,
    check_numeric_dates,
    check_seconds,
    exchange_json,
    vouched_for,
)

DEFAULT_CACHE_TTL = 60.0
"""Seconds an accepted answer is reused at most (a revoked token lives this long)."""
DEFAULT_CACHE_SIZE = 10_000
DEFAULT_MAX_CONCURRENT = 16
"""Introspection requests in flight at once; a token waiting longer than ``timeout``
for a place is refused."""
DEFAULT_INTROSPECTION_LEEWAY = 0.0


@dataclass(frozen=True, slots=True)
class IntrospectionVerifier:
    """Asks ``endpoint`` (RFC 7662) about each token it has no fresh answer for.

    ``BearerAuth(IntrospectionVerifier("https://auth.example.com/introspect",
    client_id="mcp-server", client_secret=secret, resource="https://mcp.example.com/mcp"))``.
    The ``AccessToken`` carries the answer's ``client_id``, ``sub`` as ``subject``,
    the scopes of ``scope``, ``exp``, ``resource`` when configured, and every member
    of the answer as ``claims``. An endpoint that is down, slow (over ``timeout``) or
    answers nonsense refuses the token: ``401``, never an error.
    """

    endpoint: str
    """The introspection endpoint (``https://``; ``http://`` to loopback only, unless
    ``allow_http``)."""
    _: KW_ONLY
    client_id: str
    """This server's client id at the authorization server."""
    client_secret: str = field(repr=False)
    client_auth: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    """How the client authenticates: HTTP Basic (the default) or in the form body."""
    issuer: str | None = None
    """When given, the answer's ``iss`` must be exactly this."""
    audience: str | Sequence[str] = ()
    """When given, the answer's ``aud`` must hold one of these."""
    resource: str | None = None
    """This server's resource URL (RFC 8707): the answer's ``aud`` must hold it."""
    leeway: float = DEFAULT_INTROSPECTION_LEEWAY
    """Seconds of clock difference tolerated on ``exp`` and ``nbf``."""
    cache_ttl: float = DEFAULT_CACHE_TTL
    cache_size: int = DEFAULT_CACHE_SIZE
    timeout: float = DEFAULT_TIMEOUT
    """Seconds a token waits for its answer at most, a place in line included."""
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    max_token_size: int = DEFAULT_MAX_TOKEN_SIZE
    allow_http: bool = False
    _state: _Answers = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_endpoint("endpoint", self.endpoint, self.allow_http)
        if not self.client_id or not self.client_secret:
            raise ValueError("client_id and client_secret authenticate this server to the endpoint")
        if self.client_auth not in ("client_secret_basic", "client_secret_post"):
            raise ValueError("client_auth is 'client_secret_basic' or 'client_secret_post'")
        audience = (self.audience,) if isinstance(self.audience, str) else tuple(self.audience)
        object.__setattr__(self, "audience", audience)
        check_seconds("leeway", self.leeway, zero_ok=True)
        check_seconds("cache_ttl", self.cache_ttl, zero_ok=True)
        check_seconds("timeout", self.timeout)
        if self.max_concurrent <= 0 or self.max_token_size <= 0:
            raise ValueError("max_concurrent and max_token_size must be positive")
        if self.cache_size < 0:
            raise ValueError("cache_size must be 0 (no cache) or more")
        object.__setattr__(self, "_state", _Answers(self.cache_size, self.max_concurrent))

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's ``AccessToken``, or ``None`` for any token this verifier cannot vouch for."""
        return await vouched_for(token, self.max_token_size, self._verify)

    async def _verify(self, token: str) -> AccessToken:
        key = hashlib.sha256(token.encode()).digest()
        accepted = self._state.get(key)
        if accepted is None:
            accepted = self._accept(await self._ask(token))
            lifetime = self.cache_ttl
            if accepted.expires_at is not None:
                lifetime = min(lifetime, accepted.expires_at - time.time())
            self._state.put(key, accepted, lifetime)
        return accepted.model_copy(update={"token": token})

    async def _ask(self, token: str) -> Any:
        data = {"token": token, "token_type_hint": "access_token"}
        auth: httpx2.Auth | None = None
        if self.client_auth == "client_secret_basic":
            auth = httpx2.BasicAuth(self.client_id, self.client_secret)
        else:
            data |= {"client_id": self.client_id, "client_secret": self.client_secret}
        try:
            with anyio.fail_after(self.timeout):  # the wait for a place counts
                async with self._state.slots:
                    return await exchange_json(
                        "POST", self.endpoint, timeout=self.timeout, data=data, auth=auth
                    )
        except TimeoutError:
            raise VerificationError(f"no answer from {self.endpoint} in {self.timeout} s") from None

    def _accept(self, answer: Any) -> AccessToken:
        """The token the answer describes (without the token itself), or why not."""
        if not isinstance(answer, dict):
            raise VerificationError("the introspection answer is not a JSON object")
        if answer.get("active") is not True:
            raise VerificationError("the token is not active")
        check_numeric_dates(answer, "exp", "nbf")
        now = time.time()
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if exp is not None and exp <= now - self.leeway:
            raise VerificationError("the token has expired")
        if nbf is not None and nbf > now + self.leeway:
            raise VerificationError("the token is not valid yet")
        if self.issuer is not None and answer.get("iss") != self.issuer:
            raise VerificationError("the token was issued by another issuer")
        token_type = answer.get("token_type")
        if isinstance(token_type, str) and "refresh" in token_type.lower():
            raise VerificationError("a refresh token is no access token")
        resource = check_audience(answer, tuple(self.audience), self.resource)
        return access_token(answer, "", resource, "client_id")


class _Answers:
    """Accepted answers by token hash, each until its deadline; the fewest recently used
    go first past ``size``. And the places for requests to the endpoint."""

    __slots__ = ("_entries", "size", "slots")

    def __init__(self, size: int, max_concurrent: int) -> None:
        self.size = size
        self.slots = anyio.Semaphore(max_concurrent)
        self._entries: OrderedDict[bytes, tuple[AccessToken, float]] = OrderedDict()

    def get(self, key: bytes) -> AccessToken | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        token, deadline = entry
        if time.monotonic() >= deadline:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return token

    def put(self, key: bytes, token: AccessToken, lifetime: float) -> None:
        if lifetime <= 0 or self.size == 0:
            return
        self._entries[key] = (token, time.monotonic() + lifetime)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
