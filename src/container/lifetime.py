"""How long a resolved service lives."""

from __future__ import annotations

import enum


class Lifetime(enum.Enum):
    """The lifecycle of a binding.

    >>> Lifetime.SCOPED
    <Lifetime.SCOPED>
    """

    SINGLETON = "singleton"
    """One instance per container, built on first use, finalized at ``container.close()``."""
    SCOPED = "scoped"
    """One instance per scope, finalized when the scope exits."""
    TRANSIENT = "transient"
    """A new instance for every injection; finalizers run when the enclosing scope exits."""

    def __repr__(self) -> str:
        return f"<Lifetime.{self.name}>"
