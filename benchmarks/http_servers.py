"""The HTTP suite's servers: started in processes of their own, checked, loaded, stopped.

Each contender (:class:`benchmarks.http_suite.Contender`) is started on a free
port of 127.0.0.1 in a new session (and, on Linux, asked to die with this
process), its output kept in a temporary file; :func:`wait_ready` checks it over
the wire (sums 3 and 42, a string argument refused) and waits until every one
of its processes is idle; :func:`load` runs the load generator
(:mod:`benchmarks.http_load`) against it in a second process and notes how its
connections spread over the worker processes (Linux ``/proc``); :func:`stop`
ends it and any worker a dead supervisor left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import http_load, http_request, http_venv
from benchmarks.pinned_venv import ROOT

if TYPE_CHECKING:
    from benchmarks.http_suite import Contender, Timing


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((http_request.HOST, 0))
        port: int = probe.getsockname()[1]
        return port


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


def post(port: int, body: bytes, timeout: float = 10.0) -> tuple[int, Any]:
    """One request on a new connection; the status and the decoded JSON body."""
    import http.client

    connection = http.client.HTTPConnection(http_request.HOST, port, timeout=timeout)
    try:
        connection.request(
            "POST",
            http_request.PATH,
            body=body,
            headers={"Content-Type": "application/json", **dict(http_request.HEADERS)},
        )
        response = connection.getresponse()
        raw = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw.decode(errors="replace")


def check_over_the_wire(port: int, who: str) -> None:
    http_request.check_answer(*post(port, http_request.BODY), 3, who)
    http_request.check_answer(*post(port, http_request.request_body(20, 22, 7)), 42, who)
    http_request.check_refusal(*post(port, http_request.request_body("one", 2, 8)), who)


@dataclass
class Running:
    contender: Contender
    port: int
    process: subprocess.Popen[bytes]
    log: Any

    def pids(self) -> list[int]:
        return descendants(self.process.pid)

    def output(self) -> str:
        self.log.seek(0)
        text: str = self.log.read().decode(errors="replace")
        return text[-2000:]


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the benchmark process dies (Linux).

    Without it a benchmark run killed mid-way (SIGKILL, a closed terminal) leaves
    its servers running; a uvicorn supervisor stops its workers on SIGTERM.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


PR_SET_PDEATHSIG = 1


def start(contender: Contender) -> Running:
    port = free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115  # lives as long as the server
    process = subprocess.Popen(
        contender.argv(port),
        cwd=ROOT,
        env=http_venv.env() if contender.venv else None,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,
    )
    return Running(contender, port, process, log)


def _cpu_ticks(pids: Sequence[int]) -> float:
    return http_load.cpu_seconds(pids)


def wait_ready(server: Running, timeout: float = 120.0) -> None:
    """Until the server answers correctly and every process of it has gone idle.

    Idle (no CPU time used for 0.5 s) means every worker has finished importing
    and waits in its event loop, so the load generator's connections are
    accepted by all workers, not by the first one up.
    """
    who = server.contender.name
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"{who} exited ({server.process.returncode}):\n{server.output()}")
        try:
            check_over_the_wire(server.port, who)
            break
        except (OSError, ConnectionError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{who} did not answer within {timeout:g} s:\n{server.output()}")
        time.sleep(0.2)
    before = _cpu_ticks(server.pids())
    while time.monotonic() < deadline:
        time.sleep(0.5)
        pids = server.pids()
        now = _cpu_ticks(pids)
        if now == before and len(pids) >= server.contender.workers:
            return
        before = now
    raise RuntimeError(f"{who} never went idle within {timeout:g} s")


def stop(server: Running) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, 9)
            server.process.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.process.pid, 9)  # workers left behind by a dead supervisor
    server.log.close()


def load(server: Running, timing: Timing, warmup: float) -> dict[str, Any]:
    """Run the load generator against ``server`` in a second process; its figures."""
    pids = server.pids()
    command = [
        sys.executable,
        "-m",
        "benchmarks.http_load",
        "--port",
        str(server.port),
        "--path",
        http_request.PATH,
        "--body",
        http_request.BODY.decode(),
        "--expect",
        http_request.EXPECT,
        "--connections",
        str(timing.connections),
        "--warmup",
        str(warmup),
        "--duration",
        str(timing.duration),
        "--pids",
        ",".join(map(str, pids)),
    ]
    for name, value in http_request.HEADERS:
        command += ["--header", f"{name}: {value}"]
    generator = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    spread: dict[int, int] = {}
    with contextlib.suppress(subprocess.TimeoutExpired):
        generator.wait(timeout=warmup / 2 + 0.3)
    if generator.poll() is None:
        spread = connections_by_process(server.port, pids)
    out, _ = generator.communicate(timeout=warmup + timing.duration + 120)
    if generator.returncode != 0:
        raise RuntimeError(f"the load generator failed against {server.contender.name}")
    figures: dict[str, Any] = json.loads(out)
    figures["spread"] = sorted(spread.values(), reverse=True)
    return figures
