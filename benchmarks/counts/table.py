"""Markdown for counts: one table per scenario, and the difference of two runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from benchmarks.counts.rows import SCENARIOS, scenario_of
from benchmarks.counts.run import Counts, Loops

VERSIONED = (
    "python",
    "python-build",
    "mcp",
    "mcp-types",
    "pydantic",
    "pydantic-core",
    "anyio",
    "libc",
    "valgrind",
)
"""The versions a table's header names (and that a baseline must match)."""


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
