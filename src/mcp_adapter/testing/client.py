"""``McpTestClient``: drive a server through real JSON-RPC serialization, in process."""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, Self

import anyio
from mcp import types
from mcp.server.auth.provider import AccessToken
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from mcp.types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from pydantic import ValidationError
from pydantic_core import from_json

from container import Container
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.declare.request import Identity
from mcp_adapter.serving.ids import NO_MESSAGE, has_invalid_id
from mcp_adapter.serving.lowlevel import build_sdk_server
from mcp_adapter.serving.servable import Servable, catalog_of
from mcp_adapter.stores.handles import MemoryHandles
from mcp_adapter.testing.result import McpResult

Protocol = Literal["2026-07-28", "2025-11-25"]
MODERN: Protocol = "2026-07-28"
LEGACY: Protocol = "2025-11-25"

ServerRequestHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers a server-to-client request (elicitation, sampling) with a result dict."""

CLIENT_INFO = {"name": "mcp-adapter-test-client", "version": "0"}
RESPONSE_TIMEOUT = 30.0


class McpTestClient:
    """Sends each request as JSON text to the real SDK server over memory streams.

    Speaks 2026-07-28 by default; ``protocol="2025-11-25"`` performs the
    initialize handshake first. Every call is a fresh connection, so it needs
    no ``async with`` (but see ``aclose`` for ``overrides=``).

    >>> import anyio
    >>> from container import Container
    >>> from mcp_adapter import McpResponse, Server, Tool
    >>> class PingTool(Tool):
    ...     name = "ping"
    ...     async def handle(self) -> McpResponse:
    ...         return McpResponse.text("pong")
    >>> class Demo(Server):
    ...     tools = (PingTool,)
    >>> anyio.run(McpTestClient(Container(), Demo).tool, "ping").texts
    ['pong']
    """

    def __init__(
        self,
        container: Container,
        server: Servable,
        *,
        protocol: Protocol = MODERN,
        capabilities: Mapping[str, Any] | None = None,
        on_server_request: ServerRequestHandler | None = None,
        token: AccessToken | None = None,
        identity: Identity | None = None,
        overrides: Mapping[Any, Any] | None = None,
    ) -> None:
        """Serve ``server`` (a ``Server`` class, a ``Catalog``, a ``Platform``, or
        anything with ``compile(container) -> Catalog``) from ``container``.

        ``token`` (the SDK's ``AccessToken``) or ``identity`` signs every call
        in as that caller, as a verified bearer token does over HTTP: it is
        ``McpRequest.identity``/``authentication`` in handlers and visibility
        hooks. No context variable is set. ``overrides`` (``{Type: fake}``)
        serves a container derived with ``container.with_overrides(overrides)``;
        ``container`` itself is left as it is.

        Raises ``TypeError`` for anything that cannot be served, for both
        ``token`` and ``identity``, and for ``overrides`` with a ``Catalog``
        that cannot compile itself again (one made by hand, without ``rebuild``).
        """
        if token is not None and identity is not None:
            raise TypeError("McpTestClient: pass token= or identity=, not both")
        if overrides:
            container = container.with_overrides(overrides)
            if isinstance(server, Catalog):
                if server.rebuild is None:
                    raise TypeError(
                        "McpTestClient(overrides=...) cannot apply to this Catalog: it has no "
                        "rebuild to compile it against the derived container; pass the Server "
                        "class or Platform instead"
                    )
                server = server.rebuild(container)
        self._owns_container = bool(overrides)
        self.container = container
        """The container served: the one given, or derived from it with ``overrides``."""
        self.catalog = catalog_of(server, container)
        self.caller = token if identity is None else token_for(identity)
        """The verified token every call carries, or ``None`` (anonymous)."""
        self.handles = MemoryHandles()
        """Its state handles: they live across calls, and are finalized by :meth:`aclose`."""
        self.sdk_server = build_sdk_server(
            self.catalog, container, transport="memory", caller=self.caller, handles=self.handles
        )
        self.protocol = protocol
        self.capabilities = dict(capabilities or {})
        self.on_server_request = on_server_request
        self._ids = itertools.count(1)

    async def aclose(self) -> None:
        """Finalize the state handles left open, and close the container derived for
        ``overrides=`` (its singletons' finalizers run).

        The container you passed is never closed here.
        """
        await self.handles.aclose()
        if self._owns_container:
            await self.container.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- the methods a test calls ------------------------------------------------

    async def tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> McpResult:
        return await self.request("tools/call", _named(name, arguments))

    async def list_tools(self, cursor: str | None = None) -> McpResult:
        return await self.request("tools/list", _page(cursor))

    async def read_resource(self, uri: str) -> McpResult:
        return await self.request("resources/read", {"uri": uri})

    async def list_resources(self, cursor: str | None = None) -> McpResult:
        return await self.request("resources/list", _page(cursor))

    async def list_resource_templates(self) -> McpResult:
        return await self.request("resources/templates/list", {})

    async def prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> McpResult:
        return await self.request("prompts/get", _named(name, arguments))

    async def list_prompts(self, cursor: str | None = None) -> McpResult:
        return await self.request("prompts/list", _page(cursor))

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> McpResult:
        """Send one request (any method, any params) and return the decoded response."""
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        body["params"] = self._with_envelope(dict(params or {}))
        return await self.send(json.dumps(body))

    async def send(self, text: str) -> McpResult:
        """Send raw JSON text; answers with the first response (or error) to it.

        Text that is not one JSON-RPC request is answered the way the SDK's
        HTTP transport answers it (the memory streams carry decoded messages
        only): invalid JSON gets ``-32700`` (parse error), anything else that is
        not a request object gets ``-32600`` (invalid request), both with
        ``id: null``. So does a request whose ``id`` is no string or integer
        (``1.5``, ``true``, ``null``, ``[1]``, an object), as over stdio and
        HTTP (see :mod:`mcp_adapter.serving.ids`). A notification has no
        response: it raises ``ValueError``.
        """
        rejected = _rejection(text)
        if rejected is not None:
            return McpResult(rejected)
        with anyio.fail_after(RESPONSE_TIMEOUT):
            return await self._exchange(text)

    # -- the wire --------------------------------------------------------------------

    def _with_envelope(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.protocol != MODERN:
            return params
        meta = dict(params.get("_meta") or {})
        meta.setdefault(PROTOCOL_VERSION_META_KEY, MODERN)
        meta.setdefault(CLIENT_INFO_META_KEY, CLIENT_INFO)
        meta.setdefault(CLIENT_CAPABILITIES_META_KEY, self.capabilities)
        params["_meta"] = meta
        return params

    async def _exchange(self, text: str) -> McpResult:
        server = self.sdk_server
        async with (
            create_client_server_memory_streams() as (client, server_streams),
            anyio.create_task_group() as tg,
        ):
            read, write = client
            tg.start_soon(
                server.run,
                server_streams[0],
                server_streams[1],
                server.create_initialization_options(),
            )
            if self.protocol != MODERN:
                await self._handshake(read, write)
            await write.send(_decode(text))
            wanted = _request_id(text)
            notifications: list[dict[str, Any]] = []
            async with anyio.create_task_group() as replies:
                # The server's own requests are answered beside the exchange, as a real
                # client does: one the client never answers cannot hold up the call's answer.
                while True:
                    incoming = await read.receive()
                    if isinstance(incoming, Exception):
                        raise incoming
                    message = _encode(incoming)
                    if "method" in message and "id" in message:
                        replies.start_soon(self._reply, message, write)
                    elif "method" in message:
                        notifications.append(message)
                    elif message.get("id") == wanted or wanted is None:
                        replies.cancel_scope.cancel()
                        await write.aclose()
                        break
        return McpResult(message, tuple(notifications))

    async def _reply(self, message: dict[str, Any], write: Any) -> None:
        answer = await self._answer(message)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await write.send(_decode(json.dumps(answer)))

    async def _handshake(self, read: Any, write: Any) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": self.protocol,
                "capabilities": self.capabilities,
                "clientInfo": CLIENT_INFO,
            },
        }
        await write.send(_decode(json.dumps(init)))
        response = await read.receive()
        if isinstance(response, Exception):
            raise response
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await write.send(_decode(json.dumps(initialized)))

    async def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.on_server_request is None:
            return {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {
                    "code": types.METHOD_NOT_FOUND,
                    "message": "not supported by this client",
                },
            }
        result = await self.on_server_request(message["method"], message.get("params") or {})
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def token_for(identity: Identity) -> AccessToken:
    """The verified token a bearer-token transport would have made for ``identity``.

    The token string is random and opaque: nothing should read it.

    >>> token = token_for(Identity("ada", "cli", ("greet",)))
    >>> (token.subject, token.client_id, token.scopes)
    ('ada', 'cli', ['greet'])
    """
    return AccessToken(
        token=f"mcp-test-{secrets.token_urlsafe(16)}",
        client_id=identity.client_id,
        subject=identity.subject,
        scopes=list(identity.scopes),
    )


def _rejection(text: str) -> dict[str, Any] | None:
    """The JSON-RPC error for text that is not a single request; ``None`` for a request."""
    if has_invalid_id(text):  # no notification: refused as no message, as the transports do
        text = NO_MESSAGE
    try:
        value = from_json(text)  # the parser the SDK's transports use, with its limits
    except ValueError:
        return _error(types.PARSE_ERROR, "Parse error")
    try:
        types.JSONRPCRequest.model_validate(value, by_name=False)
    except ValidationError:
        try:
            types.JSONRPCNotification.model_validate(value, by_name=False)
        except ValidationError:
            return _error(types.INVALID_REQUEST, "Invalid Request")
        raise ValueError(
            "send() waits for the response to a request; a notification (no id) has none"
        ) from None
    return None


def _error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


def _decode(text: str) -> SessionMessage:
    return SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))


def _encode(message: SessionMessage) -> dict[str, Any]:
    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
    value: dict[str, Any] = json.loads(text)
    return value


def _request_id(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value.get("id") if isinstance(value, dict) else None


def _named(name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The params of a call by name (a tool's, a prompt's), arguments when given."""
    return {"name": name} if arguments is None else {"name": name, "arguments": dict(arguments)}


def _page(cursor: str | None) -> dict[str, Any]:
    """The params of a listing: its cursor, when it has one."""
    return {"cursor": cursor} if cursor else {}
