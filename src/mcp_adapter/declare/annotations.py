"""Client hints about a tool's behaviour, in Python spelling."""

from __future__ import annotations

from dataclasses import dataclass

from mcp import types


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnnotations:
    """Hints a client reads before calling a tool; unset fields stay unset.

    They are hints, not guarantees: ``read_only=True`` does not prevent writes.
    Left unset, the protocol's cautious defaults apply (not read-only,
    destructive, not idempotent, open world).

    >>> hints = ToolAnnotations(read_only=True, open_world=False).to_protocol()
    >>> hints.read_only_hint, hints.open_world_hint, hints.idempotent_hint
    (True, False, None)
    """

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def to_protocol(self) -> types.ToolAnnotations:
        return types.ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=self.open_world,
        )

    @property
    def is_unset(self) -> bool:
        return self == ToolAnnotations()


def to_protocol_annotations(
    value: ToolAnnotations | types.ToolAnnotations | None,
) -> types.ToolAnnotations | None:
    """Accept either spelling; the protocol model is what goes on the wire."""
    if value is None or isinstance(value, types.ToolAnnotations):
        return value
    return None if value.is_unset else value.to_protocol()
