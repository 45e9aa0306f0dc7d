"""Starting real servers for the tests: ``mcp-adapter serve`` subprocesses and uvicorn threads.

Everything listens on 127.0.0.1 on a port the OS picks, and every wait is bounded.
"""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

REPO = Path(__file__).resolve().parents[2]
_SCRIPT = Path(sys.executable).with_name("mcp-adapter")
CLI = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "mcp_adapter.cli"]
"""The installed ``mcp-adapter`` console script (``python -m mcp_adapter.cli`` without one)."""
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
URL_LINE = re.compile(r"at (http://\S+) ")


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    # serve reads its settings from MCP_ADAPTER_* variables: none leaks in from the shell
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_ADAPTER_")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    output: list[str]

    @property
    def base(self) -> str:
        return self.url.rsplit("/", 1)[0] if self.url.count("/") > 2 else self.url


def _pump(stream: Any, lines: queue.Queue[str | None], sink: list[str]) -> None:
    for line in stream:
        sink.append(line)
        lines.put(line)
    lines.put(None)


@contextmanager
def serve_process(
    command: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path = REPO
) -> Iterator[Served]:
    """Run ``command`` from ``cwd`` (the repository root); yield once it printed
    ``... at URL ...``."""
    process = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=cli_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    output: list[str] = []
    pump = threading.Thread(target=_pump, args=(process.stdout, lines, output), daemon=True)
    pump.start()
    try:
        url = _await_url(lines, output)
        yield Served(url, process, output)
    finally:
        stop(process)
        # the process's last lines are read on the pump thread: after the block, ``output``
        # holds all of them (bounded: a child that inherited the pipe may keep it open)
        pump.join(timeout=STOP_TIMEOUT)


@contextmanager
def serve_http(args: Sequence[str], env: Mapping[str, str] | None = None) -> Iterator[Served]:
    """``mcp-adapter serve ARGS --http --port 0`` in a subprocess, once it announced its URL."""
    with serve_process([*CLI, "serve", *args, "--http", "--port", "0"], env) as served:
        yield served


def _await_url(lines: queue.Queue[str | None], output: list[str]) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("server did not announce its URL:\n" + "".join(output))
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if line is None:
            raise RuntimeError("server exited before announcing its URL:\n" + "".join(output))
        found = URL_LINE.search(line)
        if found:
            return found.group(1)


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)


def run_cli(
    args: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """Run ``mcp-adapter ARGS`` to completion (bounded)."""
    return run_command([*CLI, *args], env, cwd)


def run_command(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    timeout: float = START_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` from ``cwd`` to completion, for ``timeout`` seconds at most, with
    ``cli_env(env)``; its output captured as text."""
    return subprocess.run(
        list(command),
        cwd=cwd,
        env=cli_env(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread on 127.0.0.1; yields ``http://127.0.0.1:PORT``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn stopped during startup")
        if time.monotonic() > deadline:
            raise TimeoutError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=STOP_TIMEOUT)
        sock.close()
