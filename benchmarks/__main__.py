"""``python -m benchmarks [SUITE ...] [--quick]``: run suites, print and publish tables.

Each suite is a module of :mod:`benchmarks.suites` exposing ``SUITE`` (a
:class:`benchmarks.harness.suite.Suite`); add a new one to :data:`SUITES`. A full
run writes ``docs/benchmarks.md`` and, when matplotlib is installed (the ``bench``
group has it), ``docs/benchmarks.png``.
``--quick`` is a smoke run: few, short samples, nothing written unless ``--write``,
and no virtual environment is created (an existing one is used).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness.curves import draw, image_name
from benchmarks.harness.suite import (
    Machine,
    Measured,
    RunOptions,
    Suite,
    SuiteRun,
    command_line,
    document,
    plot,
    progress,
    suite_markdown,
)
from benchmarks.harness.timing import Settings, run, with_ratios
from benchmarks.harness.venv import ROOT

SUITES = (
    "container",
    "mcp_call",
    "scale",
    "http",
    "listeners",
    "tasks",
    "open_state",
    "replicas",
)
"""The suites (modules of :mod:`benchmarks.suites`), in the order they run."""

DOCS = ROOT / "docs"


def load(name: str) -> Suite:
    try:
        module = importlib.import_module(f"benchmarks.suites.{name}")
    except ImportError as error:
        raise SystemExit(
            f"suite {name!r} needs {error.name!r}: run with the bench group, "
            "`uv run --group bench python -m benchmarks`"
        ) from error
    suite: Suite = module.SUITE
    return suite


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run the benchmark suites side by side and report medians and ratios.",
    )
    parser.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help=f"suites to run (default: all): {', '.join(SUITES)}",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: few short samples, writes nothing"
    )
    parser.add_argument("--repeats", type=int, help="rounds per case (default 31, quick 5)")
    parser.add_argument(
        "--sample-ms", type=float, help="target length of one timed loop (default 20, quick 4)"
    )
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time loops by the process's CPU time (default; steady on a shared machine) "
        "or by wall time",
    )
    write = parser.add_mutually_exclusive_group()
    write.add_argument("--write", action="store_true", help="write docs even with --quick")
    write.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--out", type=Path, default=DOCS, help="where benchmarks.md/.png go (default: docs/)"
    )
    venvs = parser.add_mutually_exclusive_group()
    venvs.add_argument(
        "--venvs",
        action="store_true",
        help="create/refresh the contenders' own virtual environments (default unless --quick)",
    )
    venvs.add_argument(
        "--no-venvs",
        action="store_true",
        help="skip contenders that run in their own virtual environments",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.suites if name not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}; choose from {', '.join(SUITES)}")
    return args


def settings_of(args: argparse.Namespace, suite: Suite | None = None) -> Settings:
    """The run's settings, as ``suite`` tunes them; explicit flags still win."""
    base = Settings.quick() if args.quick else Settings.full()
    if suite is not None and suite.tune is not None:
        base = suite.tune(base, args.quick)
    return dataclasses.replace(
        base,
        repeats=args.repeats or base.repeats,
        target_seconds=args.sample_ms / 1000 if args.sample_ms else base.target_seconds,
        clock=args.clock,
    )


def venv_policy(args: argparse.Namespace) -> bool | None:
    if args.no_venvs:
        return False
    if args.venvs:
        return True
    return None if args.quick else True


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    settings = settings_of(args)
    names = args.suites or list(SUITES)
    machine = Machine.here()
    started = time.perf_counter()
    print(f"# python -m benchmarks ({machine.line()})\n", flush=True)

    runs: list[SuiteRun] = []
    for name in names:
        suite_started = time.perf_counter()
        suite = load(name)
        say = progress(name)
        options = RunOptions(
            quick=args.quick,
            settings=settings_of(args, suite),
            venvs=venv_policy(args),
            progress=say,
        )
        say("verifying contenders")
        suite.verify(options)
        # Rows measured by the suite's own method first: they may want a process that
        # has not yet built every case's objects (cold compiles, say).
        measured = suite.measure(options) if suite.measure is not None else Measured()
        cases = suite.cases(options)
        say(f"{len(cases)} cases; {options.settings.describe()}")
        results = run(cases, options.settings, progress=say) if cases else []
        table = with_ratios([*results, *measured.results])
        shown = options.settings if suite.timed_loops else None
        ran = SuiteRun(suite, table, suite.targets(table), shown, measured)
        runs.append(ran)
        print(suite_markdown(ran), flush=True)
        say(f"done in {time.perf_counter() - suite_started:.1f} s")

    if args.write or (not args.quick and not args.no_write):
        args.out.mkdir(parents=True, exist_ok=True)
        image = args.out / "benchmarks.png"
        drew = plot(runs, machine, image)
        images = {
            ran.suite.name: image_name(ran.suite.name)
            for ran in runs
            if draw(
                ran.measured.curves,
                f"python -m benchmarks {ran.suite.name}, {machine.line()}",
                args.out / image_name(ran.suite.name),
            )
        }
        markdown = args.out / "benchmarks.md"
        markdown.write_text(
            document(
                runs,
                machine,
                settings,
                command_line(),
                image=image.name if drew else None,
                images=images,
            )
        )
        print(f"wrote {markdown}" + (f" and {image}" if drew else " (no matplotlib: no plot)"))
    print(f"done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
