"""The request that started a task, as plain data that Docket stores and a worker reads
back: identity, arguments, client capabilities, protocol version, and the context values
request-stage layers gave the call (never the HTTP request, the SDK context or a
progress token, which end with the request)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mcp.server.auth.provider import AccessToken

from mcp_adapter.declare.request import Identity, McpRequest, freeze

_DROPPED_META = ("progressToken",)


def thawed(value: Any) -> Any:
    """A frozen value as plain dicts and lists (what Docket pickles)."""
    if isinstance(value, Mapping | MappingProxyType):
        return {str(key): thawed(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [thawed(item) for item in value]
    if isinstance(value, frozenset | set):
        return [thawed(item) for item in value]
    return value


def plain(request: McpRequest) -> dict[str, Any]:
    """What a task keeps of the request that started it."""
    identity = request.identity
    meta = {key: value for key, value in request.meta.items() if key not in _DROPPED_META}
    return {
        "id": request.id,
        "method": request.method,
        "server_id": request.server_id,
        "transport": request.transport,
        "arguments": thawed(request.arguments),
        "meta": thawed(meta),
        "identity": None
        if identity is None
        else [identity.subject, identity.client_id, list(identity.scopes)],
        "authentication": None
        if request.authentication is None
        else thawed(request.authentication),
        "client_capabilities": thawed(request.client_capabilities),
        "protocol_version": request.protocol_version,
        "provided": dict(request.provided),  # by type; Docket pickles them (cloudpickle)
    }


def request_of(data: Mapping[str, Any], context: Any) -> McpRequest:
    """The frozen copy of the request a task started with, read by its body."""
    found = data["identity"]
    identity = None if found is None else Identity(found[0], found[1], tuple(found[2]))
    authentication = data["authentication"]
    return McpRequest(
        id=data["id"],
        method=data["method"],
        server_id=data["server_id"],
        transport=data["transport"],
        arguments=freeze(data["arguments"]),
        meta=freeze(data["meta"]),
        identity=identity,
        authentication=None if authentication is None else freeze(authentication),
        client_capabilities=freeze(data["client_capabilities"]),
        protocol_version=data["protocol_version"],
        context=context,
        provided=MappingProxyType(dict(data.get("provided") or {})),
    )


def token_of(data: Mapping[str, Any]) -> AccessToken | None:
    """The verified token the request carried, for the body's ``AccessToken``."""
    found = data["authentication"]
    if found is None:
        return None
    return AccessToken(
        token="task",
        client_id=found["client_id"],
        subject=found.get("subject"),
        scopes=list(found.get("scopes") or ()),
        expires_at=found.get("expires_at"),
        resource=found.get("resource"),
        claims=found.get("claims") or None,
    )


def owner_of(request: McpRequest) -> str:
    """Who may see a task: a digest of the caller's subject and client, or ``anonymous``
    for a request without authentication (docs/tasks.md)."""
    identity = request.identity
    if identity is None:
        return "anonymous"
    text = f"{len(identity.subject)}:{identity.subject}|{identity.client_id}"
    return hashlib.sha256(text.encode()).hexdigest()
