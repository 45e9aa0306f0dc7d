"""The HTTP contenders side by side over the wire, on their own, in bounded time.

``python -m benchmarks.http_wire [--passes N] [--seconds S] [--no-fastmcp]`` serves
the per-call workload (``add(a, b)`` with a singleton ``Clock`` and a per-request
``Ledger``) over stateless streamable HTTP with JSON responses, one uvicorn worker
each, and loads every server in turn with the same generator
(:mod:`benchmarks.http_load`: 32 keep-alive connections, one prebuilt 2026-07-28
``tools/call`` each, every answer checked):

- this adapter, ``mcp-adapter serve --http --json-response`` (its documented way);
- the SDK's ``MCPServer`` with ``Resolve``, ``uvicorn.run`` of its app (the anchor);
- FastMCP with ``Depends``, from its own venv (``.bench-venvs/http-fastmcp``);
- the SDK's low-level ``Server`` with hand-written handlers, ``uvicorn.run`` of its
  own ``streamable_http_app`` (the floor);
- two diagnostics that split the adapter's lead over that floor: the floor with the
  SDK's ``get_tool_input_schema`` hook set (``floor-hook``: the app's part), and the
  floor served with the adapter's uvicorn settings (``floor-tuned``:
  ``uvicorn_config``'s part).

Every server starts once and is checked over the wire; then each pass measures
every server once, in a freshly shuffled order (interleaved rounds), so a slow
stretch of a shared machine lands on all of them. Ratios are medians over passes
of the per-pass ratios. The run's length is fixed by its timing: printed before
it starts, it never waits longer than a server's start-up timeout.

This is the HTTP suite's own measurement (:mod:`benchmarks.http_suite`: the same
contenders, servers, generator and checks) narrowed to what one question needs,
so it finishes in minutes on a loaded machine where the full suite (twelve
servers, one and two workers) may not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks import http_venv
from benchmarks.http_suite import (
    FLOOR,
    Contender,
    Samples,
    Timing,
    _cli,
    _launcher,
    _passes,
    paired,
)
from benchmarks.report import Machine

OVER_MCPSERVER = 1.3
"""At least 1.3x MCPServer's requests per second ..."""


def _tuned(kind: str) -> Contender:
    def argv(port: int) -> list[str]:
        return [*_launcher(kind, 1)(port), "--adapter-settings"]

    return Contender(
        f"{kind}-tuned",
        f"{FLOOR}, served with the adapter's uvicorn settings",
        1,
        argv,
        note="`uvicorn_config(app, limits=HttpLimits())`: diagnostic",
    )


def contenders(fastmcp: bool) -> list[Contender]:
    chosen = [
        Contender(
            "mcpserver",
            "MCPServer + Resolve (anchor)",
            1,
            _launcher("mcpserver", 1),
            anchor=True,
            note="`uvicorn.run(factory)`",
        ),
        Contender("floor", FLOOR, 1, _launcher("floor", 1), note="`uvicorn.run(factory)`"),
        Contender(
            "ours-cli",
            "this adapter, `mcp-adapter serve`",
            1,
            _cli(1),
            note="its own uvicorn settings (`uvicorn_config`)",
        ),
        Contender(
            "floor-hook",
            f"{FLOOR} + `get_tool_input_schema`",
            1,
            _launcher("floor-hook", 1),
            note="`uvicorn.run(factory)`: diagnostic",
        ),
        _tuned("floor"),
    ]
    if fastmcp:
        chosen.append(
            Contender(
                "fastmcp",
                "FastMCP + Depends (own venv)",
                1,
                _launcher("fastmcp", 1, venv=True),
                venv=True,
                note="`uvicorn.run(factory)`",
            )
        )
    return chosen


@dataclass(frozen=True)
class Line:
    """One server's figures over the run."""

    tag: str
    name: str
    passes: int
    rps: float
    over_anchor: float
    over_floor: float
    p50_ms: float
    p99_ms: float
    cpu_us: float


