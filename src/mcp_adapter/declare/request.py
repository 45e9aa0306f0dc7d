"""``McpRequest``: an immutable snapshot of the request a handler serves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Transport = Literal["stdio", "http", "memory"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


def freeze(value: Any) -> Any:
    """A read-only deep copy: mappings become read-only proxies, lists become tuples.

    >>> frozen = freeze({"a": [1, {"b": 2}]})
    >>> frozen["a"][1]["b"]
    2
    >>> frozen["a"][1]["b"] = 3
    Traceback (most recent call last):
    ...
    TypeError: 'mappingproxy' object does not support item assignment
    """
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(item) for item in value)
    return value


@dataclass(frozen=True, slots=True)
class Identity:
    """Who is calling, as the transport's authentication established it."""

    subject: str
    client_id: str
    scopes: tuple[str, ...] = ()

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


@dataclass(frozen=True, slots=True)
class McpRequest:
    """The request being served: method, arguments, caller and capabilities.

    Every mapping and list inside is frozen; capabilities are those the
    client declared on this request (2026-07-28) or its connection (2025-11-25).

    >>> request = McpRequest(id=1, method="tools/call", arguments=freeze({"name": "Ada"}))
    >>> request.arguments["name"]
    'Ada'
    """

    id: str | int | None = None
    method: str = ""
    server_id: str = ""
    transport: Transport = "memory"
    arguments: Mapping[str, Any] = field(default_factory=_empty)
    params: Mapping[str, Any] = field(default_factory=_empty)
    meta: Mapping[str, Any] = field(default_factory=_empty)
    uri: str | None = None
    uri_variables: Mapping[str, Any] = field(default_factory=_empty)
    input_responses: Mapping[str, Any] = field(default_factory=_empty)
    request_state: str | None = None
    identity: Identity | None = None
    authentication: Mapping[str, Any] | None = None
    client_capabilities: Mapping[str, Any] = field(default_factory=_empty)
    protocol_version: str = ""
    http_request: Any = field(default=None, repr=False, compare=False)
    """The Starlette ``Request`` on the HTTP transport; ``None`` elsewhere."""
    context: Any = field(default=None, repr=False, compare=False)
    """The SDK's request context (progress, elicitation); ``None`` outside the SDK."""
    provided: Mapping[Any, Any] = field(default_factory=_empty, repr=False, compare=False)
    """The context values request-stage middleware gave this call, by type
    (``Call.with_context``): what the call's scope serves for them. Take such a value by
    its type, as a parameter."""
