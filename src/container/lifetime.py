"""How long a resolved service lives, and the scope levels that hold them."""

from __future__ import annotations

import enum


class Lifetime(enum.Enum):
    """The lifecycle of a binding.

    Scopes nest: the container (app) > a session > a request. A value lives in
    the scope of its level, whichever scope below it asked first.

    >>> Lifetime.SCOPED
    <Lifetime.SCOPED>
    >>> Lifetime.SESSION.level < Lifetime.SCOPED.level
    True
    """

    SINGLETON = "singleton"
    """One instance per container, built on first use, finalized at ``container.close()``."""
    SESSION = "session"
    """One instance per session scope, finalized when the session ends. A request scope
    opened without a session is its own session: the value then lives as long as it."""
    SCOPED = "scoped"
    """One instance per (request) scope, finalized when the scope exits."""
    TRANSIENT = "transient"
    """A new instance for every injection; finalizers run when the enclosing scope exits."""

    @property
    def level(self) -> int:
        """Depth of the scope that holds the value: 0 app, 1 session, 2 request.

        A transient has no scope of its own (``-1``): it takes the level of what it needs.
        """
        return _LEVELS[self]

    def __repr__(self) -> str:
        return f"<Lifetime.{self.name}>"


APP, SESSION, REQUEST = 0, 1, 2
"""The scope levels (``Lifetime.level``, ``Node.level``): the container, a session, a request."""
_LEVELS = {
    Lifetime.SINGLETON: APP,
    Lifetime.SESSION: SESSION,
    Lifetime.SCOPED: REQUEST,
    Lifetime.TRANSIENT: -1,
}
LEVEL_NAMES = {APP: "the container", SESSION: "a session", REQUEST: "a request"}
"""How messages name the scope of each level."""
