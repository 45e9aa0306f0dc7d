"""Building the ``McpRequest`` snapshot from the SDK's request context."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.types import CLIENT_CAPABILITIES_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_adapter.compiled.context import LocalToken, access_token
from mcp_adapter.declare.request import Identity, McpRequest, Transport, freeze
from mcp_adapter.input.state import retried_answers

_NOTHING: Mapping[Any, Any] = MappingProxyType({})


def is_modern(ctx: Any) -> bool:
    return getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


def _capabilities(ctx: Any, meta: Mapping[str, Any]) -> Any:
    declared = meta.get(CLIENT_CAPABILITIES_META_KEY)
    if declared is not None:
        return declared
    session = getattr(ctx, "session", None)
    params = getattr(session, "client_params", None) if session is not None else None
    capabilities = getattr(params, "capabilities", None)
    if capabilities is None:
        return {}
    return capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")


def _identity(
    ctx: Any, caller: AccessToken | None
) -> tuple[Identity | None, Mapping[str, Any] | None]:
    token = access_token(ctx, caller)
    if token is None:
        return None, None
    identity = Identity(
        subject=token.subject or token.client_id,
        client_id=token.client_id,
        scopes=tuple(token.scopes),
    )
    authentication = freeze(
        {
            "scheme": "local" if isinstance(token, LocalToken) else "bearer",
            "client_id": token.client_id,
            "subject": token.subject,
            "scopes": list(token.scopes),
            "expires_at": token.expires_at,
            "resource": token.resource,
            "claims": token.claims or {},
        }
    )
    return identity, authentication


_PYTHON_TO_WIRE = {"progress_token": "progressToken"}


def _wire_meta(raw_params: Mapping[str, Any], parsed: Any) -> Mapping[str, Any]:
    """``_meta`` with the wire's key names (the SDK's parsed form renames some)."""
    raw = raw_params.get("_meta")
    if isinstance(raw, Mapping):
        return raw
    if not isinstance(parsed, Mapping):
        return {}
    return {_PYTHON_TO_WIRE.get(str(key), str(key)): value for key, value in parsed.items()}


def supports_elicitation(request: McpRequest) -> bool:
    """Whether the client declared form elicitation on this request (or its connection).

    A bare ``{}`` means form mode (the older spelling); a client that lists
    only ``url`` cannot answer a form.
    """
    declared = request.client_capabilities.get("elicitation")
    if not isinstance(declared, Mapping):
        return False
    return not declared or "form" in declared


def snapshot(
    ctx: Any,
    *,
    server_id: str,
    default_transport: Transport,
    arguments: Mapping[str, Any] | None = None,
    uri: str | None = None,
    uri_variables: Mapping[str, Any] | None = None,
    caller: AccessToken | None = None,
    provided: Mapping[Any, Any] | None = None,
) -> McpRequest:
    """An immutable ``McpRequest`` for the request ``ctx`` describes."""
    raw_params: Mapping[str, Any] = getattr(ctx, "params", None) or {}
    meta = _wire_meta(raw_params, getattr(ctx, "meta", None))
    http_request = getattr(ctx, "request", None)
    identity, authentication = _identity(ctx, caller)
    modern = is_modern(ctx)
    answers, state = retried_answers(raw_params) if modern else ({}, None)
    return McpRequest(
        id=getattr(ctx, "request_id", None),
        method=getattr(ctx, "method", ""),
        server_id=server_id,
        transport="http" if http_request is not None else default_transport,
        arguments=freeze(arguments or {}),
        params=freeze(raw_params),
        meta=freeze(meta),
        uri=uri,
        uri_variables=freeze(uri_variables or {}),
        input_responses=freeze(answers),
        request_state=state,
        identity=identity,
        authentication=authentication,
        client_capabilities=freeze(_capabilities(ctx, meta)),
        protocol_version=getattr(ctx, "protocol_version", ""),
        http_request=http_request,
        context=ctx,
        provided=provided or _NOTHING,
    )
