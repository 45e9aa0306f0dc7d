"""A benchmark suite (cases, a check, targets, notes), and its report: Markdown and a PNG plot."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from benchmarks.harness.curves import Curve
from benchmarks.harness.timing import Case, Result, Row, Settings
from benchmarks.harness.venv import commit

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
    curves: Sequence[Curve] = ()
    """How costs grow with the work (scale suites), drawn as ``benchmarks-<suite>.png``."""


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
    timed_loops: bool = True
    """Whether rows are timed by the harness's loops (the report then names its settings);
    ``False`` for a suite whose every figure comes by its own method."""


def figure(key: str, fmt: str, unit: str = "") -> Callable[[Row], str]:
    """A column's cell: the row's ``extra[key]`` formatted with ``fmt`` (empty without it)."""

    def value(row: Row) -> str:
        found = row.result.extra.get(key)
        return "" if found is None else format(found, fmt) + unit

    return value


CALLS_TIMED = Column(
    "calls timed", lambda row: f"{row.result.number * len(row.result.samples_ns):,}"
)
"""How many operations a row's figure rests on (loop length x rounds)."""


def find(table: Table, scenario: str, tag: str) -> Row | None:
    """The row of ``scenario`` whose case carries ``tag``; ``None`` when not measured."""
    return next((row for row in table.get(scenario, ()) if row.case.tag == tag), None)


def row(table: Table, scenario: str, tag: str) -> Row:
    """Like :func:`find`, for a row every run has."""
    found = find(table, scenario, tag)
    if found is None:
        raise KeyError(f"no row tagged {tag!r} in scenario {scenario!r}")
    return found


# -- the report ------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteRun:
    suite: Suite
    table: Table
    targets: Sequence[Target]
    settings: Settings | None = None
    """The settings this suite ran with (suites may tune the run's)."""
    measured: Measured = field(default_factory=Measured)


@dataclass(frozen=True)
class Machine:
    date: str
    python: str
    system: str
    cpu: str
    cores: int
    code: str
    load: str = ""
    """The 1/5/15-minute load averages when the run started (a shared machine's noise)."""

    @classmethod
    def here(cls) -> Machine:
        return cls(
            date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            python=f"{platform.python_implementation()} {platform.python_version()}",
            system=f"{platform.system()} {platform.release()} {platform.machine()}",
            cpu=_cpu_model(),
            cores=os.cpu_count() or 0,
            code=f"commit {commit()}",
            load=_load(),
        )

    def line(self) -> str:
        load = f", load average {self.load}" if self.load else ""
        return f"{self.date}; {self.python}; {self.system}; {self.cpu}, {self.cores} cores{load}"


def _load() -> str:
    try:
        return " / ".join(f"{value:.1f}" for value in os.getloadavg())
    except OSError:
        return ""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def versions(packages: Sequence[str]) -> str:
    found = []
    for name in packages:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return ", ".join(found)


_SCALE = {"ns": 1.0, "us": 1e3, "ms": 1e6}
_UNIT_LABEL = {"ns": "ns", "us": "µs", "ms": "ms"}


def in_unit(value_ns: float, unit: str) -> str:
    """``value_ns`` shown in ``unit`` with about three significant digits."""
    value = value_ns / _SCALE[unit]
    if unit == "ns" or value >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if value >= 10 else f"{value:,.2f}"


def table_markdown(
    rows: Sequence[Row],
    *,
    unit: str = "ns",
    ratio_title: str = "x floor",
    columns: Sequence[Column] = (),
) -> str:
    label = _UNIT_LABEL[unit]
    head = f"| contender | {label}/op (median) | IQR ({label}) | {ratio_title} |"
    rule = "|---|--:|--:|--:|"
    for column in columns:
        head += f" {column.title} |"
        rule += "--:|" if column.right else "---|"
    lines = [head + " loops x rounds | notes |", rule + "--:|---|"]
    for r in rows:
        res = r.result
        name = f"**{r.case.name}**" if r.case.tag.startswith("ours") else r.case.name
        extra = "".join(f" {column.value(r)} |" for column in columns)
        lines.append(
            f"| {name} | {in_unit(res.median_ns, unit)} | {in_unit(res.iqr_ns, unit)} "
            f"| {r.ratio:.2f}x |{extra} {res.number:,} x {len(res.samples_ns)} | {r.case.note} |"
        )
    return "\n".join(lines)


def targets_markdown(targets: Sequence[Target]) -> str:
    lines = ["| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {t.goal} | {t.measured} | **{t.verdict}** |" for t in targets]
    return "\n".join(lines)


