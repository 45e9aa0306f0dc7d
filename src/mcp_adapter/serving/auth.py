"""Bearer authentication for the HTTP app, on the SDK's ``TokenVerifier`` and middleware.

A verified token becomes ``McpRequest.identity`` and ``authentication``, read
from the request's own ASGI scope. The SDK's auth context variable (which its
``RequestStateBoundary`` reads for the principal) is set for every request, to
the caller or to nobody, and reset when it ends. Missing or invalid tokens get
``401`` with ``WWW-Authenticate: Bearer ...``; a token without a required scope
gets ``403 insufficient_scope``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import (
    build_resource_metadata_url,
    cors_middleware,
    create_protected_resource_routes,
)
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.authentication import AuthCredentials, UnauthenticatedUser
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send


@dataclass(frozen=True, slots=True)
class BearerAuth:
    """How the HTTP app authenticates: ``http_app(..., auth=BearerAuth(verifier, ...))``.

    Every request needs ``Authorization: Bearer <token>`` that ``token_verifier``
    accepts (``401`` otherwise), carrying every one of ``required_scopes``
    (``403 insufficient_scope`` otherwise), unless ``anonymous`` lets it in
    without a token.
    """

    token_verifier: TokenVerifier
    """Any object with ``async verify_token(token) -> AccessToken | None`` (the SDK's
    ``TokenVerifier`` protocol): a JWT check, RFC 7662 introspection, ..."""
    required_scopes: Sequence[str] = ()
    """Scopes every token must carry (kept as a tuple)."""
    anonymous: bool = False
    """Let requests without an ``Authorization`` header through with no identity."""
    resource_server_url: str | None = None
    """This server's public URL: advertised in protected-resource metadata (RFC 9728)."""
    issuer_url: str | None = None
    """The authorization server that issues the tokens (listed in that metadata)."""
    validate_token_resource: bool = False
    """Refuse tokens whose ``resource`` is not ``resource_server_url``."""
    _metadata_url: AnyHttpUrl | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not callable(getattr(self.token_verifier, "verify_token", None)):
            raise TypeError(
                "token_verifier must have async verify_token(token) -> AccessToken | None,"
                f" not {self.token_verifier!r}"
            )
        if isinstance(self.required_scopes, str):
            raise TypeError("required_scopes is a collection of scopes, not one string")
        object.__setattr__(self, "required_scopes", tuple(self.required_scopes))
        if self.validate_token_resource and not self.resource_server_url:
            raise ValueError("validate_token_resource needs resource_server_url")
        if self.resource_server_url and not self.issuer_url:
            raise ValueError(
                "resource_server_url needs issuer_url: the protected-resource metadata "
                "names the authorization server that issues tokens"
            )
        if self.resource_server_url:
            url = build_resource_metadata_url(AnyHttpUrl(self.resource_server_url))
            object.__setattr__(self, "_metadata_url", url)

    def middleware(self) -> list[Middleware]:
        """Authenticate every request that carries a bearer token, then expose it to handlers."""
        resource = (
            AnyHttpUrl(self.resource_server_url)
            if self.validate_token_resource and self.resource_server_url
            else None
        )
        backend = BearerAuthBackend(self.token_verifier, resource_server_url=resource)
        layers = [Middleware(AuthenticationMiddleware, backend=backend)]
        if self.anonymous and self.required_scopes:
            layers.append(Middleware(AnonymousBelowScope, required_scopes=self.required_scopes))
        layers.append(Middleware(RequestAuthContext))
        return layers

    def protect(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind the token (and scope) requirement."""
        required = RequireAuthMiddleware(app, list(self.required_scopes), self._metadata_url)
        if self.anonymous:
            return _TokenOptional(app, required)
        return required

    def routes(self) -> list[Route]:
        """The RFC 9728 protected-resource metadata route, when this server has a public URL.

        The SDK's route at the SDK's path, answering the SDK's metadata model, except
        that the issuer is published exactly as configured: the model's URL type adds
        a ``/`` to a bare host, and clients compare issuer identifiers as strings
        (RFC 8414, 3.3), so ``https://auth.example.com`` must stay as it is.
        """
        if not (self.resource_server_url and self.issuer_url):
            return []
        scopes = list(self.required_scopes) or None
        resource = AnyHttpUrl(self.resource_server_url)
        (sdk_route,) = create_protected_resource_routes(
            resource_url=resource,
            authorization_servers=[AnyHttpUrl(self.issuer_url)],
            scopes_supported=scopes,
        )
        metadata = ProtectedResourceMetadata(
            resource=resource,
            authorization_servers=[AnyHttpUrl(self.issuer_url)],
            scopes_supported=scopes,
        ).model_dump(mode="json", exclude_none=True)
        metadata["authorization_servers"] = [self.issuer_url]

        def handle(_: Request) -> Response:
            return JSONResponse(metadata, headers={"Cache-Control": "public, max-age=3600"})

        methods = ["GET", "OPTIONS"]
        return [Route(sdk_route.path, endpoint=cors_middleware(handle, methods), methods=methods)]


class RequestAuthContext:
    """ASGI middleware: the SDK's auth context variable holds this request's caller, or nobody.

    The SDK's own ``AuthContextMiddleware`` sets the variable for authenticated
    requests only. A value set inside one request can outlive it: uvicorn
    resumes reading a keep-alive socket from inside the request that paused it
    (a body over 64 KiB), so the connection's next request task starts in a
    copy of that request's context. Setting the variable on every request,
    ``None`` included, and resetting it afterwards means no request runs with
    another's identity, whatever it inherited.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        user = scope.get("user")
        token = auth_context_var.set(user if isinstance(user, AuthenticatedUser) else None)
        try:
            await self.app(scope, receive, send)
        finally:
            auth_context_var.reset(token)


_BELOW_SCOPE = "mcp_adapter.auth.below_scope"
"""ASGI scope key: this request's valid token lacked a required scope; it is served as anonymous."""


class AnonymousBelowScope:
    """With ``anonymous=True`` and required scopes: a valid token without them is anonymous.

    An anonymous caller passes; one whose token is valid but lacks a required
    scope must not be treated more strictly for having shown it, nor be given
    an identity the scopes do not grant. Its request goes on with no identity,
    as a request without ``Authorization`` would. (An invalid token is still
    ``401``: its holder needs to know the credential is broken.)
    """

    def __init__(self, app: ASGIApp, required_scopes: Sequence[str]) -> None:
        self.app = app
        self.required_scopes = frozenset(required_scopes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if isinstance(user, AuthenticatedUser) and not self.required_scopes <= set(user.scopes):
            scope = {
                **scope,
                "user": UnauthenticatedUser(),
                "auth": AuthCredentials(),
                _BELOW_SCOPE: True,
            }
        await self.app(scope, receive, send)


class _TokenOptional:
    """No ``Authorization`` header (or a valid one below the scopes): straight through, as
    nobody. A header otherwise: it must be valid and carry the scopes."""

    def __init__(self, app: ASGIApp, required: ASGIApp) -> None:
        self.app = app
        self.required = required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope.get("headers") or ()
        shown = any(key.lower() == b"authorization" for key, _ in headers)
        if shown and not scope.get(_BELOW_SCOPE):
            await self.required(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def app_middleware(auth: BearerAuth | None) -> list[Middleware]:
    """The app-wide middleware: ``auth``'s, or (without auth) the context that says nobody."""
    return auth.middleware() if auth is not None else [Middleware(RequestAuthContext)]
