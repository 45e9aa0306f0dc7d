"""The instruction budget: a few core rows held to a committed baseline, on any interpreter.

``benchmarks/counts/baseline.json`` holds one record per interpreter it was taken
on: for each row of :data:`benchmarks.counts.rows.BUDGET` and its floor, the
instructions per operation counted with the garbage collector on, and the versions
counted with; plus the loops, the margin, and why the baseline was last taken.
:func:`check` counts the same rows the same way and holds each to two budgets:

- **its ratio to its floor**, both counted in this run: at most the margin over the
  ratio recorded on this interpreter (same version and build), or, on an interpreter
  the baseline has no record of, over the largest ratio recorded on any. A ratio does
  not depend on the machine, and for the rows through the client hardly on the
  interpreter (0.3% apart between Debian's CPython 3.11.2 and a pyenv build of
  3.11.7); the container's rows lean on the build (8% apart: Debian's optimized build
  makes the floor's plain calls cheaper), hence a record per interpreter. This
  budget is checked in every environment.
- **its absolute count**: at most the margin over the record whose versions all match
  (interpreter, dependencies, C library, valgrind); where none does, not compared,
  and the check says what differs.

Taking a new baseline is a deliberate act: ``python -m benchmarks.counts budget
--update --reason "..." [--python /usr/bin/python3 ...]`` counts here and on each
interpreter named (in a venv of this checkout's lock), writes the file, and the
commit that carries it says why (the reason is stored in the file too).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.counts.rows import BUDGET, floor_of, with_floors
from benchmarks.counts.run import VERSIONED, Counts, Loops, count, synced
from benchmarks.harness.venv import ROOT, commit

BASELINE = Path(__file__).resolve().parent / "baseline.json"

LOOPS = Loops()
"""The table's loops: enough calls that the collections they cause are in the count."""

MARGIN = 0.03
"""A row fails the budget when it counts, or its ratio is, more than 3% over its record."""

INTERPRETER = ("python", "python-build")
"""The versions that name an interpreter: records and ratios are per interpreter."""

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Record:
    """The budget's rows as counted on one interpreter."""

    versions: Mapping[str, str]
    rows: Mapping[str, float]
    """Row key -> instructions per operation, collector on."""

    def ratio(self, key: str) -> float:
        return self.rows[key] / self.rows[floor_of(key)]

    def interpreter(self) -> str:
        return ", ".join(f"{name} {self.versions.get(name)}" for name in INTERPRETER)


@dataclass(frozen=True)
class Baseline:
    records: Sequence[Record]
    loops: Loops
    margin: float
    reason: str
    taken: str
    """Date and commit the baseline was counted on (the commit before it was stored)."""

    def to_json(self) -> str:
        data = asdict(self)
        for record in data["records"]:
            record["rows"] = {key: round(value, 1) for key, value in record["rows"].items()}
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def load(cls, path: Path = BASELINE) -> Baseline:
        data = json.loads(path.read_text())
        return cls(
            records=[Record(**record) for record in data["records"]],
            loops=Loops(**data["loops"]),
            margin=data["margin"],
            reason=data["reason"],
            taken=data["taken"],
        )


@dataclass(frozen=True)
class Verdict:
    key: str
    unit: str
    """``x floor`` (a ratio) or ``instructions`` (per operation)."""
    baseline: float
    counted: float
    margin: float

    @property
    def change(self) -> float:
        return self.counted / self.baseline - 1

    @property
    def over(self) -> bool:
        return self.change > self.margin

    def line(self) -> str:
        if self.unit == "x floor":
            figures = f"{self.counted:.4f}x its floor, baseline {self.baseline:.4f}x"
        else:
            figures = (
                f"{self.counted:,.0f} instructions per operation, baseline {self.baseline:,.0f}"
            )
        return f"{self.key}: {figures} ({self.change:+.2%})"


@dataclass(frozen=True)
class Checked:
    verdicts: Sequence[Verdict]
    notes: Sequence[str] = field(default_factory=tuple)
    """What each budget was held to, and what was not compared and why."""
    recorded: bool = True
    """Whether the baseline has a record of this interpreter."""

    @property
    def over(self) -> list[Verdict]:
        return [verdict for verdict in self.verdicts if verdict.over]


def mismatch(recorded: Mapping[str, str], here: Mapping[str, str]) -> list[str]:
    """What differs between a record's versions and ``here``."""
    return [
        f"{name} {recorded.get(name)} in the baseline, {here.get(name)} here"
        for name in VERSIONED
        if recorded.get(name) != here.get(name)
    ]


def check(baseline: Baseline, counts: Counts) -> Checked:
    """Every budget row's ratio to its floor, and, where the versions match a record,
    every row's count (floors too), against the baseline."""
    here, margin = counts.versions, baseline.margin
    same = [r for r in baseline.records if not mismatch(r.versions, here)]
    interpreter = [
        r for r in baseline.records if all(r.versions.get(n) == here.get(n) for n in INTERPRETER)
    ]
    notes = []
    if interpreter:
        notes.append(
            f"ratios held to the record of this interpreter ({interpreter[0].interpreter()})"
        )

        def reference(key: str) -> float:
            return interpreter[0].ratio(key)
    else:
        named = ", ".join(f"{name} {here.get(name)}" for name in INTERPRETER)
        notes.append(
            f"no record of this interpreter ({named}): ratios held to the largest recorded "
            f"on the {len(baseline.records)} interpreters the baseline knows"
        )

        def reference(key: str) -> float:
            return max(record.ratio(key) for record in baseline.records)

    verdicts = [
        Verdict(key, "x floor", reference(key), counts.ratio(key), margin) for key in BUDGET
    ]
    if same:
        verdicts += [
            Verdict(key, "instructions", same[0].rows[key], counts.per_op(key), margin)
            for key in with_floors(BUDGET)
        ]
    else:
        nearest = (interpreter or baseline.records)[0]
        notes.append("absolute counts not compared: " + "; ".join(mismatch(nearest.versions, here)))
    return Checked(verdicts, notes, bool(interpreter))


def measure(baseline: Baseline | None = None, progress: Progress = lambda _m: None) -> Counts:
    """Count the budget's rows with the baseline's loops (or :data:`LOOPS`)."""
    loops = baseline.loops if baseline is not None else LOOPS
    return count(BUDGET, loops, progress=progress)


def take(
    reason: str, pythons: Sequence[str] = (), progress: Progress = lambda _m: None
) -> Baseline:
    """Count the budget's rows here and on each of ``pythons``, and make them the baseline
    (not yet written)."""
    interpreters: list[Path | None] = [None, *(synced(ROOT, progress, p) for p in pythons)]
    records = []
    for python in interpreters:
        counts = count(BUDGET, LOOPS, python=python, progress=progress)
        records.append(
            Record(
                versions={name: counts.versions.get(name, "?") for name in VERSIONED},
                rows={key: counts.per_op(key) for key in with_floors(BUDGET)},
            )
        )
    return Baseline(
        records=records,
        loops=LOOPS,
        margin=MARGIN,
        reason=reason,
        taken=f"{datetime.date.today().isoformat()}, {commit()}",
    )
