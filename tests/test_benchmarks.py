"""The benchmarks still run: a ``--quick`` pass of every suite, whose timings are not judged.

Each suite proves its contenders do the same work before it times them
(``verify``: one Ledger per call, the right sums, the same tools listed, ...),
so this catches a benchmark that a change to ``src/`` broke or made measure
something else. It needs the ``bench`` dependency group, which README's test
command installs; the FastMCP and dishka-fastmcp rows need venvs of their own
and are left out (``--no-venvs``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUITES = {
    "container": "## Container: scoped graph and transient",
    "mcp_call": "## Per call: tools/call through mcp.Client, in process",
    "scale": "## Scale: compile time, memory and tools/list for many tools",
    "http": "## HTTP on 127.0.0.1: tools/call, stateless",
    "open_state": "## Open state: state handles and 2025-11-25 sessions",
    "replicas": "## Replicas: CPU per request behind haproxy, on Redis",
    "listeners": "## Listeners: one change to 10, 100 and 1,000 subscriptions/listen streams",
    "tasks": "## Tasks: start to completed over HTTP, against FastMCP",
}


def test_every_suite_runs_and_verifies_its_contenders() -> None:
    pytest.importorskip("dishka", reason="the bench dependency group is not installed")
    pytest.importorskip("wireup", reason="the bench dependency group is not installed")
    pytest.importorskip("diwire", reason="the bench dependency group is not installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--no-venvs", "--no-write"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for name, title in SUITES.items():
        assert f"[{name}] verifying contenders" in done.stderr
        assert f"[{name}] done in" in done.stderr
        assert title in done.stdout
    # every suite states its targets; the tasks suite's compare with FastMCP, left out here
    assert done.stdout.count("### Targets") == len(SUITES) - 1
    assert "FastMCP rows skipped (`--no-venvs`)." in done.stdout
    # the adapter's rows were measured, not skipped
    assert done.stdout.count("| **this adapter") >= 6
    assert "| **this container (sync scope)** |" in done.stdout
    # every container contender was verified and timed, in both flavours
    for contender in (
        "dishka (sync container)",
        "wireup (async container)",
        "diwire (sync scope)",
        "diwire (async scope)",
    ):
        assert f"| {contender} |" in done.stdout
    # tasks: both bodies at 1 and 16 clients over HTTP, and the in-process operations,
    # on memory:// and (where redis-server is installed) redis://
    stores = ("memory", "redis") if shutil.which("redis-server") else ("memory",)
    for body in ("short body", "asks once"):
        for clients in ("1 client", "16 clients"):
            row = f"| **this adapter, `http_app`: {body}, {clients}** |"
            assert done.stdout.count(row) == len(stores), row
    for operation in ("inline", "start", "result", "start + result"):
        for store in stores:
            assert f"| {operation}, {store}:// |" in done.stdout


def test_every_counted_row_runs_natively() -> None:
    """The rows ``python -m benchmarks.counts`` counts under callgrind still set up and run.

    The worker's ``--native`` mode runs each row's loop a few times without
    valgrind, so a change to ``src/`` that breaks a counted row shows here even
    where valgrind is not installed (the budget test then skips).
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    listed = subprocess.run(
        [sys.executable, "-m", "benchmarks.counts", "--rows"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    keys = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert "modern/ours-constructor" in keys
    assert "scoped/ours-async" in keys
    # one elicitation round is counted in both eras, next to the per-call rows
    for era in ("modern", "legacy"):
        assert f"{era}/ours-elicit" in keys
        assert f"{era}/resolve-elicit" in keys
    # the floor's HTTP app with the SDK's input-schema hook, the adapter's lead explained
    assert "asgi/floor-hook" in keys
    # each with the collector off and on, as a count does
    regions = ",".join(
        f"{key}:{loops}{gc}" for key in keys for gc in ("", ":gc") for loops in (0, 3)
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.counts.worker",
            "--native",
            "--warmup-calls=2",
            "--warmup-resolves=2",
            "--regions",
            regions,
            "--out",
            os.devnull,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_http_wire_runs_every_server_side_by_side() -> None:
    """``python -m benchmarks.http_wire`` starts, checks and loads every server over the
    wire (FastMCP left out: it needs a venv of its own), and prints their table."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # windows long enough that a server on a loaded machine answers some requests in each
    short = ["--passes", "1", "--seconds", "1", "--warmup", "0.5", "--rewarm", "0.3"]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.http_wire", "--no-fastmcp", *short],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "left out" not in done.stdout, done.stdout
    for row in (
        "| MCPServer + Resolve (anchor) |",
        "| low-level Server, hand-written (floor) |",
        "| **this adapter, `mcp-adapter serve`** |",
        "| low-level Server, hand-written (floor) + `get_tool_input_schema` |",
        "| low-level Server, hand-written (floor), served with the adapter's uvicorn settings |",
    ):
        assert row in done.stdout, done.stdout
    # every server measured in the one pass asked for (its loops x rounds)
    assert done.stdout.count(" x 1 | ") == 5, done.stdout
    for target in ("req/s >= 1.3x MCPServer's", "req/s >= the floor's", "p99 <= the floor's"):
        assert f"1 worker: this adapter (`mcp-adapter serve`) {target}" in done.stdout
