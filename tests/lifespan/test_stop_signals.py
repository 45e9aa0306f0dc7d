"""A stop signal to ``mcp-adapter serve`` runs the whole shutdown, and a shutdown always ends.

Real ``mcp-adapter serve`` subprocesses over stdio (their stdin left open, as a client
that sends SIGTERM leaves it) and, for the bound, over HTTP. Before: over stdio SIGTERM
killed the process at once (no session, lifespan or singleton finalizer ran: the journal
stopped at the last request), and a lifespan whose exit hung kept the process alive
forever, whatever ``--shutdown-timeout`` said and however many signals followed (the
bounded wait for the process failed). No assertion depends on timing: each wait only
bounds the test.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.lifespan.apps import HANG_ENV, LOG_ENV
from tests.serving.harness import CLI, REPO, STOP_TIMEOUT, cli_env, serve_process

TARGET = [
    "tests.lifespan.apps:LifespanServer",
    "--container",
    "tests.lifespan.apps:build_session_container",
]
UP = ["pool up", "migrated", "lifespan up (port unknown)"]
DOWN = ["lifespan down", "migrations down", "pool down"]
BOUND = 60.0
"""Seconds any wait of this module may take (a slow start on a loaded machine)."""
LEGACY, MODERN = "2025-11-25", "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def journal(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 1)[1] for line in lines]


def await_journal(log: Path, line: str) -> list[str]:
    deadline = time.monotonic() + BOUND
    while line not in journal(log):
        assert time.monotonic() < deadline, f"no {line!r} in the journal: {journal(log)}"
        time.sleep(0.02)
    return journal(log)


@dataclass
class Stdio:
    """``mcp-adapter serve`` over pipes: JSON-RPC lines in, answers out."""

    process: subprocess.Popen[str]
    answers: dict[int, dict[str, Any]]
    stderr: list[str]

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def answer(self, request_id: int) -> dict[str, Any]:
        deadline = time.monotonic() + BOUND
        while request_id not in self.answers:
            assert time.monotonic() < deadline, f"no answer to {request_id}: {self.stderr}"
            time.sleep(0.02)
        return self.answers[request_id]

    def call(self, era: str, request_id: int, name: str, wait: bool = True) -> None:
        params: dict[str, Any] = {"name": name, "arguments": {}}
        if era == MODERN:
            params["_meta"] = MODERN_META
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        if wait:
            assert "result" in self.answer(request_id), self.answers[request_id]

    def handshake(self, era: str) -> None:
        if era == MODERN:
            return
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def exit_status(self) -> int:
        return self.process.wait(timeout=BOUND)


def _pump(stream: Any, sink: Any) -> None:
    for line in stream:
        sink(line)


@contextmanager
def serve_stdio(env: dict[str, str], *flags: str) -> Iterator[Stdio]:
    process = subprocess.Popen(
        [*CLI, "serve", *TARGET, *flags],
        cwd=REPO,
        env=cli_env(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = Stdio(process, {}, [])

    def answered(line: str) -> None:
        message = json.loads(line)
        if "id" in message and message["id"] is not None:
            served.answers[message["id"]] = message

    threading.Thread(target=_pump, args=(process.stdout, answered), daemon=True).start()
    threading.Thread(target=_pump, args=(process.stderr, served.stderr.append), daemon=True).start()
    try:
        yield served
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_sigterm_over_stdio_runs_the_whole_shutdown(era: str, tmp_path: Path) -> None:
    log = tmp_path / "journal.log"
    with serve_stdio({LOG_ENV: str(log)}) as served:
        served.handshake(era)
        served.call(era, 1, "turn")
        served.call(era, 2, "wait", wait=False)  # still in flight at the signal
        await_journal(log, "waiting")
        served.process.send_signal(signal.SIGTERM)
        assert served.exit_status() in (0, -signal.SIGTERM), served.stderr
    session = ["session down"]
    in_flight = ["waiting", "wait cancelled"]
    if era == LEGACY:  # the session's scope lives until the connection ends
        assert journal(log) == [*UP, "turn", *in_flight, *session, *DOWN]
    else:  # 2026-07-28 has no session: the call's own scope was its session
        assert journal(log) == [*UP, "turn", *session, *in_flight, *DOWN]


@pytest.mark.parametrize("hang", ["async", "blocking"])
def test_a_hanging_shutdown_over_stdio_ends_at_the_shutdown_timeout(
    hang: str, tmp_path: Path
) -> None:
    log = tmp_path / "journal.log"
    with serve_stdio({LOG_ENV: str(log), HANG_ENV: hang}, "--shutdown-timeout", "0.5") as served:
        served.call(MODERN, 1, "turn")
        served.process.send_signal(signal.SIGTERM)
        assert served.exit_status() == 1
    assert journal(log)[-1] == "lifespan hangs"
    assert any(
        "exiting before the shutdown finished: shutdown did not finish within 0.5 s" in line
        for line in served.stderr
    ), served.stderr


@pytest.mark.parametrize("hang", ["async", "blocking"])
def test_a_further_signal_ends_a_hanging_shutdown_over_stdio(hang: str, tmp_path: Path) -> None:
    log = tmp_path / "journal.log"
    with serve_stdio({LOG_ENV: str(log), HANG_ENV: hang}) as served:  # the default: 30 s
        served.call(MODERN, 1, "turn")
        served.process.send_signal(signal.SIGTERM)
        await_journal(log, "lifespan hangs")
        served.process.send_signal(signal.SIGINT)
        assert served.exit_status() == 1
    assert any("signal SIGINT during shutdown" in line for line in served.stderr), served.stderr


def test_stdin_closing_still_shuts_down_in_order(tmp_path: Path) -> None:
    log = tmp_path / "journal.log"
    with serve_stdio({LOG_ENV: str(log)}) as served:
        served.call(MODERN, 1, "status")
        assert served.process.stdin is not None
        served.process.stdin.close()
        assert served.exit_status() == 0
    assert journal(log) == [*UP, "request", *DOWN]


def test_a_hanging_shutdown_over_http_ends_at_the_shutdown_timeout(tmp_path: Path) -> None:
    log = tmp_path / "journal.log"
    command = [*CLI, "serve", *TARGET, "--http", "--port", "0", "--shutdown-timeout", "0.5"]
    with serve_process(command, {LOG_ENV: str(log), HANG_ENV: "blocking"}) as served:
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=BOUND) == 1
    assert journal(log)[-1] == "lifespan hangs"
    assert any("shutdown did not finish within 0.5 s" in line for line in served.output)
