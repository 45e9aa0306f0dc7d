"""``serve``'s status lines go to stderr on every transport; stdout carries the protocol on
stdio and nothing at all on HTTP."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from typing import IO

import pytest

from tests.serving.harness import CLI, REPO, START_TIMEOUT, URL_LINE, cli_env, run_cli, stop

TOOLSETS = "tests.serving.apps:toolset_catalog"
AUTH = ["--auth", "tests.serving.apps:StaticVerifier", "--anonymous"]


def _read(stream: IO[str] | None, sink: list[str], lines: queue.Queue[str | None] | None) -> None:
    assert stream is not None
    for line in stream:
        sink.append(line)
        if lines is not None:
            lines.put(line)
    if lines is not None:
        lines.put(None)


def _serve_until_announced(args: list[str]) -> tuple[list[str], list[str]]:
    """Run ``serve ARGS`` with stdout and stderr apart until stderr gives the URL; stop it.

    Returns what each stream carried."""
    process = subprocess.Popen(
        [*CLI, "serve", *args],
        cwd=REPO,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out: list[str] = []
    err: list[str] = []
    err_lines: queue.Queue[str | None] = queue.Queue()
    readers = [
        threading.Thread(target=_read, args=(process.stdout, out, None), daemon=True),
        threading.Thread(target=_read, args=(process.stderr, err, err_lines), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                line = err_lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise TimeoutError("no URL on stderr:\n" + "".join(out + err)) from None
            assert line is not None, "serve exited:\n" + "".join(out + err)
            if URL_LINE.search(line):
                break
        time.sleep(0.3)  # anything written after the banner is caught too
    finally:
        stop(process)
        for reader in readers:
            reader.join(timeout=START_TIMEOUT)
    return out, err


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_the_http_banner_is_on_stderr_and_stdout_stays_empty(workers: list[str]) -> None:
    out, err = _serve_until_announced([TOOLSETS, "--http", "--port", "0", *AUTH, *workers])
    assert out == []
    assert any(line.startswith("MCP server 'toolsets' at http://127.0.0.1:") for line in err)
    assert "  bearer token optional (Authorization: Bearer ...)\n" in err


def test_the_stdio_banner_is_on_stderr_and_stdout_is_the_protocols() -> None:
    done = run_cli(["serve", TOOLSETS])  # stdin at its end: the server stops at once
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "MCP server 'toolsets' on stdio" in done.stderr
