"""Closed-loop task clients: each starts a task, follows it to ``completed``, starts the next.

``python -m benchmarks.workloads.task_load --port P --tool quick|asks [--clients 16]
[--warmup 1] [--duration 3] [--poll 0.01] [--pids ...] [--store-pids ...]`` prints one
JSON object: tasks completed in the measured window, tasks per second, start-to-
completed latency percentiles, errors, and the CPU time the server's processes
(``--pids``) and the task store's (``--store-pids``, a ``redis-server``) spent in it.

Each client is one keep-alive HTTP/1.1 connection on 127.0.0.1 sending raw 2026-07-28
requests with the exact headers (docs/tasks.md, "Raw HTTP"), one at a time, so the
client costs tens of microseconds per request and is not the bottleneck: ``tools/call``
(the task's handle), then every ``--poll`` seconds ``tasks/get``; a task that is
``input_required`` has each of its questions answered (``accept``, ``confirm: true``)
with one ``tasks/update``, and is followed again until it has completed. Every task
carries its own ``n``, and its result must be exactly the text the tool answers for
it (:func:`benchmarks.workloads.tasks.expected`): a wrong or failed task is an error,
and a run with errors exits non-zero. A task counts toward the window when it
completes within it; its latency runs from the send of its ``tools/call`` to the
answer of the ``tasks/get`` that saw it completed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.processes import HOST, cpu_seconds
from benchmarks.workloads.tasks import PATH, expected

PROTOCOL = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-adapter-task-bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}},
    },
}
ACCEPT = {"action": "accept", "content": {"confirm": True}}
MAX_POLLS = 10_000
"""A task still not completed after this many polls is an error (bounded loops)."""


class Failed(Exception):
    """A task that did not complete with its own result."""


def request_bytes(port: int, method: str, name: str, params: dict[str, Any]) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": ENVELOPE}},
        separators=(",", ":"),
    ).encode()
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {PROTOCOL}\r\nMcp-Method: {method}\r\nMcp-Name: {name}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


class Connection:
    """One keep-alive connection, one request at a time; answers as JSON-RPC results."""

    def __init__(self, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.port, self.reader, self.writer = port, reader, writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(HOST, port)
        return cls(port, reader, writer)

    async def send(self, method: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
        self.writer.write(request_bytes(self.port, method, name, params))
        status = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            header, _, value = line.decode("latin-1").partition(":")
            if header.lower() == "content-length":
                length = int(value)
        raw = await self.reader.readexactly(length)
        if not status.startswith(b"HTTP/1.1 200"):
            raise Failed(f"{method}: {status.decode(errors='replace').strip()} {raw[:300]!r}")
        message: dict[str, Any] = json.loads(raw)
        if "result" not in message:
            raise Failed(f"{method}: {str(message)[:300]}")
        result: dict[str, Any] = message["result"]
        return result

    def close(self) -> None:
        self.writer.close()


async def one_task(connection: Connection, tool: str, n: int, poll: float) -> None:
    """Start a task of ``tool`` and follow it to ``completed`` with its own result."""
    handle = await connection.send("tools/call", tool, {"name": tool, "arguments": {"n": n}})
    task_id = handle.get("taskId")
    if handle.get("resultType") != "task" or not isinstance(task_id, str):
        raise Failed(f"tools/call {tool} did not answer a task's handle: {str(handle)[:300]}")
    on_task = {"taskId": task_id}
    for _ in range(MAX_POLLS):
        await asyncio.sleep(poll)
        state = await connection.send("tasks/get", task_id, on_task)
        status = state.get("status")
        if status == "completed":
            content = (state.get("result") or {}).get("content") or [{}]
            if content[0].get("text") != expected(tool, n):
                raise Failed(f"task {n} of {tool} answered {str(state.get('result'))[:300]}")
            return
        if status == "input_required":
            answers = dict.fromkeys(state.get("inputRequests") or {}, ACCEPT)
            await connection.send("tasks/update", task_id, {**on_task, "inputResponses": answers})
        elif status != "working":
            raise Failed(f"task {n} of {tool} ended {status}: {str(state)[:300]}")
    raise Failed(f"task {n} of {tool} did not complete after {MAX_POLLS} polls")


@dataclass
class Window:
    start: float = 0.0
    end: float = float("inf")
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def client(port: int, tool: str, poll: float, numbers: Any, window: Window) -> None:
    connection = await Connection.open(port)
    try:
        while time.perf_counter() < window.end:
            started = time.perf_counter()
            try:
                await one_task(connection, tool, next(numbers), poll)
            except Failed as failed:
                window.errors.append(str(failed))
                return
            done = time.perf_counter()
            if window.start <= done < window.end:
                window.latencies.append(done - started)
    finally:
        connection.close()


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    window = Window()
    numbers = itertools.count(1)
    began = time.perf_counter()
    window.start = began + args.warmup
    window.end = window.start + args.duration
    clients = [
        asyncio.create_task(client(args.port, args.tool, args.poll, numbers, window))
        for _ in range(args.clients)
    ]
    await asyncio.sleep(max(0.0, window.start - time.perf_counter()))
    server, store = cpu_seconds(args.pids), cpu_seconds(args.store_pids)
    ours = time.process_time()
    await asyncio.sleep(max(0.0, window.end - time.perf_counter()))
    server, store = cpu_seconds(args.pids) - server, cpu_seconds(args.store_pids) - store
    ours = time.process_time() - ours
    await asyncio.gather(*clients)
    done = len(window.latencies)
    if not done and not window.errors:
        window.errors.append(f"no task completed within the {args.duration:g} s window")
    per_task = 1e6 / done if done else 0.0
    return {
        "completed": done,
        "tasks_per_s": done / args.duration,
        "p50_ms": percentile(window.latencies, 0.50) * 1000,
        "p99_ms": percentile(window.latencies, 0.99) * 1000,
        "server_cpu_us": server * per_task,
        "store_cpu_us": store * per_task,
        "client_cpu_us": ours * per_task,
        "errors": len(window.errors),
        "error_sample": window.errors[0] if window.errors else "",
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads.task_load")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--poll", type=float, default=0.01, help="seconds between tasks/get")
    parser.add_argument("--pids", type=int, nargs="*", default=[])
    parser.add_argument("--store-pids", type=int, nargs="*", default=[])
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    figures = asyncio.run(measure(args))
    print(json.dumps(figures))
    return 1 if figures["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
