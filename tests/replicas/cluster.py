"""A real deployment on 127.0.0.1: ``redis-server``, N ``mcp-adapter serve --redis`` replicas
and ``haproxy`` balancing them round-robin, each a subprocess in a temporary folder.

Every wait is bounded; ports are picked free by the OS just before each process binds.
The commands are the ones docs/deployment.md shows.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from benchmarks.harness.cluster import haproxy_config, redis_command

from mcp_adapter.cli.settings import KEYS_ENV
from tests import needs
from tests.serving.harness import CLI, STOP_TIMEOUT, Served, serve_process, stop

START_TIMEOUT = 60.0
APP = "tests.replicas.app:ReplicaServer"
VERIFIER = "tests.notifications.apps:NoteVerifier"
KEY_1 = "1" * 64
KEY_2 = "2" * 64


def binary(name: str, package: str) -> str:
    """``name``'s path: on ``PATH``, else in ``/usr/sbin`` (Debian's haproxy, where a user's
    ``PATH`` does not look); else skipped or failed (``tests.needs``)."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    return found or needs.command(name, f"apt-get install -y {package}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(check: object, what: str, timeout: float = START_TIMEOUT) -> None:
    """Poll ``check()`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.05)


@dataclass
class Redis:
    """``redis-server`` on a free port, no persistence, in ``folder``; can stop and start."""

    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            redis_command(binary("redis-server", "redis-server"), self.port, self.folder),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, "redis-server answering PING")

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)  # type: ignore[arg-type]
            self.process = None


@dataclass
class Replica:
    name: str
    port: int
    served: Served | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def ready(self) -> int:
        """The status ``GET /readyz`` answers (0 when nothing answers)."""
        try:
            return httpx2.get(f"http://127.0.0.1:{self.port}/readyz", timeout=5).status_code
        except httpx2.HTTPError:
            return 0


@dataclass
class Cluster:
    redis: Redis
    replicas: list[Replica]
    port: int
    keys: tuple[str, ...]
    stateful: bool = False
    app: str = APP
    flags: tuple[str, ...] = ()
    """More ``serve`` flags (``--container``, ``--enqueue-only``), for workers too."""
    env: dict[str, str] = field(default_factory=dict)
    stack: ExitStack = field(default_factory=ExitStack)

    @property
    def url(self) -> str:
        """The balancer's MCP endpoint."""
        return f"http://127.0.0.1:{self.port}/mcp"

    def command(self, replica: Replica) -> list[str]:
        mode = ["--stateful"] if self.stateful else []
        return [
            *CLI,
            "serve",
            self.app,
            "--http",
            "--port",
            str(replica.port),
            "--redis",
            self.redis.url,
            "--auth",
            VERIFIER,
            *mode,
            *self.flags,
        ]

    def start_replicas(self, keys: Sequence[str] | None = None) -> None:
        """(Re)start every replica on its port, all at once, and wait for each to be ready."""
        if keys is not None:
            self.keys = tuple(keys)
        processes = []
        for replica in self.replicas:
            env = {
                **self.env,
                "REPLICA": replica.name,
                "REPLICA_RATE_REDIS": self.redis.url,
                KEYS_ENV: ",".join(self.keys),  # out of the process list
            }
            processes.append(serve_process(self.command(replica), env))
        for replica, process in zip(self.replicas, processes, strict=True):
            replica.served = self.stack.enter_context(process)
        for replica in self.replicas:
            wait_until(lambda r=replica: r.ready() == 200, f"{replica.name} ready")  # type: ignore[misc]

    def stop_replicas(self) -> None:
        for replica in self.replicas:
            if replica.served is not None:
                stop(replica.served.process)
                replica.served = None

    def haproxy_config(self) -> str:
        servers = [(r.name, r.port) for r in self.replicas]
        return haproxy_config(self.port, servers, sticky=self.stateful)


Balancer = Callable[[Path, Cluster], list[str]]
"""Writes a balancer's configuration for a deployment into a folder; answers its command."""


def haproxy(folder: Path, deployment: Cluster) -> list[str]:
    config = folder / "haproxy.cfg"
    config.write_text(deployment.haproxy_config())
    return [binary("haproxy", "haproxy"), "-f", str(config), "-db"]


@contextmanager
def cluster(
    folder: Path,
    count: int = 3,
    *,
    stateful: bool = False,
    app: str = APP,
    flags: Sequence[str] = (),
    env: dict[str, str] | None = None,
    balancer: Balancer = haproxy,
) -> Iterator[Cluster]:
    """Redis, ``count`` replicas of ``app`` and a balancer (haproxy unless told) in front
    of them; all stopped at the end."""
    redis = Redis(folder)
    redis.start()
    replicas = [Replica(f"r{n + 1}", free_port()) for n in range(count)]
    deployment = Cluster(
        redis,
        replicas,
        free_port(),
        (KEY_1,),
        stateful=stateful,
        app=app,
        flags=tuple(flags),
        env=dict(env or {}),
    )
    try:
        with deployment.stack:
            command = balancer(folder, deployment)
            deployment.start_replicas()
            running = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                wait_until(
                    lambda: (
                        running.poll() is None
                        and _answers(f"http://127.0.0.1:{deployment.port}/readyz")
                    ),
                    f"{Path(command[0]).name} forwarding",
                )
                yield deployment
            finally:
                stop(running)  # type: ignore[arg-type]
                deployment.stop_replicas()
    finally:
        redis.stop()


def _answers(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=5).status_code == 200
    except httpx2.HTTPError:
        return False


__all__ = ["KEY_1", "KEY_2", "STOP_TIMEOUT", "Cluster", "cluster", "wait_until"]
