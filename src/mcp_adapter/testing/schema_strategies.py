"""JSON values for a JSON Schema as pydantic writes it (a draft 2020-12 subset), as a
hypothesis strategy: what ``payloads`` generates arguments from.

This module needs ``hypothesis`` (``pip install 'mcp-adapter-di[testing]'``).
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from pydantic import TypeAdapter

from mcp_adapter.distribution import needs_extra

with needs_extra("testing", __name__):
    from hypothesis import strategies as st
    from hypothesis.provisional import urls

JsonStrategy: TypeAlias = st.SearchStrategy[Any]

MAX_EXTRA_ITEMS = 4
"""Lists and maps get at most this many elements beyond their minimum (payloads stay small)."""

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "discriminator",
        "contentMediaType",
        "contentEncoding",
    }
)
"""Keywords that describe without constraining (``discriminator`` is advisory:
its branches carry ``const`` for the tag)."""

_HANDLED = frozenset(
    {
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "enum",
        "const",
        "type",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
    }
)


class UnsupportedSchemaError(ValueError):
    """The JSON Schema uses a keyword this generator does not understand."""


def roundtrip(value: Any) -> Any:
    """The value exactly as a server decodes it from the wire (tuples become lists...)."""
    return json.loads(json.dumps(value))


def _dumped(tp: type) -> Callable[[Any], Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(tp)
    return lambda value: adapter.dump_python(value, mode="json")


_FORMATS: dict[str, Callable[[], st.SearchStrategy[str]]] = {
    "date-time": lambda: st.datetimes(
        timezones=st.sampled_from([None, datetime.UTC]),
        min_value=datetime.datetime(1900, 1, 1),
        max_value=datetime.datetime(2200, 1, 1),
    ).map(_dumped(datetime.datetime)),
    "date": lambda: st.dates().map(_dumped(datetime.date)),
    "time": lambda: st.times().map(_dumped(datetime.time)),
    "duration": lambda: st.timedeltas(
        min_value=datetime.timedelta(days=-10_000), max_value=datetime.timedelta(days=10_000)
    ).map(_dumped(datetime.timedelta)),
    "uuid": lambda: st.uuids().map(str),
    "uuid1": lambda: st.uuids(version=1).map(str),
    "uuid3": lambda: st.uuids(version=3).map(str),
    "uuid4": lambda: st.uuids(version=4).map(str),
    "uuid5": lambda: st.uuids(version=5).map(str),
    "ipv4": lambda: st.ip_addresses(v=4).map(str),
    "ipv6": lambda: st.ip_addresses(v=6).map(str),
    "ipvanyaddress": lambda: st.ip_addresses().map(str),
    "ipv4network": lambda: st.ip_addresses(v=4).map(lambda a: str(ipaddress.ip_network(f"{a}/32"))),
    "email": lambda: st.from_regex(r"\A[a-z][a-z0-9]{0,8}@example\.(com|org)\Z"),
    "uri": lambda: urls(),
    "binary": lambda: st.text(st.characters(codec="ascii"), max_size=16),
    "path": lambda: st.from_regex(r"\A(/[a-z0-9_]{1,8}){1,3}\Z"),
}


def _json_values() -> JsonStrategy:
    """Any JSON value (for ``{}`` / ``true`` schemas), small."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**53), 2**53)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(st.characters(codec="utf-8"), max_size=12)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=6), inner, max_size=3)
        ),
        max_leaves=8,
    )


