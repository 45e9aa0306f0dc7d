"""A small greedy all-pairs generator, deterministic, with constraints and server grouping.

``all_pairs(dimensions, allowed, server)`` returns full assignments (one value per
dimension) such that every pair of values of two dimensions that some allowed
assignment contains is contained in at least one returned assignment. It works in two
phases, so that the assignments share few distinct values of the ``server`` dimensions
(each distinct combination of them costs a server or a process):

1. the server configurations: a greedy cover of the pairs among the ``server``
   dimensions alone;
2. the assignments: each step takes, among every configuration of phase 1 joined with
   every combination of the other dimensions that ``allowed`` accepts, the one that
   covers the most pairs not covered yet (ties: a configuration already in use first,
   then the order of the dimensions' values).

Everything iterates in the order the dimensions and their values are given, so the
result depends only on the arguments.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence

Assignment = Mapping[str, str]
Pair = tuple[tuple[str, str], tuple[str, str]]


def pairs_of(assignment: Assignment, dimensions: Iterable[str]) -> set[Pair]:
    """Every pair of (dimension, value) of ``assignment`` over ``dimensions``, in their order."""
    items = [(name, assignment[name]) for name in dimensions]
    return {(a, b) for a, b in itertools.combinations(items, 2)}


def _space(dimensions: Mapping[str, Sequence[str]], names: Sequence[str]) -> list[dict[str, str]]:
    return [
        dict(zip(names, values, strict=True))
        for values in itertools.product(*(dimensions[name] for name in names))
    ]


def coverable_pairs(
    dimensions: Mapping[str, Sequence[str]], allowed: Callable[[Assignment], bool]
) -> set[Pair]:
    """The pairs some allowed full assignment contains: those the cover must contain."""
    names = list(dimensions)
    found: set[Pair] = set()
    for assignment in _space(dimensions, names):
        if allowed(assignment):
            found |= pairs_of(assignment, names)
    return found


def _cover(
    candidates: Sequence[tuple[dict[str, str], frozenset[Pair]]],
    wanted: set[Pair],
    key: Callable[[Assignment], tuple[str, ...]] | None = None,
) -> list[dict[str, str]]:
    """Greedy: the candidate covering the most uncovered pairs, until none is left; among
    equals, one whose ``key`` (its server configuration) was chosen before, then the first."""
    chosen: list[dict[str, str]] = []
    used: set[tuple[str, ...]] = set()
    uncovered = set(wanted)
    while uncovered:
        assignment, pairs = max(
            candidates,
            key=lambda c: (len(c[1] & uncovered), key is not None and key(c[0]) in used),
        )
        if not pairs & uncovered:
            raise ValueError(f"no candidate covers {sorted(uncovered)}")
        chosen.append(assignment)
        if key is not None:
            used.add(key(assignment))
        uncovered -= pairs
    return chosen


def all_pairs(
    dimensions: Mapping[str, Sequence[str]],
    allowed: Callable[[Assignment], bool],
    server: Sequence[str] = (),
) -> list[dict[str, str]]:
    """Full assignments covering every coverable pair (see the module's docstring)."""
    names = list(dimensions)
    wanted = coverable_pairs(dimensions, allowed)
    rest = [name for name in names if name not in server]
    ordered = [name for name in names if name in server]  # pairs name dimensions in one order
    configurations = _cover(
        [(config, frozenset(pairs_of(config, ordered))) for config in _space(dimensions, ordered)],
        {pair for pair in wanted if pair[0][0] in server and pair[1][0] in server},
    )
    candidates = []
    for config in configurations or [{}]:
        for others in _space(dimensions, rest):
            assignment = {name: {**config, **others}[name] for name in names}
            if allowed(assignment):
                candidates.append((assignment, frozenset(pairs_of(assignment, names))))
    return _cover(candidates, wanted, key=lambda a: tuple(a[name] for name in server))