def suite_markdown(run: SuiteRun, *, heading: str = "##", image: str | None = None) -> str:
    """The suite's section; ``image`` is its curves' PNG, linked under the heading."""
    suite = run.suite
    parts = [f"{heading} {suite.title}", ""]
    if image:
        parts += [f"![{suite.title}]({image})", ""]
    found = [versions(suite.packages)] if suite.packages else []
    found += list(run.measured.versions)
    if found:
        parts += [f"Versions: {'; '.join(found)}.", ""]
    if run.settings is not None:
        parts += [f"Settings: {run.settings.describe()}.", ""]
    for key, title in suite.scenarios.items():
        if key not in run.table:
            continue
        table = table_markdown(
            run.table[key],
            unit=suite.units.get(key, "ns"),
            ratio_title=suite.ratio_titles.get(key, "x floor"),
            columns=suite.columns.get(key, ()),
        )
        parts += [f"{heading}# {title}", "", table, ""]
    if run.targets:
        parts += [f"{heading}# Targets", "", targets_markdown(run.targets), ""]
    notes = [*suite.notes, *run.measured.notes]
    if notes:
        parts += [f"{heading}# Notes", ""]
        parts += [f"- {note}" for note in notes]
        parts.append("")
    return "\n".join(parts)


def document(
    runs: Sequence[SuiteRun],
    machine: Machine,
    settings: Settings,
    command: str,
    *,
    image: str | None,
    images: Mapping[str, str] | None = None,
) -> str:
    """The whole report; ``images`` maps a suite's name to its curves' PNG."""
    images = images or {}
    head = [
        "# Benchmark results",
        "",
        "Generated by `python -m benchmarks`; do not edit by hand. "
        "Method and reading guide: [performance.md](performance.md).",
        "",
        f"- Run: {machine.line()}",
        f"- Code: {machine.code}",
        f"- Command: `{command}`",
        f"- Each figure is the median over {settings.repeats} rounds (one timed loop "
        f"of about {settings.target_seconds * 1000:.0f} ms per case and round, cases "
        "interleaved in shuffled order, GC off inside a loop) unless a suite says "
        "otherwise; ratios are to the anchor (the floor) measured in the same run. "
        + (
            "Loops are timed in the process's CPU time (`--clock cpu`), which other "
            "processes on a shared machine barely move."
            if settings.clock == "cpu"
            else "Loops are timed in wall time (`--clock wall`)."
        ),
        "",
    ]
    if image:
        head += [f"![ratios to the floor]({image})", ""]
    sections = [suite_markdown(run, image=images.get(run.suite.name)) for run in runs]
    return "\n".join(head + sections).rstrip() + "\n"


def _color(r: Row) -> str:
    if r.case.tag.startswith("ours"):
        return "#1f77b4"
    return "#7f7f7f" if r.case.anchor else "#c7c7c7"


def plot(runs: Sequence[SuiteRun], machine: Machine, path: Path) -> bool:
    """Write a bar chart of ratios to the floor; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    panels = [
        (run, key, title)
        for run in runs
        for key, title in run.suite.scenarios.items()
        if key in run.table
    ]
    height = sum(0.9 + 0.32 * len(run.table[key]) for run, key, _ in panels)
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(9, height),
        squeeze=False,
        gridspec_kw={"height_ratios": [len(run.table[key]) + 2 for run, key, _ in panels]},
    )
    for ax, (run, key, title) in zip(axes[:, 0], panels, strict=True):
        rows = list(run.table[key])
        labels = [r.case.name for r in rows]
        ratios = [r.ratio for r in rows]
        positions = range(len(rows))
        ax.barh(positions, ratios, color=[_color(r) for r in rows])
        ax.set_yticks(list(positions), labels, fontsize=8)
        ax.invert_yaxis()
        ax.axvline(1.0, color="black", linewidth=0.8)
        limit = run.suite.limits.get(key)
        if limit is not None:
            ax.axvline(limit, color="#d62728", linestyle="--", linewidth=0.8)
            ax.text(limit, -0.7, f" target {limit:g}x", color="#d62728", fontsize=7)
        for y, r in zip(positions, rows, strict=True):
            unit = run.suite.units.get(key, "ns")
            ax.text(
                r.ratio,
                y,
                f" {r.ratio:.2f}x  ({in_unit(r.result.median_ns, unit)} {_UNIT_LABEL[unit]})",
                va="center",
                fontsize=7,
            )
        ax.set_xlim(0, max(ratios) * 1.35)
        ax.set_title(f"{run.suite.title}: {title}", fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=7)
    axes[-1, 0].set_xlabel(
        "median time / the scenario's anchor (same run); lower is better", fontsize=8
    )
    fig.suptitle(f"python -m benchmarks, {machine.line()}", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def command_line() -> str:
    args = " ".join(sys.argv[1:])
    return f"python -m benchmarks {args}".strip()


def progress(name: str) -> Callable[[str], None]:
    """A function that says ``[name] message`` on standard error."""

    def say(message: str) -> None:
        print(f"[{name}] {message}", file=sys.stderr, flush=True)

    return say
