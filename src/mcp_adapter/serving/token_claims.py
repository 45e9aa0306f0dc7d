"""What the token verifiers share: reading scopes, audiences and dates from claims, the
``AccessToken`` they describe, turning a refusal into ``None``, and one bounded HTTP
exchange with an authorization server.

A verifier answers ``None`` for every token it cannot vouch for; nothing here raises
past :class:`VerificationError`, which a verifier turns into ``None`` (and a log line
that names the reason, never the token).
"""

from __future__ import annotations

import json
import logging
import math
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.shared.auth_utils import resource_url_from_server_url

from mcp_adapter.serving.host_security import is_loopback

log = logging.getLogger("mcp_adapter.serving.verifiers")

DEFAULT_MAX_TOKEN_SIZE = 16 * 1024
"""Longer tokens are refused before they are parsed or sent anywhere (bytes of the token)."""
DEFAULT_TIMEOUT = 5.0
"""Seconds one exchange with an authorization server may take, connection to last byte."""
MAX_RESPONSE_SIZE = 256 * 1024
"""Bytes of a JWKS or introspection response read at most; a longer one is refused."""


class VerificationError(Exception):
    """A token could not be vouched for; ``str(error)`` says why, without the token."""


async def vouched_for(
    token: str, max_token_size: int, verify: Callable[[str], Awaitable[AccessToken]]
) -> AccessToken | None:
    """``verify(token)`` for a token of ``max_token_size`` bytes at most, or ``None`` for
    any token that cannot be vouched for (logged with the reason, never the token): what
    a verifier's ``verify_token`` answers."""
    try:
        check_token_size(token, max_token_size)
        return await verify(token)
    except VerificationError as error:
        log.debug("bearer token refused: %s", error)
        return None


def check_endpoint(what: str, url: str, allow_http: bool) -> str:
    """``url`` if it is ``https://``, or ``http://`` to this machine's loopback or with
    ``allow_http``: keys and verdicts about tokens must not cross a network in clear."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname and (allow_http or is_loopback(parts.hostname)):
        return url
    raise ValueError(
        f"{what} must be an https:// URL (http:// only to loopback, or with allow_http=True),"
        f" not {url!r}"
    )


def check_seconds(name: str, value: float, *, zero_ok: bool = False) -> None:
    if not (math.isfinite(value) and (value >= 0 if zero_ok else value > 0)):
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")


def scopes_of(claims: Mapping[str, Any]) -> list[str]:
    """The scopes a token grants: ``scope`` (space-separated, RFC 8693/9068/7662) or
    ``scp`` (a list, or a space-separated string, as some issuers write it)."""
    for name in ("scope", "scp"):
        value = claims.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            return value.split()
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return list(value)
        raise VerificationError(f"claim {name!r} is neither a string nor a list of strings")
    return []


def canonical_resource(url: str) -> str:
    """A resource URL compared as RFC 8707 writes it: lower-case scheme and host, no
    fragment, no trailing ``/``."""
    return resource_url_from_server_url(url).removesuffix("/")


def audiences_of(claims: Mapping[str, Any]) -> list[str]:
    aud = claims.get("aud")
    if aud is None:
        return []
    if isinstance(aud, str):
        return [aud]
    if isinstance(aud, list) and all(isinstance(item, str) for item in aud):
        return list(aud)
    raise VerificationError("claim 'aud' is neither a string nor a list of strings")


def check_audience(
    claims: Mapping[str, Any], audience: Sequence[str], resource: str | None
) -> str | None:
    """Refuse a token meant for someone else; return the resource it was issued for.

    ``audience``: one of them must be in ``aud``. ``resource`` (RFC 8707): its
    canonical form must be in ``aud`` too (the authorization server puts the
    resource indicator there).
    """
    audiences = audiences_of(claims)
    if audience and not set(audience) & set(audiences):
        raise VerificationError("the token is not meant for this audience")
    if resource is None:
        return None
    wanted = canonical_resource(resource)
    for aud in audiences:
        try:
            if canonical_resource(aud) == wanted:
                return resource
        except ValueError:
            continue
    raise VerificationError("the token was not issued for this resource (RFC 8707)")


def check_numeric_dates(claims: Mapping[str, Any], *names: str) -> None:
    """Refuse a date claim (``exp``, ``nbf``, ``iat``: an RFC 7519 NumericDate) that is
    there but no finite number of seconds (a string or a bool is none)."""
    for name in names:
        value = claims.get(name)
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise VerificationError(f"claim {name!r} is not a number of seconds")


def access_token(
    claims: dict[str, Any], token: str, resource: str | None, *client_claims: str
) -> AccessToken:
    """The ``AccessToken`` ``claims`` describe: the client id from the first of
    ``client_claims`` that is a string, ``sub`` as the subject, the scopes, ``exp``, the
    resource it was issued for, and every claim."""
    exp = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=string_claim(claims, *client_claims) or "",
        scopes=scopes_of(claims),
        expires_at=None if exp is None else int(exp),
        resource=resource,
        subject=string_claim(claims, "sub"),
        claims=claims,
    )


def string_claim(claims: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = claims.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def check_token_size(token: str, max_token_size: int) -> None:
    if len(token) > max_token_size or len(token.encode()) > max_token_size:
        raise VerificationError(f"the token is longer than {max_token_size} bytes")


_TLS: list[ssl.SSLContext] = []


async def _tls_context() -> ssl.SSLContext:
    """The process's client TLS context, built once (off the event loop: loading the CA
    certificates takes long) and shared by every exchange, as an HTTP client would."""
    if not _TLS:
        context = await anyio.to_thread.run_sync(httpx2.create_ssl_context)
        _TLS[:] = [context]
    return _TLS[0]


async def exchange_json(
    method: str,
    url: str,
    *,
    timeout: float,
    data: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
) -> Any:
    """One request to an authorization server, its JSON answer, all within ``timeout``.

    Bounded three ways: the whole exchange (a server that drips its answer one byte
    at a time included) by ``timeout``, the body by :data:`MAX_RESPONSE_SIZE`, and
    no redirect is followed. A refusal, a failure or an answer that is not JSON (or
    nested too deep to parse) raises :class:`VerificationError`: the token is refused,
    and a later token asks again.
    """
    try:
        with anyio.fail_after(timeout):
            tls = await _tls_context()
            async with (
                httpx2.AsyncClient(timeout=timeout, follow_redirects=False, verify=tls) as http,
                http.stream(method, url, data=data, auth=auth) as response,
            ):
                if response.status_code != 200:
                    raise VerificationError(f"{url} answered HTTP {response.status_code}")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_RESPONSE_SIZE:
                        raise VerificationError(f"{url} answered over {MAX_RESPONSE_SIZE} bytes")
    except TimeoutError:
        raise VerificationError(f"{url} did not answer within {timeout} s") from None
    except httpx2.HTTPError as error:
        raise VerificationError(f"{url} could not be reached: {type(error).__name__}") from None
    try:
        return json.loads(body)
    except ValueError:
        raise VerificationError(f"{url} answered something that is not JSON") from None
    except RecursionError:  # nested deeper than Python parses (the size cap still allows it)
        raise VerificationError(f"{url} answered JSON nested too deep to read") from None
