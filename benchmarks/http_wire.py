"""The HTTP contenders side by side over the wire, on their own, in bounded time.

``python -m benchmarks.http_wire [--passes N] [--seconds S] [--no-fastmcp]`` serves
the per-call workload (``add(a, b)`` with a singleton ``Clock`` and a per-request
``Ledger``) over stateless streamable HTTP with JSON responses, one uvicorn worker
each, and loads every server in turn with the same generator (32 keep-alive
connections, one prebuilt 2026-07-28 ``tools/call`` each, every answer checked):

- this adapter, ``mcp-adapter serve --http --json-response`` (its documented way);
- the SDK's ``MCPServer`` with ``Resolve``, ``uvicorn.run`` of its app (the anchor);
- FastMCP with ``Depends``, from its own venv (``.bench-venvs/http-fastmcp``);
- the SDK's low-level ``Server`` with hand-written handlers, ``uvicorn.run`` of its
  own ``streamable_http_app`` (the floor);
- two diagnostics that split the adapter's lead over that floor: the floor with the
  SDK's ``get_tool_input_schema`` hook set (``floor-hook``: the app's part), and the
  floor served with the adapter's uvicorn settings (``floor-tuned``:
  ``uvicorn_config``'s part).

It is the HTTP suite's own measurement (:mod:`benchmarks.suites.served`: the same
contenders, servers, generator, checks, rows and issue 20's targets) narrowed to
what one question needs, so it finishes in minutes on a loaded machine where the
full suite (twelve servers, one and two workers) may not. Every server starts once
and is checked; then each pass measures every server once, in a freshly shuffled
order; ratios are medians of the per-pass ratios. The run's length is printed
before it starts.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from benchmarks.harness.suite import Machine, progress, table_markdown, targets_markdown
from benchmarks.harness.timing import with_ratios
from benchmarks.suites.http import HTTP_COLUMNS, against_floor
from benchmarks.suites.served import FASTMCP, Timing, contender, passes, results

TAGS = ("mcpserver", "floor", "ours-cli", "floor-hook", "floor-tuned")


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

    say = progress("http_wire")
    unusable = FASTMCP.unusable(not args.no_fastmcp, say)
    if unusable and not args.no_fastmcp:
        say(f"FastMCP {unusable}")
    tags = TAGS + (() if unusable else ("fastmcp",))
    chosen = [contender(tag) for tag in tags]
    machine = Machine.here()
    say(
        f"{len(chosen)} servers, {timing.describe()}: about "
        f"{timing.bound(len(chosen)):.0f} s of load, plus start-ups"
    )
    started = time.perf_counter()
    found, left_out = results(passes(chosen, timing, say))
    table = with_ratios(found)
    print(f"# HTTP over the wire, one worker each ({machine.line()})\n")
    print(f"{timing.describe()}.\n")
    for rows in table.values():
        print(
            table_markdown(
                rows, unit="us", ratio_title="x MCPServer (time/req)", columns=HTTP_COLUMNS
            )
        )
    print("\n".join(f"- {note}" for note in left_out))
    print("\n" + targets_markdown(against_floor(table)))
    say(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
