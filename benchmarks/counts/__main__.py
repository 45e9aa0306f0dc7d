"""``python -m benchmarks.counts``: instructions per operation, counted under callgrind.

Commands::

    python -m benchmarks.counts [ROW ...]                  the table (default: every row)
    python -m benchmarks.counts compare A B [ROW ...]     two commits, row by row
    python -m benchmarks.counts budget                     the budget's rows against the baseline
    python -m benchmarks.counts budget --update --reason "why" [--python PY]   a new baseline

A row is ``scenario/tag`` (``modern/ours-constructor``, ``scoped/ours-sync``);
``--rows`` lists them. See docs/performance.md, "Instruction counts".
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from benchmarks.counts import budget, table
from benchmarks.counts.rows import ALL, BUDGET
from benchmarks.counts.run import CountError, Loops, count
from benchmarks.harness.suite import progress

COMMANDS = ("table", "compare", "budget")


_say = progress("counts")


def _loop_options(parser: argparse.ArgumentParser, defaults: Loops) -> None:
    parser.add_argument(
        "--calls", type=int, default=defaults.calls, help="calls through mcp.Client per row"
    )
    parser.add_argument(
        "--handler-calls",
        type=int,
        default=defaults.handler_calls,
        help="calls of the handler alone per row",
    )
    parser.add_argument(
        "--resolves", type=int, default=defaults.resolves, help="resolutions per container row"
    )


def _loops(args: argparse.Namespace) -> Loops:
    return Loops(calls=args.calls, handler_calls=args.handler_calls, resolves=args.resolves)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m benchmarks.counts",
        description="Instruction counts of the benchmark rows under callgrind (valgrind).",
    )
    top.add_argument("--rows", action="store_true", help="list the rows and exit")
    commands = top.add_subparsers(dest="command")
    show = commands.add_parser("table", help="count rows and print their table (the default)")
    show.add_argument("keys", nargs="*", metavar="ROW", help="rows (default: all)")
    _loop_options(show, Loops())
    versus = commands.add_parser("compare", help="count two commits and print the difference")
    versus.add_argument("first", metavar="A", help="the commit before (e.g. main)")
    versus.add_argument("second", metavar="B", help="the commit after")
    versus.add_argument("keys", nargs="*", metavar="ROW", help="rows (default: all)")
    versus.add_argument("--keep", action="store_true", help="keep the worktrees for next time")
    _loop_options(versus, Loops())
    held = commands.add_parser("budget", help="the budget's rows against the baseline")
    held.add_argument("--update", action="store_true", help="take a new baseline")
    held.add_argument("--reason", help="why the baseline changes (required with --update)")
    held.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="PYTHON",
        help="with --update: count on this interpreter too (repeatable; e.g. /usr/bin/python3)",
    )
    return top


def _budget(args: argparse.Namespace) -> int:
    if args.update:
        if not args.reason:
            raise SystemExit("--update needs --reason: say why the baseline changes")
        taken = budget.take(args.reason, args.python, progress=_say)
        budget.BASELINE.write_text(taken.to_json())
        print(f"wrote {budget.BASELINE}; commit it with the reason: {args.reason}")
        return 0
    baseline = budget.Baseline.load()
    checked = budget.check(baseline, budget.measure(baseline, progress=_say))
    for line in [*checked.notes, *(verdict.line() for verdict in checked.verdicts)]:
        print(line)
    if checked.over:
        print(f"over the budget (more than {baseline.margin:.0%} over the baseline):")
        for verdict in checked.over:
            print("  " + verdict.line())
        if not checked.recorded:
            print(
                "This interpreter has no record in the baseline; where its build explains "
                "the ratios, record it: budget --update --reason ... --python " + sys.executable
            )
        return 1
    units = sorted({verdict.unit for verdict in checked.verdicts})
    print(
        f"within the budget ({' and '.join(units)} at most {baseline.margin:.0%} over the baseline)"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if not given or (given[0] not in COMMANDS and given[0] not in ("--rows", "-h", "--help")):
        given.insert(0, "table")
    args = parser().parse_args(given)
    if args.rows:
        print("\n".join(f"{key}{'  (budget)' if key in BUDGET else ''}" for key in ALL))
        return 0
    started = time.perf_counter()
    try:
        if args.command == "budget":
            return _budget(args)
        keys = args.keys or list(ALL)
        if args.command == "compare":
            from benchmarks.counts.compare import compare

            first, second = compare(
                (args.first, args.second), keys, _loops(args), keep=args.keep, progress=_say
            )
            print(f"# Instruction counts: {args.first} -> {args.second}\n")
            print(table.loops_line(_loops(args)) + ".\n")
            print(table.difference(first, second, (args.first, args.second)))
        else:
            counts = count(keys, _loops(args), progress=_say)
            print(table.markdown(counts, "Instruction counts (callgrind)"))
            print(table.loops_line(_loops(args)) + ".")
    except (CountError, ValueError) as error:
        raise SystemExit(str(error)) from error
    _say(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
