"""JWT access tokens (RFC 9068) checked against the keys their issuer publishes (a JWKS URL).

The signature is checked with the key the token's ``kid`` names, in one of the
asymmetric algorithms the verifier accepts (never ``none``, never an HMAC: a public
key is no secret). The keys are fetched once and kept; a ``kid`` the set does not
have triggers one refetch, at most once per ``key_refresh_interval`` whatever the
number of tokens that name unknown keys, so rotated keys are picked up and forged
``kid`` values cost the issuer nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import anyio
import jwt
from jwt.algorithms import has_crypto
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
    log,
    vouched_for,
)

DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")
ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
DEFAULT_LEEWAY = 60.0
"""Seconds of clock difference tolerated on ``exp``, ``nbf`` and ``iat``."""
DEFAULT_KEY_REFRESH_INTERVAL = 60.0
"""At most one fetch of the key set per this many seconds (unknown ``kid`` or stale keys)."""
DEFAULT_KEYS_MAX_AGE = 3600.0
"""Keys older than this are fetched again before the next token is checked."""
MAX_KEYS = 100
"""Keys read from one key set at most."""

_KEY_FAMILIES: Mapping[str, tuple[str, ...]] = {
    "RSA": ("RS", "PS"),
    "EC": ("ES",),
    "OKP": ("EdDSA",),
}
"""Which algorithms a key of each ``kty`` may verify (``oct``, a shared secret, none)."""


@dataclass(frozen=True, slots=True)
class JwtVerifier:
    """Accepts a JWT signed by ``issuer``'s keys, meant for this server, and in date.

    ``BearerAuth(JwtVerifier("https://auth.example.com/.well-known/jwks.json",
    issuer="https://auth.example.com", audience="https://mcp.example.com/mcp"))``.
    A token is refused (``None``, so ``401``) unless: its ``alg`` is one of
    ``algorithms``; its ``kid`` names a signing key of the set at ``jwks_url`` made
    for that algorithm; the signature holds; ``iss`` is ``issuer``; ``exp`` has not
    passed and ``nbf`` has come (``leeway`` seconds either way); ``aud`` holds one
    of ``audience`` and, with ``resource`` (RFC 8707), that resource too.

    The ``AccessToken`` carries ``sub`` as ``subject``, ``client_id`` (or ``azp``),
    the scopes of ``scope`` (space-separated) or ``scp`` (a list), ``exp``,
    ``resource`` when configured, and every claim.
    """

    jwks_url: str
    """Where the issuer publishes its keys (``https://``; ``http://`` to loopback only,
    unless ``allow_http``)."""
    _: KW_ONLY
    issuer: str
    """The ``iss`` every token must carry, exactly."""
    audience: str | Sequence[str] = ()
    """Audiences this server answers to; a token's ``aud`` must hold one of them."""
    resource: str | None = None
    """This server's resource URL (RFC 8707): a token's ``aud`` must hold it, and it
    becomes ``AccessToken.resource`` (what ``BearerAuth(validate_token_resource=True)``
    compares). With ``resource`` alone, ``audience`` may stay empty."""
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS
    """Accepted signature algorithms, all asymmetric."""
    leeway: float = DEFAULT_LEEWAY
    key_refresh_interval: float = DEFAULT_KEY_REFRESH_INTERVAL
    keys_max_age: float = DEFAULT_KEYS_MAX_AGE
    timeout: float = DEFAULT_TIMEOUT
    """Seconds one fetch of the key set may take; a token waits at most this long."""
    max_token_size: int = DEFAULT_MAX_TOKEN_SIZE
    allow_http: bool = False
    """Fetch keys over plain ``http://`` from a host that is not loopback."""
    _keys: _KeySet = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not has_crypto:
            raise RuntimeError("JwtVerifier needs pyjwt's crypto backend: install cryptography")
        check_endpoint("jwks_url", self.jwks_url, self.allow_http)
        if not self.issuer:
            raise ValueError("issuer is required: the iss every token must carry")
        audience = (self.audience,) if isinstance(self.audience, str) else tuple(self.audience)
        object.__setattr__(self, "audience", audience)
        if not audience and self.resource is None:
            raise ValueError(
                "give audience or resource: a token meant for another service must be refused"
            )
        if isinstance(self.algorithms, str):
            raise TypeError("algorithms is a collection of names, not one string")
        algorithms = tuple(self.algorithms)
        refused = [name for name in algorithms if name not in ASYMMETRIC_ALGORITHMS]
        if refused or not algorithms:
            raise ValueError(
                f"algorithms {refused or algorithms!r} are not accepted: choose among"
                f" {sorted(ASYMMETRIC_ALGORITHMS)} (a key set holds public keys, so no"
                " HMAC, and never 'none')"
            )
        object.__setattr__(self, "algorithms", algorithms)
        check_seconds("leeway", self.leeway, zero_ok=True)
        for name in ("key_refresh_interval", "keys_max_age", "timeout"):
            check_seconds(name, getattr(self, name))
        if self.max_token_size <= 0:
            raise ValueError("max_token_size must be positive")
        keys = _KeySet(self.jwks_url, self.timeout, self.key_refresh_interval, self.keys_max_age)
        object.__setattr__(self, "_keys", keys)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's ``AccessToken``, or ``None`` for any token this verifier cannot vouch for."""
        return await vouched_for(token, self.max_token_size, self._verify)

    async def _verify(self, token: str) -> AccessToken:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise VerificationError("the token is not a JWT") from None
        algorithm, kid = header.get("alg"), header.get("kid")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            raise VerificationError(f"algorithm {algorithm!r} is not accepted")
        if not isinstance(kid, str):
            raise VerificationError("the token names no key (kid)")
        key = await self._keys.key(kid, algorithm)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.PyJWTError as error:
            raise VerificationError(f"{type(error).__name__}: {error}") from None
        check_numeric_dates(claims, "exp", "nbf", "iat")  # pyjwt takes "9999999999" and True
        resource = check_audience(claims, tuple(self.audience), self.resource)
        return access_token(claims, token, resource, "client_id", "azp")


