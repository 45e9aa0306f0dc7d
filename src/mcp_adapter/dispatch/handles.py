"""Taking a state handle back: a tool call that carries one runs in the handle's session.

Only tools whose input contract has a ``StateHandle`` field come here
(``CompiledTool.handle``, decided at compile time). The handle is looked up for the
caller before the call's scope opens, so that scope opens inside the handle's session
scope; an unknown handle (never minted, expired, closed, or another caller's: all
alike) is answered, after the visibility hooks and the validation of the arguments,
with one fixed tool error that names the field and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.auth.provider import AccessToken

from mcp_adapter.compiled.context import client_of
from mcp_adapter.compiled.handles import HandleField
from mcp_adapter.declare.handles import MAX_HANDLE_LENGTH
from mcp_adapter.dispatch.results import error_result
from mcp_adapter.stores.handles import HandleRecord, HandleStore


@dataclass(frozen=True, slots=True)
class Held:
    """The handle a call carries, and its record when the caller holds it open."""

    handle: str
    record: HandleRecord | None
    """``None``: unknown to this caller (the call answers :func:`unknown_handle`)."""


async def take(
    store: HandleStore,
    field: HandleField,
    ctx: Any,
    caller: AccessToken | None,
    arguments: Mapping[str, Any],
) -> Held | None:
    """The handle in ``arguments``, taken for the caller until :func:`release`; ``None``
    when the call carries none (validation then answers for a required field). A value
    that is no handle (not a string, too long) is looked up nowhere: validation refuses it."""
    raw = arguments.get(field.wire, arguments.get(field.name))
    if raw is None:
        return None
    if not isinstance(raw, str) or len(raw) > MAX_HANDLE_LENGTH:
        return Held("", None)
    return Held(raw, await store.take(client_of(ctx, caller), raw))


def matches(held: Held, field: HandleField, payload: Any) -> bool:
    """Whether the validated payload carries the handle that was taken."""
    return held.record is not None and getattr(payload, field.name, None) == held.handle


def unknown_handle(field: HandleField) -> types.CallToolResult:
    """The one answer to a handle the caller does not hold, whatever the reason."""
    return error_result(f"Unknown state handle in argument {field.wire!r}")
