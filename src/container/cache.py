"""A scope's cache of scoped values: the states it goes through, and its dict.

A resolution context (a scope, or the container's root) keeps its cache in
``_cache``, which is one of:

- ``None``: nothing cached yet (a scope just opened). A builder whose whole
  graph it inlines takes its *fresh path* here: it builds every scoped node once,
  with no lookup, and keeps the values it built as one tuple in ``_record``
  (``(value, ..., keys)``), setting ``_cache`` to ``PENDING``. Most scopes
  resolve one graph, so most never make a dict.
- ``PENDING``: the values are in ``_record``; :func:`open_cache` turns them into
  the dict the first time anything else needs the cache.
- a dict: the values by key.
- a dict that refuses every lookup and store: a closed scope's, or the root's
  (scoped values outside any scope). It is never empty, so a builder never
  mistakes it for a new cache.

Builders read ``_cache`` and test it for truth: the two states before the
dict, and an empty dict, are false, and only then is anything else looked at.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from container.errors import ScopeError
from container.introspect import type_name

PENDING: Any = frozenset()
"""``_cache`` while the values of a fresh path wait in ``_record`` (false, like ``None``)."""

CLOSED_MESSAGE = "this scope is closed; open a new one with container.scope()"


def open_cache(ctx: Any) -> dict[Any, Any]:
    """The cache of ``ctx`` as a dict, made now if it is not one yet."""
    cache = ctx._cache
    if cache:
        return cache  # type: ignore[no-any-return]
    if cache is None:
        cache = {}
    elif cache is PENDING:
        record = ctx._record
        ctx._record = None
        cache = dict(zip(record[-1], record, strict=False))  # the keys come last
    ctx._cache = cache
    return cache  # type: ignore[no-any-return]


def salvage(ctx: Any, names: tuple[tuple[str, Any], ...], bound: Mapping[str, Any]) -> None:
    """After a fresh path failed: cache what it built before the failure, as a path that
    stored each value when it made it would have (``names``: ``(local, key)`` pairs,
    ``bound``: the path's ``locals()``)."""
    cache = open_cache(ctx)
    for name, key in names:
        if name in bound:
            cache[key] = bound[name]


def keep(ctx: Any, record: tuple[Any, ...]) -> None:
    """Cache the values of a fresh path in the dict (``record`` as in ``_record``).

    For graphs with session-scoped nodes: a scope that is its own session may
    have made its dict during the path, for them.
    """
    open_cache(ctx).update(zip(record[-1], record, strict=False))


class ClosedCache(dict[Any, Any]):
    """Installed when a scope closes: any later resolution through it is an error."""

    def __init__(self) -> None:
        super().__init__({ClosedCache: None})

    def get(self, key: Any, default: Any = None) -> Any:
        raise ScopeError(CLOSED_MESSAGE)

    def __getitem__(self, key: Any) -> Any:
        raise ScopeError(CLOSED_MESSAGE)

    def __setitem__(self, key: Any, value: Any) -> None:
        raise ScopeError(CLOSED_MESSAGE)


CLOSED = ClosedCache()


class NoScopeCache(dict[Any, Any]):
    """The cache of the root context: asking it for a scoped value is the error."""

    def __init__(self) -> None:
        super().__init__({NoScopeCache: None})

    def get(self, key: Any, default: Any = None) -> Any:
        raise ScopeError(
            f"{type_name(key)} is scoped and was resolved outside a scope; "
            "resolve it inside `with container.scope() as scope:`"
        )
