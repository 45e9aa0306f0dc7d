"""A compiled validator and JSON Schema for any contract type, built once."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticSerializationError, to_json

from schemas.errors import ContractError, FieldError, summarize
from schemas.wire import may_hold_non_finite, non_json

T = TypeVar("T")

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _require_discriminators(schema: dict[str, Any]) -> dict[str, Any]:
    """Mark each discriminated union's tag as required in every branch.

    pydantic publishes a tag that has a default as optional, yet its validator
    needs the tag to pick a branch: the published schema must say so.
    """
    definitions: dict[str, Any] = schema.get("$defs", {})

    def branch(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref", "")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found = definitions.get(ref.removeprefix("#/$defs/"))
            if isinstance(found, dict):
                return found
        return node

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            discriminator = node.get("discriminator")
            tag = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
            if isinstance(tag, str):
                for option in node.get("oneOf", []):
                    target = branch(option) if isinstance(option, dict) else None
                    if target is not None and tag not in target.setdefault("required", []):
                        target["required"].append(tag)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(schema)
    return schema


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
            schema = _require_discriminators(adapter.json_schema(mode="validation"))
        except Exception as exc:
            raise ContractError(f"{tp!r} is not a valid contract: {exc}") from exc
        return Contract(tp, adapter, schema)

    @property
    def is_object(self) -> bool:
        """Whether the JSON Schema describes a JSON object."""
        return self.json_schema.get("type") == "object"

    def validate(self, value: Any) -> T:
        """Validate a Python value (raises pydantic's ``ValidationError``)."""
        # The adapter's validator and serializer are called directly, here and below:
        # ``TypeAdapter``'s methods only pass them their keyword defaults (about 3,000
        # instructions a call; ``dump_python`` about 5,000).
        valid: T = self.adapter.validator.validate_python(value)
        return valid

    def check(self, value: Any) -> tuple[T | None, tuple[FieldError, ...]]:
        """Validate and return ``(value, ())`` or ``(None, safe field errors)``."""
        try:
            valid: T = self.adapter.validator.validate_python(value)
            return valid, ()
        except PydanticValidationError as exc:
            return None, summarize(exc)

    def check_wire(self, value: Any) -> tuple[T | None, tuple[FieldError, ...]]:
        """Like ``check`` with JSON semantics, for values that arrived as JSON.

        A strict contract then accepts what its published schema promises
        (an ISO date string for a ``date``, an array for a ``tuple``). What JSON
        cannot carry fails here, whatever the contract: a non-finite number
        (``NaN``/``Infinity`` literals) and a string with a lone surrogate.
        """
        try:
            data = to_json(value, inf_nan_mode="constants")
        except PydanticSerializationError:
            faults = non_json(value)
            if faults:
                return None, faults
            raise
        if may_hold_non_finite(data):
            faults = non_json(value)
            if faults:
                return None, faults
        try:
            valid: T = self.adapter.validator.validate_json(data)
            return valid, ()
        except PydanticValidationError as exc:
            return None, summarize(exc)

    def dump(self, value: Any) -> Any:
        """The JSON-compatible form of a value of this contract."""
        return self.adapter.serializer.to_python(value, mode="json", by_alias=True)
