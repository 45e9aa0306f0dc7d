"""The process that callgrind runs: set the rows up, then count each one's loop.

Started by :mod:`benchmarks.counts.run` as
``valgrind --tool=callgrind --instr-atstart=no ... python -m benchmarks.counts.worker``;
not meant to be started by hand. It imports, sets up and warms every row up
with callgrind's instrumentation off (about 7 times slower than native instead
of 50 to 100 times), then turns it on and, for each region asked for
(``key:loops`` with the collector off, ``key:loops:gc`` with it on; in order):
collects the garbage and freezes what exists (so every count starts from an
empty young generation, and a collection lands at the same point of every run),
turns the collector off or on, zeroes the counters, runs the row's statement
``loops`` times in the same kind of generated loop the timing harness uses,
and dumps the counters to a file whose trigger names the region. Everything the
process does between the zero and the dump is counted, on every thread: the
client's and the server's tasks, the event loop's own work. The parent reads the
dumps back; this process only writes the versions it ran with, as JSON, to ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
from collections.abc import Callable, Sequence

# First, before anything that loads a Rust extension (pydantic-core, rpds): the
# container workload's classes are then allocated at the same addresses in every run.
# Their hashes are their addresses, so where they land in the scope's dictionaries
# (and how many probes a lookup takes) would otherwise change from run to run; see
# benchmarks/README.md, "Instruction counts".
import benchmarks.workloads.container  # noqa: F401
from benchmarks.counts.rows import Row, per_call, rows
from benchmarks.counts.run import Region, label, versions
from benchmarks.counts.valgrind import ClientRequests
from benchmarks.harness.timing import compile_loop, finish, prepare


def _settled(loop: asyncio.AbstractEventLoop) -> None:
    """Let every task that is ready run to its next wait (the last call's follow-ups)."""

    async def turns() -> None:
        for _ in range(10):
            await asyncio.sleep(0)

    loop.run_until_complete(turns())


def _nothing(_started: object = None) -> None:
    return None


def count(
    regions: Sequence[Region], warmup: Callable[[str], int], requests: ClientRequests
) -> dict[str, str]:
    """Set up every row of ``regions``, warm it up, then count each region in order.

    Returns each row's label (its case's name), for the table.
    """
    keys = list(dict.fromkeys(key for key, _, _ in regions))
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    chosen: list[Row] = rows(keys)
    names = [prepare(row.case, loop) for row in chosen]
    loops = {
        row.key: compile_loop(row.case, made, loop, "count")
        for row, made in zip(chosen, names, strict=True)
    }
    try:
        for key in keys:
            loops[key](warmup(key), _nothing, _nothing)
        _settled(loop)
        gc.collect()
        gc.freeze()
        gc.disable()
        requests.start_instrumentation()
        zero = requests.zero()
        for key, n, collector in regions:
            dump = requests.dump(label(key, n, collector))
            gc.collect()
            gc.freeze()
            if collector:
                gc.enable()
            loops[key](n, zero, dump)
            gc.disable()
            _settled(loop)
    finally:
        gc.enable()
        gc.unfreeze()
        finish([row.case for row in chosen], names, loop)
        loop.close()
    return {row.key: row.case.name for row in chosen}


def _regions(text: str) -> list[Region]:
    found = []
    for part in text.split(","):
        collector = part.endswith(":gc")
        key, _, n = part.removesuffix(":gc").rpartition(":")
        found.append((key, int(n), collector))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.counts.worker")
    parser.add_argument(
        "--regions", required=True, help="key:loops[:gc],key:loops[:gc],... in order"
    )
    parser.add_argument("--warmup-calls", type=int, default=100)
    parser.add_argument("--warmup-resolves", type=int, default=1000)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--native", action="store_true", help="run without valgrind (checks the rows only)"
    )
    args = parser.parse_args(argv)
    requests = ClientRequests()
    if not args.native and not requests.running_on_valgrind():
        parser.error("not running under valgrind: use python -m benchmarks.counts")

    def warmup(key: str) -> int:
        return int(args.warmup_calls if per_call(key) else args.warmup_resolves)

    regions = _regions(args.regions)
    names = count(regions, warmup, requests)
    with open(args.out, "w") as out:
        json.dump({"versions": versions(), "names": names}, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
