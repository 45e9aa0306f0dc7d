"""A real ``redis-server`` for the task tests that keep their tasks in Redis."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests import needs


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A ``redis-server`` of the test's own on a free port, without persistence; it takes
    ``DEBUG`` from 127.0.0.1 (``DEBUG SLEEP`` stalls it)."""
    server = needs.command("redis-server", "apt-get install redis-server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            *(server, "--port", str(port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no", "--enable-debug-command", "local"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
