"""What JSON cannot carry: non-finite numbers and strings with lone surrogates.

pydantic serializes ``nan``/``inf`` as ``null`` and refuses to encode a lone
surrogate, so neither may slip through as a value: these find them, with paths.
"""

from __future__ import annotations

import math
from typing import Any

from schemas.errors import FieldError, bounded

NON_FINITE = "finite_number"
NON_FINITE_MESSAGE = "Input should be a finite number"
BAD_UNICODE = "string_unicode"
BAD_UNICODE_MESSAGE = "Input should be a valid string, it contains a lone surrogate"


_N, _I = ord("N"), ord("I")


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def may_hold_non_finite(data: bytes) -> bool:
    """Whether JSON from ``to_json(..., inf_nan_mode="constants")`` may hold one (a cheap
    test: a string containing ``NaN`` also says yes; ``non_json`` then decides)."""
    # Runs on every call: a byte lookup (memchr) first; a substring search costs ~5x more.
    if _N not in data and _I not in data:
        return False
    return b"NaN" in data or b"Infinity" in data


def non_json(value: Any) -> tuple[FieldError, ...]:
    """Where ``value`` holds a non-finite number or a lone surrogate (keys included),
    as a bounded summary; ``()`` if nowhere. Iterative, so depth costs no recursion."""
    found: list[tuple[tuple[Any, ...], str, str]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        location, item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                found.append((location, NON_FINITE, NON_FINITE_MESSAGE))
        elif isinstance(item, str):
            if not _encodable(item):
                found.append((location, BAD_UNICODE, BAD_UNICODE_MESSAGE))
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                if isinstance(key, str) and not _encodable(key):
                    found.append((location, BAD_UNICODE, "A key contains a lone surrogate"))
                    continue
                stack.append(((*location, key), child))
        elif isinstance(item, list | tuple):
            stack.extend(
                ((*location, index), child) for index, child in reversed(list(enumerate(item)))
            )
    return bounded(found)
