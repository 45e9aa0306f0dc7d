"""Validation failures summarized without the rejected values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError as PydanticValidationError


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


_GENERIC_MESSAGES = {
    "value_error": "Value error",
    "assertion_error": "Assertion failed",
}


def _safe_message(kind: str, message: str) -> str:
    """Custom validators may quote the input; their messages are replaced by a generic one."""
    return _GENERIC_MESSAGES.get(kind, message)


def render(errors: Sequence[FieldError]) -> str:
    return "; ".join(str(e) for e in errors)
