"""Instructions per ``tools/call``, counted by valgrind's cachegrind:
``python -m benchmarks.call_instructions``.

The per-call workload (``add`` of ``benchmarks.mcp_call_suite``: a singleton and a scoped
service injected, structured output) with the ``tools/call`` handler awaited directly
(the adapter's own path, no transport), under ``Server.middleware``:

- ``none``: no middleware (the path every call without a layer takes);
- ``call``: one pass-through call-stage layer;
- ``request``: one pass-through request-stage layer.

Each variant runs twice under ``valgrind --tool=cachegrind --cache-sim=no``, with
``--calls`` and twice as many calls; the difference of the two instruction counts,
divided by ``--calls``, is what one call costs, start-up left out. Instruction counts
do not depend on the machine's load, so two runs of one commit agree to within a few
hundred instructions per call, and two commits can be compared on a busy machine.
Point ``PYTHONPATH`` at another checkout's ``src`` to count its calls the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, ClassVar

VARIANTS = ("none", "call", "request")


def _layers(variant: str) -> tuple[Any, ...]:
    async def passing(call: Any, call_next: Any) -> Any:
        return await call_next(call)

    if variant == "none":
        return ()
    if variant == "request":
        from mcp_adapter import request_stage

        return (request_stage(passing),)
    return (passing,)


async def _run(variant: str, calls: int) -> None:
    from mcp import types

    from benchmarks.mcp_call_suite import AddTool
    from benchmarks.mcp_workload import (
        ARGUMENTS,
        TOOL,
        Clock,
        Ledger,
        handler_of,
        request_context,
    )
    from container import Container
    from mcp_adapter import Server, build_sdk_server, compile_server

    layers = _layers(variant)

    class Adder(Server):
        name = "adder"
        tools = (AddTool,)
        middleware: ClassVar = layers

    container = Container()
    container.singleton(Clock)
    container.scoped(Ledger)
    handler = handler_of(build_sdk_server(compile_server(Adder, container), container))
    ctx = request_context()
    params = types.CallToolRequestParams(name=TOOL, arguments=dict(ARGUMENTS))
    for _ in range(calls):
        result = await handler(ctx, params)
    assert not result.is_error, result


def _instructions(variant: str, calls: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cachegrind.out"
        done = subprocess.run(
            [
                "valgrind",
                "--tool=cachegrind",
                "--cache-sim=no",
                f"--cachegrind-out-file={out}",
                sys.executable,
                "-m",
                "benchmarks.call_instructions",
                "--run",
                variant,
                "--calls",
                str(calls),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        assert found is not None, done.stderr[-2000:]
        return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--run", choices=VARIANTS, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.run is not None:
        asyncio.run(_run(options.run, options.calls))
        return
    for variant in options.variants.split(","):
        once = _instructions(variant, options.calls)
        twice = _instructions(variant, 2 * options.calls)
        print(f"{variant:8} {(twice - once) / options.calls:12,.0f} instructions per call")


if __name__ == "__main__":
    main()
