"""Stateless ``tools/call`` through haproxy to 1, 2 and 3 ``mcp-adapter serve --redis`` replicas.

``python -m benchmarks.replicas [--rounds 5] [--duration 5] [--connections 32]``
starts one ``redis-server`` (no persistence), three replicas of the HTTP benchmark's
``add`` server (``--json-response --redis``, one shared request-state key) and three
haproxy processes, balancing round-robin over the first 1, 2 and 3 replicas; then,
round after round and in an order that alternates, drives each balancer (and one
replica directly, for haproxy's own cost) with the load generator for
``--duration`` seconds after a warm-up, every answer checked. It prints a Markdown
table: medians over the rounds of requests per second and latency, and each
setup's ratio to one replica. Everything listens on 127.0.0.1 and stops at the end.

A stateless call touches no Redis (its state, when it asks for input, is sealed
into ``requestState``): what the table shows is how far replicas spread CPU, which
on a machine with fewer cores than replicas, balancer and load generator is not far.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

from benchmarks.harness import load
from benchmarks.harness.processes import HOST, binary, free_port, redis_server, started, wait_until
from benchmarks.workloads.http import BODY, EXPECT, HEADERS, PATH

KEY = "b" * 64
HAPROXY = """\
global
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend mcp
    bind {host}:{port}
    default_backend replicas
backend replicas
    balance roundrobin
{servers}
"""


def ready(port: int) -> bool:
    """Whether ``/readyz`` on ``port`` answers 200 (``OSError`` while nothing listens)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=5)
    try:
        connection.request("GET", "/readyz")
        return connection.getresponse().status == 200
    finally:
        connection.close()


@contextmanager
def deployment(folder: Path) -> Iterator[dict[str, tuple[int, list[int]]]]:
    """Redis, three replicas, and balancers over 1, 2, 3 of them: setup -> (port, pids)."""
    haproxy = binary("haproxy")
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server())
        if redis is None or haproxy is None:
            raise SystemExit(
                "redis-server or haproxy not found: apt-get install redis-server haproxy"
            )
        replicas: list[tuple[int, int]] = []
        for _ in range(3):
            port = free_port()
            command = [sys.executable, "-m", "mcp_adapter.cli", "serve"]
            command += ["benchmarks.workloads.adapter:AddServer", "--container"]
            command += ["benchmarks.workloads.adapter:services", "--http", "--port", str(port)]
            command += ["--json-response", "--redis", redis, "--request-state-key", KEY]
            replicas.append((port, stack.enter_context(started(command)).pid))
        for port, _ in replicas:
            wait_until(partial(ready, port), f"the replica on port {port}")
        setups = {"1 replica, direct (no haproxy)": (replicas[0][0], [replicas[0][1]])}
        for count in (1, 2, 3):
            port = free_port()
            servers = "\n".join(
                f"    server r{n} {HOST}:{p}" for n, (p, _) in enumerate(replicas[:count])
            )
            config = folder / f"haproxy{count}.cfg"
            config.write_text(HAPROXY.format(host=HOST, port=port, servers=servers))
            balancer = stack.enter_context(started([haproxy, "-f", str(config), "-db"]))
            wait_until(partial(ready, port), f"haproxy over {count}")
            pids = [pid for _, pid in replicas[:count]] + [balancer.pid]
            setups[f"haproxy, {count} replica{'s' if count > 1 else ''}"] = (port, pids)
        yield setups


def measure(rounds: int, duration: float, warmup: float, connections: int) -> str:
    with tempfile.TemporaryDirectory() as folder, deployment(Path(folder)) as setups:
        figures: dict[str, list[dict[str, float]]] = {name: [] for name in setups}
        names = list(setups)
        for round_ in range(rounds):
            order = names if round_ % 2 == 0 else names[::-1]
            for name in order:
                port, pids = setups[name]
                request = load.request_bytes(port, PATH, BODY, HEADERS)
                result = asyncio.run(
                    load.run(
                        port,
                        request,
                        expect=EXPECT.encode(),
                        connections=connections,
                        warmup=warmup,
                        duration=duration,
                        pids=pids,
                    )
                )
                if result["errors"]:
                    raise SystemExit(
                        f"{name}: {result['errors']} errors, e.g. {result['error_sample']}"
                    )
                figures[name].append(result)
                print(
                    f"[replicas] round {round_ + 1} {name}: {result['rps']:.0f} rps",
                    file=sys.stderr,
                    flush=True,
                )
    return table(figures, rounds, duration, connections)


def table(
    figures: dict[str, list[dict[str, float]]], rounds: int, duration: float, connections: int
) -> str:
    def median(name: str, key: str) -> float:
        return statistics.median(result[key] for result in figures[name])

    one = median("haproxy, 1 replica", "rps")
    lines = [
        f"Stateless `tools/call` (2026-07-28, JSON answers), {connections} keep-alive "
        f"connections, {rounds} rounds of {duration:g} s each, medians; "
        f"{os.cpu_count()} cores.",
        "",
        "| setup | requests/s | p50 ms | p99 ms | vs haproxy, 1 replica | busy cores |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in figures:
        rps = median(name, "rps")
        lines.append(
            f"| {name} | {rps:.0f} | {median(name, 'p50_ms'):.2f} | "
            f"{median(name, 'p99_ms'):.2f} | {rps / one:.2f}x | "
            f"{median(name, 'machine_busy_cores'):.2f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replicas")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args(argv)
    print(measure(args.rounds, args.duration, args.warmup, args.connections))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
