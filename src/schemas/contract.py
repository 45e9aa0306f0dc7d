"""A compiled validator and JSON Schema for any contract type, built once."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from schemas.errors import ContractError, FieldError, summarize

T = TypeVar("T")

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True, slots=True, eq=False)
class Contract(Generic[T]):
    """A type with its validator and JSON Schema (draft 2020-12).

    >>> c = Contract.of(list[int])
    >>> c.validate([1, "2"])
    [1, 2]
    >>> c.json_schema
    {'items': {'type': 'integer'}, 'type': 'array'}
    """

    type: Any
    adapter: TypeAdapter[T] = field(repr=False)
    json_schema: dict[str, Any] = field(repr=False)

    @staticmethod
    @functools.cache
    def of(tp: Any) -> Contract[Any]:
        """The contract of ``tp``; raises ``ContractError`` if pydantic cannot describe it."""
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(tp)
            schema = adapter.json_schema(mode="validation")
        except Exception as exc:
            raise ContractError(f"{tp!r} is not a valid contract: {exc}") from exc
        return Contract(tp, adapter, schema)

    @property
    def is_object(self) -> bool:
        """Whether the JSON Schema describes a JSON object."""
        return self.json_schema.get("type") == "object"

    def validate(self, value: Any) -> T:
        """Validate a Python value (raises pydantic's ``ValidationError``)."""
        return self.adapter.validate_python(value)

    def check(self, value: Any) -> tuple[T | None, tuple[FieldError, ...]]:
        """Validate and return ``(value, ())`` or ``(None, safe field errors)``."""
        try:
            return self.adapter.validate_python(value), ()
        except PydanticValidationError as exc:
            return None, summarize(exc)

    def dump(self, value: Any) -> Any:
        """The JSON-compatible form of a value of this contract."""
        return self.adapter.dump_python(value, mode="json", by_alias=True)
