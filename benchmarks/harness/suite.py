"""What a benchmark suite hands the runner: cases, a check, targets, notes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from benchmarks.harness.timing import Case, Result, Row, Settings

Table = Mapping[str, Sequence[Row]]
"""Rows by scenario, as :func:`benchmarks.harness.timing.with_ratios` returns them."""


@dataclass(frozen=True)
class RunOptions:
    """What the command line decided, for suites that adapt to it."""

    quick: bool
    settings: Settings
    """This suite's settings (after its ``tune``)."""
    venvs: bool | None = None
    """Contenders in their own virtual environments: True creates or refreshes them,
    False skips them, None uses them only when they already exist (``--quick``)."""
    progress: Callable[[str], None] = field(default=lambda _message: None)


@dataclass(frozen=True)
class Measured:
    """Rows a suite measured outside the harness loop (its own method, another venv)."""

    results: Sequence[Result] = ()
    notes: Sequence[str] = ()
    versions: Sequence[str] = ()
    """Extra ``name version`` strings for the report's versions line."""


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
class Column:
    """An extra column of a scenario's table, read from each row."""

    title: str
    value: Callable[[Row], str]
    right: bool = True


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
    cases: Callable[[RunOptions], Sequence[Case]]
    verify: Callable[[RunOptions], None]
    targets: Callable[[Table], Sequence[Target]]
    packages: Sequence[str] = ()
    """Distributions whose installed versions the report names."""
    notes: Sequence[str] = field(default_factory=tuple)
    limits: Mapping[str, float] = field(default_factory=dict)
    """Scenario key -> the target ratio drawn on the plot."""
    tune: Callable[[Settings, bool], Settings] | None = None
    """This suite's settings from the run's (and whether the run is ``--quick``)."""
    measure: Callable[[RunOptions], Measured] | None = None
    """Rows measured outside the harness loop; merged with the cases' rows."""
    units: Mapping[str, str] = field(default_factory=dict)
    """Scenario key -> unit of its figures: ``ns`` (default), ``us`` or ``ms``."""
    ratio_titles: Mapping[str, str] = field(default_factory=dict)
    """Scenario key -> title of its ratio column (default ``x floor``)."""
    columns: Mapping[str, Sequence[Column]] = field(default_factory=dict)
    """Scenario key -> extra columns after the ratio."""


def find(table: Table, scenario: str, tag: str) -> Row | None:
    """The row of ``scenario`` whose case carries ``tag``; ``None`` when not measured."""
    return next((row for row in table.get(scenario, ()) if row.case.tag == tag), None)


def row(table: Table, scenario: str, tag: str) -> Row:
    """Like :func:`find`, for a row every run has."""
    found = find(table, scenario, tag)
    if found is None:
        raise KeyError(f"no row tagged {tag!r} in scenario {scenario!r}")
    return found
