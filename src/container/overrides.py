"""Overrides: the bindings that replace others, for a ``with`` block or in a copy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from container.binding import Binding
from container.codegen import MISSING
from container.interop import binding_of
from container.lifetime import Lifetime


def replacing(
    key: Any, previous: Binding | None, replacement: Any, factory: Any, lifetime: Lifetime | None
) -> Binding:
    """The binding ``container.override(key, replacement, factory=, lifetime=)`` puts in.

    A class is bound as an implementation and a factory as a factory, with
    ``lifetime`` or the previous binding's; any other replacement is a value.
    """
    kept_lifetime = lifetime or (previous.lifetime if previous else Lifetime.TRANSIENT)
    if factory is not None:
        return binding_of(key, factory, kept_lifetime)
    if isinstance(replacement, type):
        return binding_of(key, replacement, kept_lifetime)
    if replacement is MISSING:
        raise TypeError("override() needs a replacement value or factory=")
    return Binding.instance(key, replacement)


def overridden(bindings: Mapping[Any, Binding], overrides: Mapping[Any, Any]) -> dict[Any, Binding]:
    """``bindings`` with each key of ``overrides`` bound to its value instead (a class is
    bound as an implementation, keeping the lifetime)."""
    result = dict(bindings)
    for key, replacement in overrides.items():
        previous = result.get(key)
        if isinstance(replacement, type):
            lifetime = previous.lifetime if previous is not None else Lifetime.TRANSIENT
            result[key] = binding_of(key, replacement, lifetime)
        else:
            result[key] = Binding.instance(key, replacement)
    return result
