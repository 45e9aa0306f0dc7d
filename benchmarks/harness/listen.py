"""Many ``subscriptions/listen`` streams, one change at a time: who has it, and when.

``python -m benchmarks.harness.listen --port P --uri U --listeners N [--updates 10]
[--warmup 2] [--pids 1,2]`` opens ``N`` listen streams on 127.0.0.1 (raw HTTP/1.1
connections reading SSE, one ``asyncio.Protocol`` each: no SDK client, so 1,000
listeners cost this process little), waits for every acknowledgment, then
announces ``U`` changed ``--warmup`` times unrecorded and ``--updates`` times
recorded, one at a time, through the served app's ``POST /bench/publish``
(:mod:`benchmarks.workloads.listeners`). An update counts when every listener has
its ``notifications/resources/updated``; the next is announced only then, so a
server that merges pending changes (a level trigger) still owes each listener
each update. It prints one JSON object: per update the time from the announcement
to the last listener having it (``all_ms``), every listener's time (``each_ms``),
listeners that never got one (``lost``; the run stops at the first loss), and
the CPU time the server's processes (``--pids``) and this one used over the
recorded updates.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.processes import HOST, cpu_seconds

ACKNOWLEDGED = b"notifications/subscriptions/acknowledged"
UPDATED = b"notifications/resources/updated"
PROTOCOL = "2026-07-28"
PATH = "/mcp"
PUBLISH = "/bench/publish"
TIMEOUT = 60.0
"""Seconds an update (or the acknowledgments) may take before it counts as lost."""


def listen_request(port: int, uri: str, request_id: int) -> bytes:
    """A 2026-07-28 ``subscriptions/listen`` for ``uri``, as the SDK's client posts it."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "subscriptions/listen",
            "params": {
                "notifications": {"resourceSubscriptions": [uri]},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                    "io.modelcontextprotocol/clientInfo": {"name": "listen-bench", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        },
        separators=(",", ":"),
    ).encode()
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {PROTOCOL}\r\nMcp-Method: subscriptions/listen\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


@dataclass
class Round:
    """What the listeners share: the update in flight and what arrived."""

    listeners: int
    update: int = 0
    """Updates announced so far; each listener must have had exactly this many."""
    started_ns: int = 0
    waiting: int = 0
    acknowledged: int = 0
    each_ns: list[int] = field(default_factory=list)
    recording: bool = False
    errors: list[str] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def arrived(self, count: int, now: int) -> None:
        if count != self.update:
            self.fail(f"a listener had {count} updates when {self.update} were announced")
            return
        if self.recording:
            self.each_ns.append(now - self.started_ns)
        self.waiting -= 1
        if self.waiting == 0:
            self.done.set()

    def acked(self) -> None:
        self.acknowledged += 1
        if self.acknowledged == self.listeners:
            self.done.set()

    def fail(self, message: str) -> None:
        self.errors.append(message)
        self.done.set()


class Listener(asyncio.Protocol):
    """One listen stream: counts the update notifications its SSE body carries."""

    def __init__(self, state: Round, request: bytes) -> None:
        self.state = state
        self.request = request
        self.tail = b""
        self.acked = False
        self.count = 0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter_ns()
        text = self.tail + data
        if not self.acked:
            if not text.startswith(b"HTTP/1.1 200"):
                self.state.fail(f"a listen request was answered {text[:200]!r}")
                return
            at = text.find(ACKNOWLEDGED)
            if at < 0:
                self.tail = text
                return
            self.acked = True
            self.state.acked()
            text = text[at + len(ACKNOWLEDGED) :]
        for _ in range(text.count(UPDATED)):
            self.count += 1
            self.state.arrived(self.count, now)
        self.tail = text[-(len(UPDATED) - 1) :]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.state.errors and self.transport is not None and not self.transport.is_closing():
            self.state.fail(f"a listen stream ended early ({exc})")

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def publish(port: int, uri: str) -> None:
    """``POST /bench/publish?uri=...`` on a connection of its own; raises unless 200."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        writer.write(
            f"POST {PUBLISH}?uri={uri} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n".encode("latin-1")
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"publish answered {head[:200]!r}")
        await reader.read()
    finally:
        writer.close()


async def wait(state: Round, what: str) -> None:
    try:
        await asyncio.wait_for(state.done.wait(), TIMEOUT)
    except TimeoutError:
        state.fail(f"{what}: not every listener within {TIMEOUT:g} s")
    state.done.clear()


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    state = Round(args.listeners)
    listeners: list[Listener] = []
    started = time.perf_counter()
    for number in range(args.listeners):
        request = listen_request(args.port, args.uri, number + 1)
        listener = Listener(state, request)
        await loop.create_connection(lambda listener=listener: listener, HOST, args.port)
        listeners.append(listener)
    await wait(state, "acknowledgments")
    connect_s = time.perf_counter() - started
    all_ns: list[int] = []
    pids = [int(pid) for pid in args.pids.split(",") if pid]
    server_cpu = client_cpu = 0.0
    try:
        for index in range(args.warmup + args.updates):
            if state.errors:
                break
            state.recording = index >= args.warmup
            if index == args.warmup:
                server_cpu, client_cpu = cpu_seconds(pids), time.process_time()
            state.update += 1
            state.waiting = args.listeners
            state.started_ns = time.perf_counter_ns()
            await publish(args.port, args.uri)
            await wait(state, f"update {state.update}")
            if state.recording and not state.errors:
                all_ns.append(time.perf_counter_ns() - state.started_ns)
            await asyncio.sleep(args.pause)
        server_cpu = cpu_seconds(pids) - server_cpu
        client_cpu = time.process_time() - client_cpu
    finally:
        for listener in listeners:
            listener.close()
    missing = sum(1 for listener in listeners if listener.count < state.update)
    return {
        "listeners": args.listeners,
        "updates": len(all_ns),
        "connect_s": connect_s,
        "all_ms": [value / 1e6 for value in all_ns],
        "each_ms": [value / 1e6 for value in state.each_ns],
        "lost": missing,
        "errors": state.errors[:5],
        "server_cpu_s": server_cpu,
        "client_cpu_s": client_cpu,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness.listen")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--listeners", type=int, required=True)
    parser.add_argument("--updates", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--pause", type=float, default=0.01, help="seconds between updates")
    parser.add_argument("--pids", default="", help="the server's processes, comma-separated")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(json.dumps(asyncio.run(measure(args))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
