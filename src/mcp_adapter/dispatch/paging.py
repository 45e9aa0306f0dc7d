"""Listings: pages decided at compile time, and their cursors (which entries a caller sees:
``visibility``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from mcp import MCPError, types

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