def lines(samples: Sequence[Samples]) -> list[Line]:
    by_tag = {s.contender.tag: s for s in samples if s.passes and not s.failure}
    anchor, floor = by_tag.get("mcpserver"), by_tag.get("floor")
    found = []
    for tag, sample in by_tag.items():
        rounds = list(sample.passes.values())
        found.append(
            Line(
                tag,
                sample.contender.name,
                len(rounds),
                statistics.median(r["rps"] for r in rounds),
                paired(sample, anchor),
                paired(sample, floor),
                statistics.median(r["p50_ms"] for r in rounds),
                statistics.median(r["p99_ms"] for r in rounds),
                statistics.median(r["server_cpu_s"] / r["requests"] * 1e6 for r in rounds),
            )
        )
    return found


def markdown(found: Sequence[Line]) -> str:
    rows = [
        "| server | passes | req/s (median) | x MCPServer req/s | x floor req/s "
        "| p50 ms | p99 ms | server CPU µs/req |",
        "| --- | --: | --: | --: | --: | --: | --: | --: |",
    ]
    for line in found:
        bold = f"**{line.name}**" if line.tag.startswith("ours") else line.name
        rows.append(
            f"| {bold} | {line.passes} | {line.rps:,.0f} | {line.over_anchor:.2f}x "
            f"| {line.over_floor:.2f}x | {line.p50_ms:.1f} | {line.p99_ms:.1f} "
            f"| {line.cpu_us:,.0f} |"
        )
    return "\n".join(rows)


def targets(found: Sequence[Line]) -> list[str]:
    by_tag = {line.tag: line for line in found}
    ours, floor = by_tag.get("ours-cli"), by_tag.get("floor")
    if ours is None:
        return ["this adapter was not measured"]
    verdicts = [
        (
            f"req/s >= {OVER_MCPSERVER}x MCPServer's",
            ours.over_anchor >= OVER_MCPSERVER,
            f"{ours.over_anchor:.2f}x",
        )
    ]
    if floor is not None:
        verdicts += [
            ("req/s >= the floor's", ours.over_floor >= 1.0, f"{ours.over_floor:.2f}x"),
            (
                "p99 <= the floor's",
                ours.p99_ms <= floor.p99_ms,
                f"{ours.p99_ms:.1f} vs {floor.p99_ms:.1f} ms",
            ),
        ]
    return [
        f"- this adapter (`mcp-adapter serve`) {what}: **{'met' if met else 'NOT met'}** ({value})"
        for what, met, value in verdicts
    ]


def bound_seconds(timing: Timing, servers: int) -> float:
    """How long the measurement takes, start-ups aside: every window of every pass."""
    first = timing.warmup + timing.duration
    later = timing.rewarm + timing.duration
    return servers * (first + later * (timing.passes - 1))


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.http_wire",
        description="HTTP tools/call over the wire: this adapter, MCPServer, FastMCP and the "
        "low-level floor, one uvicorn worker each, interleaved passes.",
    )
    parser.add_argument("--passes", type=int, default=5, help="measured windows per server")
    parser.add_argument("--seconds", type=float, default=3.0, help="one measured window")
    parser.add_argument("--warmup", type=float, default=2.0, help="load before the first window")
    parser.add_argument("--rewarm", type=float, default=1.0, help="load before later windows")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--no-fastmcp", action="store_true", help="leave FastMCP out (no venv needed)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    timing = Timing(args.warmup, args.rewarm, args.seconds, args.passes, args.connections)

    def say(message: str) -> None:
        print(f"[http_wire] {message}", file=sys.stderr, flush=True)

    fastmcp = False
    if not args.no_fastmcp:
        http_venv.VENV.ensure(say)
        fastmcp = http_venv.VENV.ready()
    chosen = contenders(fastmcp)
    machine = Machine.here()
    say(
        f"{len(chosen)} servers, {timing.describe()}: about "
        f"{bound_seconds(timing, len(chosen)):.0f} s of load, plus start-ups"
    )
    started = time.perf_counter()
    samples = _passes(chosen, timing, say)
    found = lines(samples)
    print(f"# HTTP over the wire, one worker each ({machine.line()})\n")
    print(f"{timing.describe()}.\n")
    print(markdown(found) + "\n")
    for sample in samples:
        if sample.failure:
            print(f"- {sample.contender.name} left out: {sample.failure}")
    print("\n".join(targets(found)))
    say(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
