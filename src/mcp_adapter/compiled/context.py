"""The context values the adapter gives every scope it opens for a request.

``McpRequest``, the caller's ``Identity``, the verified ``AccessToken``, the
request's ``Progress`` and ``ClientLogger`` and, on HTTP, the Starlette
``Request`` are context values of the container (``container.context``): any
scoped or transient service may take them as constructor parameters, by type,
and none of them is ever autowired. The adapter declares them when it compiles
a server, and gives each request scope a :class:`RequestValues` mapping, which
reads them from the request being served (nothing is built for a call whose
components never ask), along with the values request-stage middleware provided
for the call (``McpRequest.provided``; who may give what is checked by
``compile.contexts``). It also binds the container's one ``Notifier``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken, principal_components
from starlette.requests import Request as HttpRequest

from container import Container, Lifetime, ProviderKind, type_name
from mcp_adapter.compiled.handles import HandleDesk, StateHandles
from mcp_adapter.declare.handles import StateHandle
from mcp_adapter.declare.request import Identity, McpRequest
from mcp_adapter.notifications import ClientLogger, Progress
from mcp_adapter.notifications.notifier import notifier_of

PROVIDED: tuple[type, ...] = (
    McpRequest,
    Identity,
    AccessToken,
    HttpRequest,
    Progress,
    ClientLogger,
    StateHandles,
    StateHandle,
)
"""What the adapter gives each request scope (``Identity`` and ``AccessToken`` when
the caller is authenticated, the HTTP ``Request`` on HTTP only, ``StateHandle`` to the
calls of a handle, from its session: ``compile.handles`` checks who may take it)."""


def declare(container: Container) -> None:
    """Make the adapter's context types context values of ``container``, and bind its
    ``Notifier`` (once)."""
    for key in PROVIDED:
        found = container.binding(key)
        if found is None or found.kind is not ProviderKind.CONTEXT:
            lifetime = Lifetime.SESSION if key is StateHandle else Lifetime.SCOPED
            container.context(key, lifetime)
    notifier_of(container)


def needed(container: Container, keys: Any) -> frozenset[Any]:
    """The context values the graphs of ``keys`` need."""
    found: frozenset[Any] = frozenset()
    for key in keys:
        node = container.node(key)
        if node.contexts:
            found = found | node.contexts
    return found


class RequestValues(Mapping[Any, Any]):
    """A request scope's context: read from the ``McpRequest`` when a service asks."""

    __slots__ = ("_caller", "_handles", "request")

    def __init__(
        self,
        request: McpRequest,
        caller: AccessToken | None = None,
        handles: HandleDesk | None = None,
    ) -> None:
        self.request = request
        self._caller = caller
        self._handles = handles

    def __getitem__(self, key: Any) -> Any:
        value: Any = None
        if key is McpRequest:
            value = self.request
        elif key is Identity:
            value = self.request.identity
        elif key is AccessToken:
            value = access_token(self.request.context, self._caller)
        elif key is HttpRequest:
            value = self.request.http_request
        elif key is Progress:
            value = Progress(self.request)
        elif key is ClientLogger:
            value = ClientLogger(self.request)
        elif key is StateHandles and self._handles is not None:
            context = self.request.context
            owner = client_of(context, self._caller)
            call = context if self.request.method == "tools/call" else None  # what settles
            value = StateHandles(self._handles, owner, call)
        else:
            value = self.request.provided.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[Any]:
        yield from (key for key in PROVIDED if key in self)
        yield from (key for key in self.request.provided if key not in PROVIDED)

    def __contains__(self, key: object) -> bool:
        if key is Progress or key is ClientLogger:
            return True  # every request has them (built only when asked for)
        if key is StateHandles:
            return self._handles is not None
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"RequestValues({self.request.method!r}, {[type_name(k) for k in self]})"


class LocalToken(AccessToken):
    """The caller of every request of a server served off HTTP for one known user
    (``serve_stdio(identity=...)``): no bearer token was sent, so its
    ``McpRequest.authentication`` says ``scheme: "local"``."""


def local_token(identity: Identity) -> LocalToken:
    """The token that stands for ``identity`` on a transport without authentication.

    >>> token = local_token(Identity("ada", "stdio"))
    >>> (token.subject, token.client_id, token.scopes)
    ('ada', 'stdio', [])
    """
    return LocalToken(
        token="local",
        client_id=identity.client_id,
        subject=identity.subject,
        scopes=list(identity.scopes),
    )


def access_token(ctx: Any, caller: AccessToken | None = None) -> AccessToken | None:
    """The verified token of the request ``ctx`` describes, or ``None``.

    On HTTP it is read from that request's own ASGI scope (``scope["user"]``,
    set by the authentication middleware for this request only), never from a
    context variable, which a connection's later requests can inherit. Off
    HTTP (stdio, in process) it is ``caller``, the token a server built for one
    caller was given (``McpTestClient(token=...)``), else the SDK's auth
    context, which no transport of this package sets.
    """
    http_request = getattr(ctx, "request", None)
    if http_request is not None:
        user = http_request.scope.get("user")
        return user.access_token if isinstance(user, AuthenticatedUser) else None
    return caller if caller is not None else get_access_token()


def client_key(scope: Mapping[str, Any]) -> Hashable:
    """Who an HTTP request comes from (its ASGI ``scope``): the authenticated principal,
    else the peer's address. What per-client limits count by (sessions, calls)."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        return ("principal", *principal_components(user.access_token))
    client = scope.get("client")
    return ("peer", client[0] if client else None)


def client_of(ctx: Any, caller: AccessToken | None = None) -> Hashable:
    """:func:`client_key` of the request ``ctx`` describes; off HTTP, the principal of its
    verified token (see :func:`access_token`), else the one peer there is."""
    http_request = getattr(ctx, "request", None)
    if http_request is not None:
        return client_key(http_request.scope)
    token = caller if caller is not None else get_access_token()
    if token is not None:
        return ("principal", *principal_components(token))
    return ("peer", None)
