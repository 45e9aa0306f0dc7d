"""The run's one table (Markdown): faults, what was served, violations by invariant,
recovery per fault, and each process's RSS and descriptors; then ``violations: N``."""

from __future__ import annotations

from collections import Counter

from benchmarks.chaos.faults import Recovery
from benchmarks.chaos.invariants import INVARIANTS, Tally, Watcher


def _seconds(value: float | None, waited: float) -> str:
    return f"> {waited:.0f}" if value is None else f"{value:.1f}"


def render(
    tally: Tally,
    recoveries: list[Recovery],
    watcher: Watcher,
    *,
    seconds: float,
    bodies: int,
    reopened: int,
) -> str:
    rows = ["| | |", "|---|---|"]
    faults = Counter(r.fault for r in recoveries)
    rows.append(f"| run | {seconds:.0f} s |")
    rows.append("| faults injected | " + ", ".join(f"{n} x {k}" for k, n in faults.items()) + " |")
    for kind in sorted(set(tally.served) | set(tally.refused)):
        rows.append(f"| {kind}: success / error | {tally.served[kind]} / {tally.refused[kind]} |")
    terminal = ", ".join(f"{n} {k}" for k, n in sorted(tally.tasks_terminal.items()))
    rows.append(f"| tasks accepted / ended | {tally.tasks_accepted} / {terminal or 'none'} |")
    rows.append(f"| side effects recorded in the ledger | {bodies} |")
    rows.append(
        f"| notifications heard (own) / streams reopened | {tally.notifications} / {reopened} |"
    )
    for invariant, meaning in INVARIANTS.items():
        rows.append(f"| violations: {invariant} ({meaning}) | {tally.violations[invariant]} |")
    for fault in sorted({fault for fault, _, _ in tally.failovers}):
        lost = tally.lost[f"task lost ({fault})"]
        rows.append(f"| accepted tasks lost in a {fault}, as documented | {lost} |")
    for kind, lost in sorted(tally.lost.items()):
        if not kind.startswith("task lost ("):
            rows.append(f"| lost in a failover, as documented: {kind} | {lost} |")
    lines = [
        "\n".join(rows),
        "",
        "| fault | at (s) | p99 before (ms) | /readyz ready (s) | p99 within 2x (s) |",
    ]
    lines.append("|---|---|---|---|---|")
    first = recoveries[0].at if recoveries else 0.0
    for r in recoveries:
        before = "-" if r.before_p99 is None else f"{r.before_p99 * 1000:.0f}"
        lines.append(
            f"| {r.fault} | {r.at - first:.0f} | {before} | {_seconds(r.ready, r.waited)} "
            f"| {_seconds(r.p99, r.waited) if r.before_p99 else '-'} |"
        )
    lines += ["", "| process (pid) | RSS after warm-up -> end (MiB) | fds after warm-up -> end |"]
    lines.append("|---|---|---|")
    for life in watcher.lives:
        if life.first is None:
            continue
        end = life.last or life.first
        lines.append(
            f"| {life.name} ({life.pid}) | {life.first.rss >> 20} -> {end.rss >> 20} "
            f"| {life.first.fds} -> {end.fds} |"
        )
    for invariant, kept in tally.examples.items():
        lines += ["", f"{invariant}:"] + [f"  - {example}" for example in kept]
    if tally.lost_examples:
        lines += ["", "lost in a failover (docs/deployment.md):"]
        lines += [f"  - {example}" for example in tally.lost_examples]
    lines += ["", f"violations: {tally.total()}"]
    return "\n".join(lines)
