"""``serve --workers`` on a busy machine: a worker process that takes longer than uvicorn's
default health check (5 s) to boot is not killed and started again forever.

uvicorn's supervisor pings each worker from the moment it is spawned; the worker answers
only once it has imported what its bootstrap needs (the SDK, pydantic, this package),
which on a loaded machine takes longer than 5 s. A ``sitecustomize`` that holds every
worker for 8 s at start stands in for that machine.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.serving.clients import connect, tool_names
from tests.serving.harness import CLI, serve_process

SLOW_WORKERS = """\
import sys, time

if "--multiprocessing-fork" in getattr(sys, "orig_argv", ()):
    time.sleep(8)  # a worker that boots slowly, as on a loaded machine
"""


def test_workers_that_boot_slowly_are_not_killed(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(SLOW_WORKERS)
    command = [*CLI, "serve", "examples.demo.server:DemoServer", "--http", "--port", "0"]
    with serve_process([*command, "--workers", "2"], {"PYTHONPATH": str(tmp_path)}) as served:

        async def names() -> list[str]:
            async with connect(served.url) as client:
                return await tool_names(client)

        assert anyio.run(names) == ["greet", "summarize"]
        assert served.process.poll() is None
