"""``StateHandle``: the type of a payload field that carries a state handle.

The 2026-07-28 protocol has no session: a tool that keeps state across calls mints a
handle (``StateHandles.open()``) and the client passes it back as an ordinary argument.
A field typed ``StateHandle`` in a tool's input contract is such an argument; its JSON
Schema is a plain string, and the adapter looks the handle up for the caller before the
handler runs (``mcp_adapter.dispatch.handles``).

>>> from pydantic import BaseModel
>>> class Checkout(BaseModel):
...     cart: StateHandle
>>> Checkout.model_json_schema()["properties"]["cart"]["type"]
'string'
>>> type(Checkout(cart="abc").cart).__name__
'StateHandle'
"""

from __future__ import annotations

from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

MAX_HANDLE_LENGTH = 64
"""Characters a handle may have: a longer string is refused by validation, before any
lookup (a minted one has 32)."""
HANDLE_PATTERN = r"^[A-Za-z0-9_-]+$"
"""The characters of a minted handle (``secrets.token_urlsafe``)."""
HANDLE_DESCRIPTION = "A state handle minted by this server: pass back the value a tool returned."


class StateHandle(str):
    """A handle this server minted, carried as a string (a tool argument, a result field).

    Type one field of a tool's input contract ``StateHandle`` to take a handle back
    (at most one per tool); inject ``StateHandle`` into a service factory to know the
    handle of the call it serves.
    """

    __slots__ = ()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        text = core_schema.str_schema(
            min_length=1, max_length=MAX_HANDLE_LENGTH, pattern=HANDLE_PATTERN, strict=True
        )
        return core_schema.no_info_after_validator_function(
            cls, text, serialization=core_schema.to_string_ser_schema()
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        found = handler(schema)
        found.setdefault("description", HANDLE_DESCRIPTION)
        return found
