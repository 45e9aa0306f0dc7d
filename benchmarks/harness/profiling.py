"""Reading a ``cProfile`` run: own time per operation by package, and the top functions.

Shared by ``python -m benchmarks.profile`` and ``python -m benchmarks.http_profile``.
Profiling inflates Python-level calls, so compare groups and rows, not totals, with
the timed figures.
"""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import time
from collections.abc import Iterator
from typing import Any

GROUPS = (
    ("this adapter", "/src/mcp_adapter/"),
    ("container", "/src/container/"),
    ("schemas", "/src/schemas/"),
    ("mcp SDK", "/site-packages/mcp/"),
    ("mcp_types", "/site-packages/mcp_types/"),
    ("pydantic", "/site-packages/pydantic"),
    ("anyio", "/site-packages/anyio/"),
    ("asyncio", "/asyncio/"),
    ("jsonschema", "/site-packages/jsonschema"),
    ("benchmark workload", "/benchmarks/"),
)


def _group(filename: str) -> str:
    for name, marker in GROUPS:
        if marker in filename:
            return name
    if filename == "~":
        return "builtins (C)"
    return "other"


def by_group(stats: pstats.Stats, per: int) -> list[tuple[str, float]]:
    """Own (``tottime``) microseconds per operation, by package group."""
    totals: dict[str, float] = {}
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, _, _), (_, _, tottime, _, _) in table.items():
        group = _group(filename)
        totals[group] = totals.get(group, 0.0) + tottime
    return sorted(((g, t * 1e6 / per) for g, t in totals.items()), key=lambda x: -x[1])


def top(stats: pstats.Stats, per: int, key: int, count: int, only: str = "") -> list[str]:
    """The ``count`` functions with the largest ``key`` (2: own, 3: cumulative time)."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = sorted(table.items(), key=lambda item: -item[1][key])
    lines = []
    for (filename, line, function), values in rows:
        if only and only not in filename:
            continue
        ncalls, _, tottime, cumtime, _ = values
        short = filename.split("site-packages/")[-1].split("/work/main/")[-1]
        lines.append(
            f"{tottime * 1e6 / per:8.1f} {cumtime * 1e6 / per:8.1f} {ncalls / per:6.1f}  "
            f"{short}:{line}({function})"
        )
        if len(lines) == count:
            break
    return lines


def report(title: str, stats: pstats.Stats, per: int, count: int) -> None:
    print(f"\n## {title}: µs per operation (cProfile, CPU time; {per:,} operations)\n")
    total = sum(t for _, t in by_group(stats, per))
    for group, micros in by_group(stats, per):
        print(f"  {group:<20} {micros:8.1f}  ({micros / total:5.1%})")
    print(f"  {'total':<20} {total:8.1f}")
    print("\n  own µs   cum µs  calls  function (by own time)")
    for line in top(stats, per, 2, count):
        print("  " + line)
    print("\n  own µs   cum µs  calls  function in src/ (by cumulative time)")
    for line in top(stats, per, 3, count, only="/src/"):
        print("  " + line)


@contextlib.contextmanager
def profiled() -> Iterator[cProfile.Profile]:
    """A profile (CPU time) of the ``with`` body; ``pstats.Stats(profile)`` reads it."""
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        yield profiler
    finally:
        profiler.disable()
