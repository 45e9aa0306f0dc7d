"""What a benchmark suite hands the runner: cases, a check, targets, notes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from benchmarks.harness import Case, Row

Table = Mapping[str, Sequence[Row]]
"""Rows by scenario, as :func:`benchmarks.harness.with_ratios` returns them."""


@dataclass(frozen=True)
class Target:
    """A published goal and whether this run met it."""

    goal: str
    met: bool
    measured: str

    @property
    def verdict(self) -> str:
        return "met" if self.met else "NOT met"


@dataclass(frozen=True)
class Suite:
    """One group of benchmarks (container, per-call MCP, HTTP, scale, ...).

    ``verify`` runs before any timing and raises when a contender does not
    build what the scenario says (the same objects, the same sharing), so a
    fast wrong answer cannot enter a table.
    """

    name: str
    title: str
    scenarios: Mapping[str, str]
    """Scenario key -> its heading in the report, in report order."""
    cases: Callable[[], Sequence[Case]]
    verify: Callable[[], None]
    targets: Callable[[Table], Sequence[Target]]
    packages: Sequence[str] = ()
    """Distributions whose installed versions the report names."""
    notes: Sequence[str] = field(default_factory=tuple)
    limits: Mapping[str, float] = field(default_factory=dict)
    """Scenario key -> the target ratio drawn on the plot."""


def row(table: Table, scenario: str, tag: str) -> Row:
    """The row of ``scenario`` whose case carries ``tag``."""
    for candidate in table[scenario]:
        if candidate.case.tag == tag:
            return candidate
    raise KeyError(f"no row tagged {tag!r} in scenario {scenario!r}")
