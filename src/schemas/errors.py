"""Validation failures summarized without the rejected values, in bounded size and work."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError as PydanticValidationError
from pydantic_core.core_schema import ErrorType


class ContractError(TypeError):
    """A type cannot serve as a contract (pydantic cannot validate or describe it)."""


MAX_LISTED = 20
"""Failing paths a summary lists; the rest are counted in one last entry."""
MAX_DETAILED = 1_000
"""Errors read one by one; a failure with more is only counted (reading each costs time)."""
MAX_PATH = 200
MAX_MESSAGE = 300
MAX_KEYS_NAMED = 5
"""Unknown keys named in their one summary line."""
MORE = "too_many_errors"
"""The ``type`` of the last entry of a summary that was cut: it counts what is not listed."""
UNKNOWN_KEY = "extra_forbidden"


@dataclass(frozen=True, slots=True)
class FieldError:
    """One failed field: where (a dotted path, ``""`` for the whole value) and why, never
    the value itself."""

    path: str
    message: str
    type: str

    def __str__(self) -> str:
        return self.render()

    def render(self, root: str = "value") -> str:
        """``path: message``; the whole value (path ``""``) is named ``root``."""
        return f"{self.path or root}: {self.message}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _path(location: Sequence[int | str]) -> str:
    return _clip(".".join(str(part) for part in location), MAX_PATH)


def summarize(error: PydanticValidationError) -> tuple[FieldError, ...]:
    """Field paths and messages of a pydantic error, with no input echoed.

    Bounded: each path is listed once, at most ``MAX_LISTED`` of them, the
    rest counted in a last entry of type ``too_many_errors``; unknown keys of
    one object are one entry; paths and messages are clipped. A failure with
    more than ``MAX_DETAILED`` errors is not read error by error at all.

    >>> from pydantic import TypeAdapter, ValidationError
    >>> try:
    ...     TypeAdapter(dict[str, int]).validate_python({"a": "secret"})
    ... except ValidationError as exc:
    ...     print(summarize(exc)[0])
    a: Input should be a valid integer, unable to parse string as an integer
    """
    count = error.error_count()
    if count > MAX_DETAILED:
        return (FieldError("", f"{count} errors, too many to list", MORE),)
    details = error.errors(include_url=False, include_input=False, include_context=False)
    return bounded(
        [
            (tuple(item["loc"]), item["type"], _safe_message(item["type"], item["msg"]))
            for item in details
        ]
    )


def bounded(details: Sequence[tuple[tuple[Any, ...], str, str]]) -> tuple[FieldError, ...]:
    """``(location, type, message)`` triples as a bounded summary (see ``summarize``)."""
    unknown: dict[tuple[Any, ...], list[str]] = {}
    for location, kind, _ in details:
        if kind == UNKNOWN_KEY and location:
            unknown.setdefault(location[:-1], []).append(str(location[-1]))
    found: dict[str, FieldError] = {}
    for location, kind, message in details:
        if kind == UNKNOWN_KEY and location and len(unknown[location[:-1]]) > 1:
            path = _path(location[:-1])
            if path not in found:
                found[path] = FieldError(path, _unknown_keys(unknown[location[:-1]]), kind)
            continue
        path = _path(location)
        if path not in found:
            found[path] = FieldError(path, _clip(message, MAX_MESSAGE), kind)
    listed = list(found.values())
    if len(listed) <= MAX_LISTED:
        return tuple(listed)
    rest = len(listed) - MAX_LISTED
    more = FieldError("", f"and {rest} more error{'s' if rest != 1 else ''}", MORE)
    return (*listed[:MAX_LISTED], more)


def _unknown_keys(keys: Sequence[str]) -> str:
    named = ", ".join(_clip(key, 40) for key in keys[:MAX_KEYS_NAMED])
    rest = len(keys) - MAX_KEYS_NAMED
    tail = f" and {rest} more" if rest > 0 else ""
    return f"{len(keys)} unknown keys, not permitted: {named}{tail}"


_ECHOING_TYPES = frozenset(
    {
        "value_error",
        "assertion_error",
        "union_tag_invalid",
        "uuid_parsing",
        "json_invalid",
        "url_parsing",
        "url_syntax_violation",
    }
)
"""Core error types whose message templates can quote (part of) the rejected value."""

_CORE_TYPES = frozenset(typing.get_args(ErrorType)) - _ECHOING_TYPES


def _safe_message(kind: str, message: str) -> str:
    """pydantic's own message when its template cannot quote the input, else a generic one.

    Custom errors (``PydanticCustomError``) and validators that raise may put
    anything in their text, so only the built-in, non-echoing types keep it.
    """
    if kind in _CORE_TYPES:
        return message
    return "Invalid value"


def render(errors: Sequence[FieldError], root: str = "value") -> str:
    return "; ".join(e.render(root) for e in errors)