class _KeySet:
    """The issuer's signing keys by ``kid``, fetched on demand and at most once per interval.

    A failed fetch keeps the keys already known (a token signed with one of them is
    still accepted) and is not retried before the interval has passed, so a key set
    endpoint that is down costs each token no wait but the first one's.
    """

    __slots__ = (
        "_attempted",
        "_fetched",
        "_keys",
        "_lock",
        "_prepared",
        "interval",
        "max_age",
        "timeout",
        "url",
    )

    def __init__(self, url: str, timeout: float, interval: float, max_age: float) -> None:
        self.url, self.timeout, self.interval, self.max_age = url, timeout, interval, max_age
        self._keys: dict[str, dict[str, Any]] = {}
        self._prepared: dict[tuple[str, str], jwt.PyJWK] = {}
        self._fetched = -math.inf
        self._attempted = -math.inf
        self._lock = anyio.Lock()

    async def key(self, kid: str, algorithm: str) -> jwt.PyJWK:
        if kid not in self._keys or time.monotonic() - self._fetched >= self.max_age:
            await self._refresh(kid)
        prepared = self._prepared.get((kid, algorithm))
        if prepared is not None:
            return prepared
        jwk = self._keys.get(kid)
        if jwk is None:
            raise VerificationError(f"the issuer's key set has no key {kid!r}")
        prepared = _prepare(kid, jwk, algorithm)
        self._prepared[kid, algorithm] = prepared
        return prepared

    async def _refresh(self, kid: str) -> None:
        async with self._lock:  # one fetch at a time; the others find its keys
            now = time.monotonic()
            if kid in self._keys and now - self._fetched < self.max_age:
                return
            if now - self._attempted < self.interval:
                return
            self._attempted = now
            try:
                keys = _signing_keys(await exchange_json("GET", self.url, timeout=self.timeout))
            except VerificationError as error:
                log.warning("the key set was not refreshed: %s", error)
                return
            self._keys, self._prepared, self._fetched = keys, {}, time.monotonic()


def _signing_keys(document: Any) -> dict[str, dict[str, Any]]:
    """The signing keys of a JWKS document by ``kid`` (RFC 7517): public keys only."""
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise VerificationError("the key set is not a JWKS document (no 'keys' list)")
    found: dict[str, dict[str, Any]] = {}
    for jwk in keys[:MAX_KEYS]:
        if not isinstance(jwk, dict) or not isinstance(jwk.get("kid"), str):
            continue
        if jwk.get("use", "sig") != "sig" or jwk.get("kty") not in _KEY_FAMILIES:
            continue
        if "d" in jwk:  # a private key published by mistake: never use it
            continue
        found[jwk["kid"]] = jwk
    return found


def _prepare(kid: str, jwk: Mapping[str, Any], algorithm: str) -> jwt.PyJWK:
    """The key ``kid`` for ``algorithm``, if it was made for it."""
    if jwk.get("alg", algorithm) != algorithm:
        raise VerificationError(f"key {kid!r} is for {jwk['alg']!r}, not {algorithm!r}")
    if not algorithm.startswith(_KEY_FAMILIES[jwk["kty"]]):
        raise VerificationError(f"key {kid!r} ({jwk['kty']}) cannot verify {algorithm!r}")
    try:
        return jwt.PyJWK(dict(jwk), algorithm=algorithm)
    except (jwt.PyJWTError, KeyError, TypeError, ValueError) as error:
        raise VerificationError(f"key {kid!r} is unusable: {error}") from None
