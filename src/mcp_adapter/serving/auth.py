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
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from pydantic import AnyHttpUrl
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send


@dataclass(frozen=True, slots=True)
class BearerAuth:
    """How the HTTP app authenticates: a verifier plus the policy around it."""

    verifier: TokenVerifier
    required_scopes: Sequence[str] = ()
    anonymous: bool = False
    """Let requests without an ``Authorization`` header through with no identity."""
    resource_server_url: str | None = None
    """This server's public URL: advertised in protected-resource metadata (RFC 9728)."""
    issuer_url: str | None = None
    """The authorization server that issues the tokens (listed in that metadata)."""
    validate_token_resource: bool = False
    """Refuse tokens whose ``resource`` is not ``resource_server_url``."""
    _metadata_url: AnyHttpUrl | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
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
        backend = BearerAuthBackend(self.verifier, resource_server_url=resource)
        return [
            Middleware(AuthenticationMiddleware, backend=backend),
            Middleware(RequestAuthContext),
        ]

    def protect(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind the token (and scope) requirement."""
        required = RequireAuthMiddleware(app, list(self.required_scopes), self._metadata_url)
        if self.anonymous:
            return _TokenOptional(app, required)
        return required

    def routes(self) -> list[Route]:
        """The RFC 9728 protected-resource metadata route, when this server has a public URL."""
        if not (self.resource_server_url and self.issuer_url):
            return []
        return create_protected_resource_routes(
            resource_url=AnyHttpUrl(self.resource_server_url),
            authorization_servers=[AnyHttpUrl(self.issuer_url)],
            scopes_supported=list(self.required_scopes) or None,
        )


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


class _TokenOptional:
    """No ``Authorization`` header: straight through. A header: it must be valid."""

    def __init__(self, app: ASGIApp, required: ASGIApp) -> None:
        self.app = app
        self.required = required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope.get("headers") or ()
        if any(key.lower() == b"authorization" for key, _ in headers):
            await self.required(scope, receive, send)
        else:
            await self.app(scope, receive, send)
