"""The processes a benchmark starts on 127.0.0.1 (servers, a Redis), and what Linux says of them.

:class:`Process` starts a command in a session of its own, asked to die with this
process (a benchmark killed mid-way leaves nothing running), its output kept in a
temporary file; :meth:`Process.stop` ends it and anything a dead supervisor left
behind. :func:`redis_server` runs a ``redis-server`` without persistence for the
length of a ``with``. The rest reads ``/proc``: a process tree, its CPU time, its
connections on a port.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from benchmarks.harness.venv import ROOT

HOST = "127.0.0.1"
PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the benchmark process dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Process:
    """A command started in a session of its own, its output in a temporary file."""

    def __init__(
        self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path = ROOT
    ) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115  # lives as long as the process
        self.popen = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def exited(self) -> int | None:
        return self.popen.poll()

    def pids(self) -> list[int]:
        return descendants(self.pid)

    def output(self) -> str:
        self.log.seek(0)
        text: str = self.log.read().decode(errors="replace")
        return text[-2000:]

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.popen.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # workers left behind by a dead supervisor
        self.log.close()


@contextlib.contextmanager
def started(command: Sequence[str], env: Mapping[str, str] | None = None) -> Iterator[Process]:
    """A :class:`Process` for the length of a ``with``."""
    process = Process(command, env=env)
    try:
        yield process
    finally:
        process.stop()


def wait_until(ready: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    """Poll ``ready()`` (an ``OSError`` counts as not yet) until true, or exit naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            if ready():
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} was not ready within {timeout:g} s")
        time.sleep(0.05)


def accepting(port: int) -> bool:
    """Whether something accepts connections on ``port`` of 127.0.0.1 (``OSError`` if not)."""
    socket.create_connection((HOST, port), timeout=1).close()
    return True


def binary(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


@contextlib.contextmanager
def redis_server() -> Iterator[str | None]:
    """A ``redis-server`` on a free loopback port, no persistence (its URL); None when
    it is not installed."""
    command = binary("redis-server")
    if command is None:
        yield None
        return
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        argv = [command, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly"]
        with started([*argv, "no", "--dir", folder]):
            wait_until(lambda: accepting(port), "redis-server")
            yield f"redis://{HOST}:{port}/0"


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU seconds the processes ``pids`` have used (Linux ``/proc``)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def connections_by_process(port: int, pids: Sequence[int]) -> dict[int, int]:
    """Established connections on local ``port`` per process of ``pids`` (``/proc``)."""
    wanted = f"{port:04X}"
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as rows:
            next(rows)
            for line in rows:
                parts = line.split()
                if parts[1].rsplit(":", 1)[1] == wanted and parts[3] == "01":  # ESTABLISHED
                    inodes.add(parts[9])
    counts: dict[int, int] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        counts[pid] = counts.get(pid, 0) + 1
    return counts
