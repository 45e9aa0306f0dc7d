"""The instruction budget: a few core rows held to a committed baseline.

``benchmarks/counts/baseline.json`` records, for each row of
:data:`benchmarks.counts.rows.BUDGET` (and its floor), the instructions per
operation counted with :data:`LOOPS`, the versions they were taken with, the
margin, and why the baseline was last taken. :func:`check` counts the same rows
the same way and names every row that grew by more than the margin.

Counts are only comparable between identical interpreters, dependencies, C
libraries and valgrinds: :func:`mismatch` says what differs, and the test skips
then. Taking a new baseline is a deliberate act: ``python -m benchmarks.counts
budget --update --reason "..."`` writes the file, and the commit that carries it
says why (the reason is stored in the file too).
"""

from __future__ import annotations

import datetime
import json
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.counts.rows import BUDGET, with_floors
from benchmarks.counts.run import (
    ROOT,
    CountError,
    Counts,
    Loops,
    count,
    valgrind,
    valgrind_version,
    versions,
)
from benchmarks.counts.table import VERSIONED

BASELINE = Path(__file__).resolve().parent / "baseline.json"

LOOPS = Loops(calls=20, handler_calls=200, resolves=500)
"""Small loops: the budget runs in the test suite."""

MARGIN = 0.03
"""A row fails the budget when it counts more than 3% over its baseline."""


@dataclass(frozen=True)
class Baseline:
    rows: Mapping[str, float]
    """Row key -> instructions per operation."""
    versions: Mapping[str, str]
    loops: Loops
    margin: float
    reason: str
    taken: str
    """Date and commit the baseline was counted on (the commit before it was stored)."""

    def to_json(self) -> str:
        data = asdict(self)
        data["rows"] = {key: round(value, 1) for key, value in self.rows.items()}
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def load(cls, path: Path = BASELINE) -> Baseline:
        data = json.loads(path.read_text())
        return cls(
            rows=data["rows"],
            versions=data["versions"],
            loops=Loops(**data["loops"]),
            margin=data["margin"],
            reason=data["reason"],
            taken=data["taken"],
        )


@dataclass(frozen=True)
class Verdict:
    key: str
    baseline: float
    counted: float

    @property
    def change(self) -> float:
        return self.counted / self.baseline - 1

    def line(self) -> str:
        return (
            f"{self.key}: {self.counted:,.0f} instructions per operation, baseline "
            f"{self.baseline:,.0f} ({self.change:+.2%})"
        )


def mismatch(baseline: Baseline, versions: Mapping[str, str]) -> list[str]:
    """What differs between the baseline's environment and ``versions``."""
    return [
        f"{name} {baseline.versions.get(name)} in the baseline, {versions.get(name)} here"
        for name in VERSIONED
        if baseline.versions.get(name) != versions.get(name)
    ]


def environment() -> dict[str, str]:
    """This environment's versions, as a count here would record them (without counting)."""
    command = valgrind()
    if command is None:
        raise CountError("valgrind is not installed (Debian: apt-get install valgrind)")
    return {**versions(), "valgrind": valgrind_version(command)}


def verdicts(baseline: Baseline, counts: Counts) -> list[Verdict]:
    return [
        Verdict(key, baseline.rows[key], counts.per_op(key))
        for key in baseline.rows
        if key in counts.rows
    ]


def over(baseline: Baseline, counts: Counts) -> list[Verdict]:
    """The rows that grew by more than the baseline's margin."""
    return [v for v in verdicts(baseline, counts) if v.change > baseline.margin]


def measure(
    baseline: Baseline | None = None, progress: Callable[[str], None] = lambda _m: None
) -> Counts:
    """Count the budget's rows with the baseline's loops (or :data:`LOOPS`)."""
    loops = baseline.loops if baseline is not None else LOOPS
    keys = list(baseline.rows) if baseline is not None else BUDGET
    return count(keys, loops, progress=progress)


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
        capture_output=True,
        text=True,
        check=False,
    )
    commit = done.stdout.strip() or "unknown commit"
    return commit + (" with uncommitted changes in src/" if dirty.stdout.strip() else "")


def take(reason: str, progress: Callable[[str], None] = lambda _m: None) -> Baseline:
    """Count the budget's rows now and make them the baseline (not yet written)."""
    counts = count(BUDGET, LOOPS, progress=progress)
    return Baseline(
        rows={key: counts.per_op(key) for key in with_floors(BUDGET)},
        versions={name: counts.versions.get(name, "?") for name in VERSIONED},
        loops=LOOPS,
        margin=MARGIN,
        reason=reason,
        taken=f"{datetime.date.today().isoformat()}, {_commit()}",
    )