class _Builder:
    """Turns one JSON Schema document (with its ``$defs``) into a strategy."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, JsonStrategy] = {}

    def build(self, schema: Any) -> JsonStrategy:
        if schema is True or schema == {}:
            return _json_values()
        if schema is False:
            return st.nothing()
        if not isinstance(schema, Mapping):
            raise UnsupportedSchemaError(f"not a schema: {schema!r}")
        unknown = set(schema) - _HANDLED - _ANNOTATIONS
        if unknown:
            raise UnsupportedSchemaError(f"unsupported keyword(s): {', '.join(sorted(unknown))}")
        if "$ref" in schema:
            return self._ref(str(schema["$ref"]))
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                rest = {k: v for k, v in schema.items() if k not in (key, "discriminator")}
                branches = [
                    self._tagged(branch, schema.get("discriminator")) for branch in schema[key]
                ]
                return st.one_of([self.build({**rest, **branch}) for branch in branches])
        if "allOf" in schema:
            parts = schema["allOf"]
            if len(parts) != 1:
                raise UnsupportedSchemaError("allOf with more than one schema")
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            return self.build({**rest, **parts[0]})
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of([self.build({**schema, "type": one}) for one in kind])
        if kind is None:
            kind = self._implied_type(schema)
            if kind is None:
                return _json_values()
        return self._typed(str(kind), schema)

    def _tagged(self, branch: Any, discriminator: Any) -> Any:
        """A union branch with its discriminator property required.

        Pydantic's validator needs the tag even where the schema gives it a
        default (and so leaves it out of ``required``).
        """
        if not isinstance(discriminator, Mapping) or not isinstance(branch, Mapping):
            return branch
        tag = discriminator.get("propertyName")
        target = self._resolve(str(branch["$ref"])) if "$ref" in branch else branch
        if not isinstance(target, Mapping) or tag not in target.get("properties", {}):
            return branch
        required = [*target.get("required", ()), tag]
        merged = {k: v for k, v in branch.items() if k != "$ref"}
        return {**target, **merged, "required": sorted(set(required))}

    @staticmethod
    def _implied_type(schema: Mapping[str, Any]) -> str | None:
        if {"properties", "additionalProperties", "required"} & set(schema):
            return "object"
        if {"items", "prefixItems"} & set(schema):
            return "array"
        if {"minLength", "maxLength", "pattern", "format"} & set(schema):
            return "string"
        return None

    def _ref(self, ref: str) -> JsonStrategy:
        if ref not in self.refs:
            target = self._resolve(ref)
            self.refs[ref] = st.deferred(lambda: self._resolved(ref, target))
        return self.refs[ref]

    def _resolved(self, ref: str, target: Any) -> JsonStrategy:
        return self.build(target)

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise UnsupportedSchemaError(f"external $ref {ref!r}")
        node: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                raise UnsupportedSchemaError(f"unresolvable $ref {ref!r}")
            node = node[part]
        return node

    def _typed(self, kind: str, schema: Mapping[str, Any]) -> JsonStrategy:
        if kind == "null":
            return st.none()
        if kind == "boolean":
            return st.booleans()
        if kind == "integer":
            return self._integer(schema)
        if kind == "number":
            return self._number(schema)
        if kind == "string":
            return self._string(schema)
        if kind == "array":
            return self._array(schema)
        if kind == "object":
            return self._object(schema)
        raise UnsupportedSchemaError(f"unknown type {kind!r}")

    @staticmethod
    def _integer(schema: Mapping[str, Any]) -> JsonStrategy:
        low = schema.get("minimum")
        high = schema.get("maximum")
        if "exclusiveMinimum" in schema:
            low = math.floor(schema["exclusiveMinimum"]) + 1
        if "exclusiveMaximum" in schema:
            high = math.ceil(schema["exclusiveMaximum"]) - 1
        low = math.ceil(low) if low is not None else None
        high = math.floor(high) if high is not None else None
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            return st.integers(
                None if low is None else -(-low // step),
                None if high is None else high // step,
            ).map(lambda k: k * step)
        return st.integers(low, high)

    def _number(self, schema: Mapping[str, Any]) -> JsonStrategy:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        floats = st.floats(
            min_value=None if low is None else float(low),
            max_value=None if high is None else float(high),
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
            allow_nan=False,
            allow_infinity=False,
        )
        if "multipleOf" in schema:
            step = schema["multipleOf"]
            ints = self._integer({**schema, "multipleOf": None})
            return ints.map(lambda k: k * step) | floats.map(lambda x: round(x / step) * step)
        return floats | self._integer(schema)

    @staticmethod
    def _string(schema: Mapping[str, Any]) -> JsonStrategy:
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        base: st.SearchStrategy[str]
        if "pattern" in schema:
            base = st.from_regex(str(schema["pattern"]))
        elif "format" in schema and schema["format"] in _FORMATS:
            base = _FORMATS[schema["format"]]()
        else:
            return st.text(
                st.characters(codec="utf-8"),
                min_size=low,
                max_size=int(high) if high is not None else low + 16,
            )
        if low or high is not None:
            base = base.filter(lambda s: low <= len(s) and (high is None or len(s) <= high))
        return base

    def _array(self, schema: Mapping[str, Any]) -> JsonStrategy:
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        high = int(high) if high is not None else low + MAX_EXTRA_ITEMS
        prefix = [self.build(item) for item in schema.get("prefixItems", ())]
        items = schema.get("items", not prefix)
        rest = self.build(items)
        if prefix:
            head = st.tuples(*prefix).map(list)
            if items is False:
                return head
            tail_high = max(0, high - len(prefix))
            tail_low = max(0, low - len(prefix))
            return st.tuples(head, st.lists(rest, min_size=tail_low, max_size=tail_high)).map(
                lambda pair: [*pair[0], *pair[1]]
            )
        if schema.get("uniqueItems"):
            return st.lists(rest, min_size=low, max_size=high, unique_by=_canonical)
        return st.lists(rest, min_size=low, max_size=high)

    def _object(self, schema: Mapping[str, Any]) -> JsonStrategy:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        fixed = {name: self.build(sub) for name, sub in properties.items() if name in required}
        optional = {
            name: self.build(sub) for name, sub in properties.items() if name not in required
        }
        for name in required - set(properties):
            fixed[name] = _json_values()
        objects: JsonStrategy = st.fixed_dictionaries(fixed, optional=optional)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and extra:
            keys: st.SearchStrategy[str] = (
                self._string(schema["propertyNames"])
                if "propertyNames" in schema
                else st.text(st.characters(codec="utf-8"), max_size=8)
            )
            keys = keys.filter(lambda key: key not in properties)
            extras = st.dictionaries(keys, self.build(extra), max_size=MAX_EXTRA_ITEMS)
            objects = st.tuples(objects, extras).map(lambda pair: {**pair[1], **pair[0]})
        low = schema.get("minProperties")
        high = schema.get("maxProperties")
        if low is not None or high is not None:
            objects = objects.filter(
                lambda d: (low is None or len(d) >= low) and (high is None or len(d) <= high)
            )
        return objects


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def from_json_schema(schema: Mapping[str, Any]) -> JsonStrategy:
    """JSON values for a JSON Schema as pydantic writes them (draft 2020-12 subset).

    Not filtered: a value can still fail a validator the schema cannot express.
    Raises ``UnsupportedSchemaError`` for keywords outside that subset.

    >>> strategy = from_json_schema({"type": "integer", "minimum": 1, "maximum": 3})
    >>> strategy.example() in (1, 2, 3)  # doctest: +SKIP
    True
    """
    return _Builder(schema).build(schema)
