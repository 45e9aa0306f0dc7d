"""Validation failures summarized without the rejected values."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError as PydanticValidationError
from pydantic_core.core_schema import ErrorType


class ContractError(TypeError):
    """A type cannot serve as a contract (pydantic cannot validate or describe it)."""


@dataclass(frozen=True, slots=True)
class FieldError:
    """One failed field: where (a dotted path) and why, never the value itself."""

    path: str
    message: str
    type: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def _path(location: Sequence[int | str]) -> str:
    return ".".join(str(part) for part in location) or "(root)"


def summarize(error: PydanticValidationError) -> tuple[FieldError, ...]:
    """Field paths and messages of a pydantic error, with no input echoed.

    >>> from pydantic import TypeAdapter, ValidationError
    >>> try:
    ...     TypeAdapter(dict[str, int]).validate_python({"a": "secret"})
    ... except ValidationError as exc:
    ...     print(summarize(exc)[0])
    a: Input should be a valid integer, unable to parse string as an integer
    """
    details = error.errors(include_url=False, include_input=False, include_context=False)
    return tuple(
        FieldError(_path(item["loc"]), _safe_message(item["type"], item["msg"]), item["type"])
        for item in details
    )


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


def render(errors: Sequence[FieldError]) -> str:
    return "; ".join(str(e) for e in errors)
