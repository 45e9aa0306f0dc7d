"""``python -m benchmarks.counts``: instructions per operation, counted under callgrind.

Commands::

    python -m benchmarks.counts [ROW ...]                  the table (default: every row)
    python -m benchmarks.counts compare A B [ROW ...]     two commits, row by row
    python -m benchmarks.counts budget                     the budget's rows against the baseline
    python -m benchmarks.counts budget --update --reason "why" [--python PY]   a new baseline

A row is ``scenario/tag`` (``modern/ours-constructor``, ``scoped/ours-sync``);
``--rows`` lists them. See benchmarks/README.md, "Instruction counts".
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Mapping, Sequence

from benchmarks.counts import budget
from benchmarks.counts.rows import ALL, BUDGET, SCENARIOS, scenario_of
from benchmarks.counts.run import VERSIONED, CountError, Counts, Loops, compare, count
from benchmarks.harness.suite import progress

COMMANDS = ("table", "compare", "budget")


def versions_line(versions: Mapping[str, str]) -> str:
    return ", ".join(f"{name} {versions.get(name, '?')}" for name in VERSIONED)


def loops_line(loops: Loops) -> str:
    return (
        f"loops: {loops.calls:,} calls through the client, {loops.handler_calls:,} handler "
        f"calls, {loops.resolves:,} resolutions (after an uncounted warm-up)"
    )


def _by_scenario(keys: Iterable[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for key in keys:
        grouped.setdefault(scenario_of(key), []).append(key)
    return {scenario: grouped[scenario] for scenario in SCENARIOS if scenario in grouped}


def _name(counts: Counts, key: str) -> str:
    name = counts.names.get(key, key)
    return f"**{name}**" if "this adapter" in name or "this container" in name else name


def markdown(counts: Counts, title: str) -> str:
    """The counts of one run, a table per scenario, each row divided by its floor: with the
    garbage collector off, and on (the collections the row's own garbage causes)."""
    lines = [f"# {title}", "", versions_line(counts.versions) + ".", ""]
    for scenario, keys in _by_scenario(counts.rows).items():
        lines += [f"**{SCENARIOS[scenario]}**", ""]
        lines += [
            "| row | key | instructions (GC off) | x floor | instructions (GC on) | x floor "
            "| loops |",
            "|---|---|--:|--:|--:|--:|--:|",
        ]
        for key in keys:
            row = counts.rows[key]
            lines.append(
                f"| {_name(counts, key)} | `{key}` | {row.per_op(False):,.0f} | "
                f"{counts.ratio(key, False):.3f}x | {row.per_op(True):,.0f} | "
                f"{counts.ratio(key, True):.3f}x | {row.loops:,} |"
            )
        lines.append("")
    return "\n".join(lines)


def difference(before: Counts, after: Counts, names: tuple[str, str]) -> str:
    """Row by row: instructions per operation in each run (collector off), the change, both
    ratios, and the change with the collector on."""
    first, second = names
    lines: list[str] = []
    if before.versions != after.versions:
        lines += [
            f"Versions differ: {first}: {versions_line(before.versions)}; "
            f"{second}: {versions_line(after.versions)}.",
            "",
        ]
    else:
        lines += [versions_line(before.versions) + ".", ""]
    shared = [key for key in before.rows if key in after.rows]
    for scenario, keys in _by_scenario(shared).items():
        lines += [f"**{SCENARIOS[scenario]}**", ""]
        lines += [
            f"| row | {first} | {second} | change | change % | {first} x floor | "
            f"{second} x floor | change % (GC on) |",
            "|---|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for key in keys:
            old, new = before.per_op(key, False), after.per_op(key, False)
            change = new - old
            with_gc = after.per_op(key) / before.per_op(key) - 1
            lines.append(
                f"| {_name(after, key)} | {old:,.0f} | {new:,.0f} | {change:+,.0f} | "
                f"{change / old:+.3%} | {before.ratio(key, False):.3f}x | "
                f"{after.ratio(key, False):.3f}x | {with_gc:+.3%} |"
            )
        lines.append("")
    return "\n".join(lines)


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
            first, second = compare(
                (args.first, args.second), keys, _loops(args), keep=args.keep, progress=_say
            )
            print(f"# Instruction counts: {args.first} -> {args.second}\n")
            print(loops_line(_loops(args)) + ".\n")
            print(difference(first, second, (args.first, args.second)))
        else:
            counts = count(keys, _loops(args), progress=_say)
            print(markdown(counts, "Instruction counts (callgrind)"))
            print(loops_line(_loops(args)) + ".")
    except (CountError, ValueError) as error:
        raise SystemExit(str(error)) from error
    _say(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
