"""The deployment the chaos run attacks, all on 127.0.0.1 in one temporary folder: Redis
behind Sentinel (:func:`~benchmarks.harness.redis_topology.sentinel_topology`: a primary,
a replica, three Sentinels, every data node append-only so a restart keeps the tasks;
the processes reach it by its ``redis+sentinel://`` URL), or, ``sentinel=False``, one
append-only ``redis-server``; a ledger ``redis-server`` the run owns and never faults;
three ``mcp-adapter serve --redis --stateful --enqueue-only`` replicas behind ``haproxy``
(with Sentinel, ``--redis-wait-replicas 1``: an answered round is kept only once the
replica holds it, so a failover cannot bring it back to be replayed)
(round robin; a 2025-11-25 session keeps to its replica by ``Mcp-Session-Id``), and two
``mcp-adapter worker`` processes that run the task bodies.

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
from benchmarks.harness.redis_topology import SentinelTopology, sentinel_topology
from mcp_adapter.cli.settings import KEYS_ENV

APP = "benchmarks.chaos.app:ChaosServer"
CONTAINER = "benchmarks.chaos.app:build_container"
VERIFIER = "benchmarks.chaos.app:ChaosVerifier"
STATE_KEY = "c" * 64
START_TIMEOUT = 90.0
DOWN_AFTER_MS = 5000
"""The Sentinels' ``down-after-milliseconds``: longer than a stall of the primary
(``faults.STALL``) and its restart, so neither fails over; a killed primary is replaced
this long after."""


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
    redis: Member | None
    """The one ``redis-server`` without Sentinel; ``None`` with it (``topology``)."""
    topology: SentinelTopology | None
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
        if self.topology is not None:
            return self.topology.url
        assert self.redis is not None
        return f"redis://{HOST}:{self.redis.port}/0"

    def processes(self) -> dict[str, int | None]:
        """Every process by name (Redis's data nodes and Sentinels by port)."""
        found = {member.name: member.pid() for member in self.members}
        if self.topology is not None:
            topology = self.topology
            for kind, nodes in (("redis", topology.data), ("sentinel", topology.sentinels)):
                for node in nodes:
                    found[f"{kind}:{node.port}"] = node.process and node.process.pid
        return found

    def redis_pid(self) -> int | None:
        """The pid of the ``redis-server`` the processes write to (the primary)."""
        if self.topology is None:
            assert self.redis is not None
            return self.redis.pid()
        process = self.topology.primary_node().process
        return None if process is None else process.pid

    def restart_redis(self) -> None:
        """SIGKILL of the (primary) ``redis-server``, started again on its port."""
        if self.topology is not None:
            self.topology.restart_primary()
            return
        assert self.redis is not None
        self.redis.kill()
        self.redis.restarts += 1
        self.start_redis()

    @property
    def ledger_url(self) -> str:
        return f"redis://{HOST}:{self.ledger.port}/0"

    def replica_url(self, replica: Member) -> str:
        return f"http://{HOST}:{replica.port}/mcp"

    def start_redis(self) -> None:
        redis = self.redis
        assert redis is not None
        redis.start()
        redis.wait(lambda: pings(redis.port), "redis-server")

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
def deployed(
    folder: Path, replicas: int = 3, workers: int = 2, *, sentinel: bool = True
) -> Iterator[Deployment]:
    """The whole deployment, started and ready; everything stopped at the end, also on an
    error or Ctrl-C. Processes are started together, then each waited for."""
    redis_binary, haproxy_binary = required("redis-server"), required("haproxy")
    (folder / "ledger").mkdir()
    ledger_port = free_port()
    ledger = Member(
        "ledger", redis_command(redis_binary, ledger_port, folder / "ledger"), port=ledger_port
    )
    redis: Member | None = None
    if not sentinel:
        (folder / "redis").mkdir()
        redis_port = free_port()
        command = redis_command(redis_binary, redis_port, folder / "redis", durable=True)
        redis = Member("redis", command, port=redis_port)
    with contextlib.ExitStack() as stack:
        ledger.start()
        stack.callback(ledger.stop)
        topology = None
        if sentinel:
            running = sentinel_topology(down_after_ms=DOWN_AFTER_MS, durable=True)
            topology = stack.enter_context(running)
        deployment = Deployment(folder, redis, topology, ledger, [], [], ledger)
        yield from _serve(deployment, replicas, workers, haproxy_binary)


def _serve(
    deployment: Deployment, replicas: int, workers: int, haproxy_binary: str
) -> Iterator[Deployment]:
    """The replicas, workers and haproxy on ``deployment``'s Redis, started and ready."""
    ledger = deployment.ledger
    ledger_url = deployment.ledger_url
    target = [APP, "--container", CONTAINER, "--redis", deployment.redis_url]
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
            *(["--redis-wait-replicas", "1"] if deployment.topology is not None else []),
        ]
    working = [
        Member(f"w{n + 1}", [*cli(), "worker", *target], _member_env(f"w{n + 1}", ledger_url))
        for n in range(workers)
    ]
    balancer_port = free_port()
    config = deployment.folder / "haproxy.cfg"
    config.write_text(
        haproxy_config(balancer_port, [(r.name, r.port) for r in serving], sticky=True)
    )
    balancer = Member("haproxy", [haproxy_binary, "-f", str(config), "-db"], port=balancer_port)
    deployment.replicas, deployment.workers, deployment.balancer = serving, working, balancer
    redis = [] if deployment.redis is None else [deployment.redis]
    deployment.members = [*redis, ledger, *serving, *working, balancer]
    try:
        if deployment.redis is not None:
            deployment.start_redis()
        ledger.wait(lambda: pings(ledger.port), "ledger redis-server")
        for member in [*serving, *working, balancer]:
            member.start()
        for replica in serving:
            replica.wait(lambda r=replica: ready(r.port), f"replica {replica.name}")  # type: ignore[misc]
        for worker in working:
            worker.wait(lambda w=worker: "running its tasks" in w.output(), f"worker {worker.name}")  # type: ignore[misc]
        balancer.wait(lambda: ready(balancer.port), "haproxy forwarding")
        yield deployment
    finally:
        deployment.close()
