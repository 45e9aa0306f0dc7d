"""Listings: pages decided at compile time, cursors, and which entries a caller sees."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

import anyio.from_thread
from mcp import MCPError, types

from mcp_adapter.compiled.catalog import CompiledComponent
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.dispatch.modes import verdict

Entry = TypeVar("Entry")
_CURSOR = re.compile(r"[0-9]{1,9}")


def paginate(entries: Sequence[Entry], size: int) -> tuple[tuple[Entry, ...], ...]:
    return tuple(tuple(entries[i : i + size]) for i in range(0, len(entries), size)) or ((),)


def page_index(cursor: str | None, count: int) -> int:
    if cursor is None:
        return 0
    if not isinstance(cursor, str) or _CURSOR.fullmatch(cursor) is None or int(cursor) >= count:
        raise MCPError(types.INVALID_PARAMS, "Invalid cursor")
    return int(cursor)


def next_cursor(index: int, count: int) -> str | None:
    return str(index + 1) if index + 1 < count else None


def visible_all(
    components: Sequence[CompiledComponent], scope: Any, request: McpRequest | None
) -> list[bool]:
    """Whether each component is listed: its ``sync_hooks`` run here, in order.

    Runs in one worker thread for a whole page (``Dispatcher._filter``): each
    component is built, and its hooks get their services, exactly as
    ``Dispatcher.visible`` does on the loop; the first hook that raises ends
    the batch. A cancelled listing stops between components, as it would
    between thread hops.
    """
    verdicts: list[bool] = []
    for component in components:
        anyio.from_thread.check_cancelled()
        verdicts.append(all(verdict(component, scope, request)))
    return verdicts
