"""The deployment the chaos run attacks, all on 127.0.0.1 in one temporary folder:
``redis-server`` (append-only, so a restart keeps the tasks), a ledger ``redis-server`` the
run owns and never faults, three ``mcp-adapter serve --redis --stateful --enqueue-only``
replicas behind ``haproxy`` (round robin; a 2025-11-25 session keeps to its replica by
``Mcp-Session-Id``), and two ``mcp-adapter worker`` processes that run the task bodies.

Every process is a :class:`~benchmarks.harness.processes.Process` (a session of its own,
dies with the run); every wait is bounded; :meth:`Deployment.close` stops them all.
The haproxy configuration and Redis command line are :mod:`benchmarks.harness.cluster`'s,
the ones the replica tests (``tests/replicas/cluster.py``) deploy too.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.harness.cluster import haproxy_config, redis_command
from benchmarks.harness.processes import HOST, Process, binary, free_port, wait_until
from mcp_adapter.cli.settings import KEYS_ENV

APP = "benchmarks.chaos.app:ChaosServer"
CONTAINER = "benchmarks.chaos.app:build_container"
VERIFIER = "benchmarks.chaos.app:ChaosVerifier"
STATE_KEY = "c" * 64
START_TIMEOUT = 90.0


def cli() -> list[str]:
    script = Path(sys.executable).with_name("mcp-adapter")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "mcp_adapter.cli"]


def required(name: str) -> str:
    found = binary(name)
    if found is None:
        raise SystemExit(f"{name} not found: apt-get install {name}")
    return found


def ready(port: int) -> bool:
    """Whether ``GET /readyz`` on ``port`` answers 200 (False when nothing answers)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=5)
    try:
        connection.request("GET", "/readyz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def pings(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class Member:
    """One process of the deployment, restartable on the same port and command."""

    name: str
    command: list[str]
    env: dict[str, str] | None = None
    port: int = 0
    process: Process | None = None
    restarts: int = 0

    def start(self) -> None:
        self.process = Process(self.command, env=self.env)

    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def kill(self) -> None:
        """SIGKILL, the process and anything it started."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.popen.wait(timeout=15)
            self.process.stop()
            self.process = None

    def signal(self, number: int) -> None:
        if self.process is not None:
            os.kill(self.process.pid, number)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def output(self) -> str:
        return "" if self.process is None else self.process.output()

    def wait(self, check: Callable[[], bool], what: str) -> None:
        """``check()`` true within ``START_TIMEOUT``, or exit with what the process said."""
        try:
            wait_until(check, what, START_TIMEOUT)
        except SystemExit as exc:
            raise SystemExit(f"{exc}\n{self.output()}") from None


@dataclass
class Deployment:
    folder: Path
    redis: Member
    ledger: Member
    replicas: list[Member]
    workers: list[Member]
    balancer: Member
    members: list[Member] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.balancer.port}/mcp"

    @property
    def redis_url(self) -> str:
        return f"redis://{HOST}:{self.redis.port}/0"

    @property
    def ledger_url(self) -> str:
        return f"redis://{HOST}:{self.ledger.port}/0"

    def replica_url(self, replica: Member) -> str:
        return f"http://{HOST}:{replica.port}/mcp"

    def start_redis(self) -> None:
        self.redis.start()
        self.redis.wait(lambda: pings(self.redis.port), "redis-server")

    def start_replica(self, replica: Member) -> None:
        replica.start()
        replica.wait(lambda: ready(replica.port), f"replica {replica.name}")

    def start_worker(self, worker: Member) -> None:
        worker.start()
        worker.wait(lambda: "running its tasks" in worker.output(), f"worker {worker.name}")

    def all_ready(self) -> bool:
        return all(ready(replica.port) for replica in self.replicas)

    def close(self) -> None:
        """SIGTERM to every process at once, then each waited for (``Process.stop``)."""
        for member in self.members:
            if member.process is not None and member.process.exited() is None:
                with contextlib.suppress(ProcessLookupError):
                    member.process.popen.terminate()
        for member in reversed(self.members):
            member.stop()


def _member_env(name: str, ledger: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_ADAPTER_")}
    env.update({"PYTHONUNBUFFERED": "1", "REPLICA": name, "CHAOS_LEDGER": ledger})
    env[KEYS_ENV] = STATE_KEY
    return env


@contextlib.contextmanager
def deployed(folder: Path, replicas: int = 3, workers: int = 2) -> Iterator[Deployment]:
    """The whole deployment, started and ready; everything stopped at the end, also on an
    error or Ctrl-C."""
    redis_binary, haproxy_binary = required("redis-server"), required("haproxy")
    (folder / "redis").mkdir()
    (folder / "ledger").mkdir()
    redis_port, ledger_port = free_port(), free_port()
    redis = Member(
        "redis",
        redis_command(redis_binary, redis_port, folder / "redis", durable=True),
        port=redis_port,
    )
    ledger = Member(
        "ledger", redis_command(redis_binary, ledger_port, folder / "ledger"), port=ledger_port
    )
    redis_url, ledger_url = f"redis://{HOST}:{redis_port}/0", f"redis://{HOST}:{ledger_port}/0"
    target = [APP, "--container", CONTAINER, "--redis", redis_url]
    serving = [
        Member(f"r{n + 1}", [], _member_env(f"r{n + 1}", ledger_url), port=free_port())
        for n in range(replicas)
    ]
    for replica in serving:
        replica.command = [
            *cli(),
            "serve",
            *target,
            "--http",
            "--port",
            str(replica.port),
            "--auth",
            VERIFIER,
            "--stateful",
            "--enqueue-only",
        ]
    working = [
        Member(f"w{n + 1}", [*cli(), "worker", *target], _member_env(f"w{n + 1}", ledger_url))
        for n in range(workers)
    ]
    balancer_port = free_port()
    config = folder / "haproxy.cfg"
    config.write_text(
        haproxy_config(balancer_port, [(r.name, r.port) for r in serving], sticky=True)
    )
    balancer = Member("haproxy", [haproxy_binary, "-f", str(config), "-db"], port=balancer_port)
    deployment = Deployment(folder, redis, ledger, serving, working, balancer)
    deployment.members = [redis, ledger, *serving, *working, balancer]
    try:
        deployment.start_redis()
        ledger.start()
        ledger.wait(lambda: pings(ledger.port), "ledger redis-server")
        for replica in serving:
            replica.start()
        for replica in serving:
            replica.wait(lambda r=replica: ready(r.port), f"replica {replica.name}")  # type: ignore[misc]
        for worker in working:
            deployment.start_worker(worker)
        balancer.start()
        balancer.wait(lambda: ready(balancer.port), "haproxy forwarding")
        yield deployment
    finally:
        deployment.close()
