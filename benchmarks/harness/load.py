"""A closed-loop HTTP/1.1 load generator: N keep-alive connections, one request in flight each.

``python -m benchmarks.harness.load --port P [--connections 32] [--warmup 5] [--duration 10]``
prints one JSON object: requests completed in the measured window, requests per
second, latency percentiles, errors, and the CPU time this process and the
server's processes (``--pids``) spent in the window.

It is deliberately small and standard-library only: an ``asyncio.Protocol`` per
connection writes a prebuilt request (the same bytes every time), parses the
status line and ``Content-Length``, checks the body for an expected fragment
(``--expect``) and writes the next request from ``data_received``, so the
generator costs a few tens of microseconds of CPU per request and stays a small
share of a 2-core machine. Only 127.0.0.1 is ever contacted.

Timing: connections open, run ``--warmup`` seconds unrecorded, then every
response completed within the next ``--duration`` seconds counts toward the
throughput and its latency (send of the request to the last byte of the
response) toward the percentiles.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.processes import HOST, cpu_seconds


def request_bytes(
    port: int, path: str, body: bytes, headers: Sequence[tuple[str, str]] = ()
) -> bytes:
    """One HTTP/1.1 keep-alive POST of ``body`` (JSON) to ``path`` on 127.0.0.1."""
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {HOST}:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        *(f"{name}: {value}" for name, value in headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@dataclass
class Window:
    """What the connections share: the clock window and what was recorded."""

    expect: bytes
    start_ns: int = 0
    end_ns: int = 0
    stopping: bool = False
    latencies_ns: list[int] = field(default_factory=list)
    completed: int = 0
    """Responses completed in the window (= ``len(latencies_ns)``)."""
    total: int = 0
    """Responses completed at all (warm-up included)."""
    errors: int = 0
    error_sample: str = ""

    def fail(self, message: str) -> None:
        self.errors += 1
        if not self.error_sample:
            self.error_sample = message


class Connection(asyncio.Protocol):
    """One keep-alive connection with one request in flight at a time."""

    def __init__(self, window: Window, request: bytes, closed: asyncio.Future[None]) -> None:
        self.window = window
        self.request = request
        self.closed = closed
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.sent_ns = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.send()

    def send(self) -> None:
        assert self.transport is not None
        self.sent_ns = time.perf_counter_ns()
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(self.buffer[:head_end])
            length = _content_length(head)
            if length is None:
                self.abort(f"response without Content-Length: {head[:200]!r}")
                return
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            body = bytes(self.buffer[head_end + 4 : end])
            del self.buffer[:end]
            self.completed(head, body)
            if self.window.stopping or self.transport is None:
                return
            self.send()

    def completed(self, head: bytes, body: bytes) -> None:
        now = time.perf_counter_ns()
        window = self.window
        window.total += 1
        if not head.startswith((b"HTTP/1.1 200 ", b"HTTP/1.0 200 ")) or window.expect not in body:
            status = head.split(b"\r\n", 1)[0]
            window.fail(f"{status!r}: {body[:300]!r}")
            return
        if window.start_ns <= now < window.end_ns and self.sent_ns >= window.start_ns:
            window.latencies_ns.append(now - self.sent_ns)
            window.completed += 1

    def abort(self, message: str) -> None:
        self.window.fail(message)
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if not self.window.stopping:
            self.window.fail(f"connection lost: {exc!r}")
        if not self.closed.done():
            self.closed.set_result(None)


def _content_length(head: bytes) -> int | None:
    lowered = head.lower()
    at = lowered.find(b"\r\ncontent-length:")
    if at < 0:
        return None
    start = at + len(b"\r\ncontent-length:")
    stop = lowered.find(b"\r\n", start)
    return int(lowered[start : stop if stop >= 0 else len(lowered)].strip())


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from ``/proc/stat``."""
    try:
        with open("/proc/stat") as stat:
            values = [int(value) for value in stat.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # guest time is already counted in user
    return total - idle, total


def percentile(sorted_values: Sequence[int], q: float) -> float:
    """Nearest-rank percentile ``q`` (0..1) of ascending ``sorted_values``."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q * len(sorted_values)))
    return float(sorted_values[rank - 1])


async def run(
    port: int,
    request: bytes,
    *,
    expect: bytes,
    connections: int,
    warmup: float,
    duration: float,
    pids: Sequence[int] = (),
    spread: float = 0.005,
) -> dict[str, Any]:
    """Drive ``connections`` connections for ``warmup + duration`` seconds; the figures."""
    loop = asyncio.get_running_loop()
    window = Window(expect=expect)
    window.start_ns = window.end_ns = time.perf_counter_ns() + 10**18  # nothing recorded yet
    opened: list[Connection] = []
    for _ in range(connections):
        _, protocol = await loop.create_connection(
            lambda: Connection(window, request, loop.create_future()), HOST, port
        )
        opened.append(protocol)
        # One at a time, so each accept is its own wake-up of the server's workers
        # (asyncio accepts a whole burst in one go, and then one worker gets it all).
        await asyncio.sleep(spread)
    await asyncio.sleep(warmup)
    cpu_here = time.process_time()
    cpu_server = cpu_seconds(pids)
    busy, total = machine_ticks()
    window.start_ns = time.perf_counter_ns()
    window.end_ns = window.start_ns + int(duration * 1e9)
    await asyncio.sleep(duration)
    measured_ns = time.perf_counter_ns() - window.start_ns
    cpu_here = time.process_time() - cpu_here
    cpu_server = cpu_seconds(pids) - cpu_server
    busy_after, total_after = machine_ticks()
    cores = os.cpu_count() or 1
    machine_busy = (
        (busy_after - busy) / (total_after - total) * cores if total_after > total else math.nan
    )
    window.stopping = True
    for connection in opened:
        if connection.transport is not None:
            connection.transport.close()
    await asyncio.gather(*(connection.closed for connection in opened))
    seconds = min(measured_ns, int(duration * 1e9)) / 1e9
    latencies = sorted(window.latencies_ns)
    return {
        "connections": connections,
        "warmup_s": warmup,
        "seconds": seconds,
        "requests": window.completed,
        "total_requests": window.total,
        "rps": window.completed / seconds if seconds else 0.0,
        "p50_ms": percentile(latencies, 0.50) / 1e6,
        "p90_ms": percentile(latencies, 0.90) / 1e6,
        "p99_ms": percentile(latencies, 0.99) / 1e6,
        "max_ms": (latencies[-1] / 1e6) if latencies else math.nan,
        "errors": window.errors,
        "error_sample": window.error_sample,
        "generator_cpu_s": cpu_here,
        "server_cpu_s": cpu_server,
        "machine_busy_cores": machine_busy,
        "cores": cores,
    }


def command(
    port: int,
    body: bytes,
    expect: str,
    headers: Sequence[tuple[str, str]],
    *,
    connections: int,
    warmup: float,
    duration: float,
    pids: Sequence[int] = (),
) -> list[str]:
    """The command that runs this generator against ``port`` in a process of its own."""
    argv = [sys.executable, "-m", "benchmarks.harness.load", "--port", str(port)]
    argv += ["--body", body.decode(), "--expect", expect, "--connections", str(connections)]
    argv += ["--warmup", str(warmup), "--duration", str(duration)]
    argv += ["--pids", ",".join(map(str, pids))]
    for name, value in headers:
        argv += ["--header", f"{name}: {value}"]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness.load")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--body", required=True, help="the JSON body to POST")
    parser.add_argument(
        "--header", action="append", default=[], metavar="NAME:VALUE", help="repeatable"
    )
    parser.add_argument("--expect", required=True, help="a fragment every 200 body must contain")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--pids", default="", help="comma-separated server pids for CPU time")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    headers = [tuple(item.split(":", 1)) for item in args.header]
    request = request_bytes(
        args.port,
        args.path,
        args.body.encode(),
        [(name.strip(), value.strip()) for name, value in headers],
    )
    pids = [int(pid) for pid in args.pids.split(",") if pid]
    figures = asyncio.run(
        run(
            args.port,
            request,
            expect=args.expect.encode(),
            connections=args.connections,
            warmup=args.warmup,
            duration=args.duration,
            pids=pids,
        )
    )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
