"""Start-up and shutdown over real ``mcp-adapter serve`` processes (stdio, HTTP, workers)
and an in-process ``http_app`` under uvicorn, observed through the journal the server writes."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_adapter import compile_server, http_app
from mcp_adapter.cli.serve import WORKER_HEALTHCHECK_TIMEOUT
from tests.lifespan.apps import FAIL_ENV, LOG_ENV, PORT_ENV, LifespanServer, build_container
from tests.serving.clients import CALL_TIMEOUT, connect
from tests.serving.harness import (
    CLI,
    REPO,
    START_TIMEOUT,
    STOP_TIMEOUT,
    cli_env,
    run_cli,
    run_command,
    serve_app,
    serve_process,
)

pytestmark = pytest.mark.anyio

TARGET = [
    "tests.lifespan.apps:LifespanServer",
    "--container",
    "tests.lifespan.apps:build_container",
]
UP = ["pool up", "migrated"]
DOWN = ["lifespan down", "migrations down", "pool down"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def events(log: Path, pid: str | None = None) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 1)[1] for line in lines if pid is None or line.split()[0] == pid]


def await_journal(log: Path, done: Callable[[list[str]], bool]) -> list[str]:
    deadline = time.monotonic() + STOP_TIMEOUT
    while not done(events(log)):
        assert time.monotonic() < deadline, f"journal incomplete: {events(log)}"
        time.sleep(0.05)
    return events(log)


async def test_stdio_starts_up_before_the_first_request_and_shuts_down_after_the_last(
    tmp_path: Path,
) -> None:
    log = tmp_path / "journal.log"
    params = StdioServerParameters(
        command=CLI[0],
        args=[*CLI[1:], "serve", *TARGET],
        env=cli_env({LOG_ENV: str(log)}),
        cwd=REPO,
    )
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(params) as client:
            result = await client.call_tool("status", {})
            assert result.structured_content is not None
            assert result.structured_content["ready"] is True
            assert events(log) == [*UP, "lifespan up (port unknown)", "request"]
    assert await_journal(log, lambda seen: "pool down" in seen) == [
        *UP,
        "lifespan up (port unknown)",
        "request",
        *DOWN,
    ]


async def test_http_starts_up_before_binding_and_shuts_down_after_the_last_request(
    tmp_path: Path,
) -> None:
    log = tmp_path / "journal.log"
    port = free_port()
    command = [*CLI, "serve", *TARGET, "--http", "--port", str(port)]
    with serve_process(command, {LOG_ENV: str(log), PORT_ENV: str(port)}) as served:
        async with connect(served.url) as client:
            result = await client.call_tool("status", {})
            assert result.structured_content is not None
            assert result.structured_content["ready"] is True
        assert events(log) == [*UP, "lifespan up (port closed)", "request"]
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=STOP_TIMEOUT) in (0, -signal.SIGTERM)
    assert events(log) == [*UP, "lifespan up (port closed)", "request", *DOWN]


@pytest.mark.parametrize(
    ("fail", "message", "journal"),
    [
        (
            "lifespan",
            "error: start-up failed: LifespanServer.lifespan failed: RuntimeError: "
            "migration 0042 failed",
            [*UP, "lifespan up (port closed)", "migrations down", "pool down"],
        ),
        (
            "pool",
            "error: start-up failed: building the eager singletons failed: RuntimeError: "
            "the database is unreachable",
            [],
        ),
    ],
)
def test_a_failing_http_start_up_exits_with_one_line_and_never_binds(
    fail: str, message: str, journal: list[str], tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    port = free_port()
    result = run_cli(
        ["serve", *TARGET, "--http", "--port", str(port)],
        {LOG_ENV: str(log), PORT_ENV: str(port), FAIL_ENV: fail},
    )
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == message
    assert result.stderr.splitlines()[1].startswith("hint: ")
    assert len(result.stderr.splitlines()) == 2
    assert "Traceback" not in result.stderr
    assert "at http://" not in result.stdout + result.stderr
    assert events(log) == journal


def test_a_failing_stdio_start_up_exits_with_one_line_before_the_banner(tmp_path: Path) -> None:
    result = run_cli(["serve", *TARGET], {FAIL_ENV: "lifespan"})
    assert result.returncode == 1
    assert result.stderr.startswith("error: start-up failed: LifespanServer.lifespan failed:")
    assert "Traceback" not in result.stderr
    assert "on stdio" not in result.stderr


async def test_each_worker_starts_up_and_shuts_down_once(tmp_path: Path) -> None:
    log = tmp_path / "journal.log"
    command = [*CLI, "serve", *TARGET, "--http", "--port", "0", "--workers", "2"]
    with serve_process(command, {LOG_ENV: str(log)}) as served:
        for _ in range(4):
            async with connect(served.url) as client:
                result = await client.call_tool("status", {})
                assert result.structured_content is not None
                assert result.structured_content["ready"] is True
        served.process.send_signal(signal.SIGTERM)
        served.process.wait(timeout=STOP_TIMEOUT)
    pids = {line.split()[0] for line in log.read_text().splitlines()}
    assert len(pids) == 2  # each worker journals its own start-up; the parent none
    for pid in pids:
        seen = [event for event in events(log, pid) if event != "request"]
        assert seen == [*UP, "lifespan up (port unknown)", *DOWN]


def test_a_failing_worker_start_up_stops_serve_with_a_one_line_error(tmp_path: Path) -> None:
    # uvicorn's supervisor asks each worker in turn, waiting up to serve's
    # WORKER_HEALTHCHECK_TIMEOUT (30 s) for one still importing: the failure is seen
    # after that at worst, so the bound is twice it plus start-up on a loaded machine
    result = run_command(
        [*CLI, "serve", *TARGET, "--http", "--port", "0", "--workers", "2"],
        {FAIL_ENV: "lifespan"},
        timeout=2 * WORKER_HEALTHCHECK_TIMEOUT + START_TIMEOUT,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "start-up failed: LifespanServer.lifespan failed: RuntimeError:" in result.stderr
    assert "error: a worker failed to start up" in result.stderr


async def test_http_app_under_uvicorn_runs_the_lifespan_in_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "journal.log"
    monkeypatch.setenv(LOG_ENV, str(log))
    container = build_container()
    app = http_app(compile_server(LifespanServer, container), container, close_container=True)
    with serve_app(app) as base:
        assert events(log) == [*UP, "lifespan up (port unknown)"]
        async with connect(f"{base}/mcp") as client:
            result = await client.call_tool("status", {})
            assert result.structured_content is not None
            assert result.structured_content["ready"] is True
    assert events(log) == [*UP, "lifespan up (port unknown)", "request", *DOWN]


async def test_http_app_with_run_lifespan_false_leaves_start_up_to_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "journal.log"
    monkeypatch.setenv(LOG_ENV, str(log))
    container = build_container()
    app = http_app(compile_server(LifespanServer, container), container, run_lifespan=False)
    with serve_app(app) as base:
        async with connect(f"{base}/mcp") as client:
            result = await client.call_tool("status", {})
            assert result.structured_content is not None
            assert result.structured_content["ready"] is False
    assert events(log) == ["pool up", "request"]  # the pool was built lazily, by the request
