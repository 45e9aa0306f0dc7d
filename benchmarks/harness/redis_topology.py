"""A Redis Sentinel deployment on 127.0.0.1: one primary, replicas (``--replicaof``) and
three Sentinels (``redis-server --sentinel``) that fail over after
``DOWN_AFTER_MS`` (or ``down_after_ms``) without the primary, each on a free port, no
persistence (or, ``durable``, append-only with ``fsync`` at every write, so a data node
restarted on its port keeps what it acknowledged).

    with sentinel_topology() as topology:
        url = topology.url               # redis+sentinel://127.0.0.1:P1,.../mymaster/0
        topology.failover()              # SENTINEL FAILOVER, until the roles swapped
        topology.switchover()            # the same, planned: writes paused, nothing lost
        topology.kill_primary()          # SIGKILL, until a replica was promoted
        topology.restart_primary()       # SIGKILL, started again on its port (durable)

Every wait is bounded (:class:`TopologyError` names what did not happen) and every
process is stopped when the ``with`` ends. Only ``redis-server`` is needed;
:func:`sentinel_topology` raises :class:`MissingRedis` without it. Talks RESP over a
socket of its own, so it needs no Redis client library.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.harness.processes import HOST, Process, binary, free_port

SERVICE = "mymaster"
DOWN_AFTER_MS = 1000
"""How long the Sentinels wait without an answer from the primary before failing over."""
FAILOVER_TIMEOUT_MS = 5000
QUORUM = 2
TIMEOUT = 60.0
PAUSE_MS = 30_000
"""The longest a planned switchover pauses the old primary's writes (it resumes them as
soon as the old primary follows the new one, a second or two later)."""
"""Seconds at most for any one wait (a start, a failover, a stop)."""

SENTINEL_CONFIG = """\
port {port}
bind {host}
dir {folder}
sentinel resolve-hostnames no
sentinel monitor {service} {host} {primary} {quorum}
sentinel down-after-milliseconds {service} {down_after}
sentinel failover-timeout {service} {failover_timeout}
sentinel parallel-syncs {service} 1
"""


class TopologyError(RuntimeError):
    """A start, failover or stop did not happen within :data:`TIMEOUT`."""


class MissingRedis(TopologyError):
    """``redis-server`` is not installed."""


def command(port: int, *words: str) -> list[str | int | None]:
    """Send one RESP command to 127.0.0.1:``port``; its answer (``OSError`` when
    nothing answers, :class:`TopologyError` for an error reply)."""
    with socket.create_connection((HOST, port), timeout=5) as sock:
        request = f"*{len(words)}\r\n" + "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)
        sock.sendall(request.encode())
        reader = sock.makefile("rb")
        return _flatten(_read(reader))


def _read(reader: object) -> object:
    line: bytes = reader.readline()  # type: ignore[attr-defined]
    if not line:
        raise ConnectionResetError("the connection closed before the answer")
    kind, body = line[:1], line[1:].rstrip(b"\r\n").decode()
    if kind == b"-":
        raise TopologyError(body)
    if kind in (b"+", b":"):
        return body
    if kind == b"$":
        size = int(body)
        return None if size < 0 else reader.read(size + 2)[:-2].decode()  # type: ignore[attr-defined]
    if kind == b"*":
        size = int(body)
        return [] if size < 0 else [_read(reader) for _ in range(size)]
    raise TopologyError(f"unexpected RESP line {line!r}")


def _flatten(value: object) -> list[str | int | None]:
    if isinstance(value, list):
        return [item for part in value for item in _flatten(part)]
    return [value]  # type: ignore[list-item]


def info(port: int, section: str = "replication") -> dict[str, str]:
    """``INFO section`` of the Redis on ``port`` as a mapping."""
    (text,) = command(port, "INFO", section)
    lines = str(text).splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line and not line.startswith("#"))


def role(port: int) -> str | None:
    """``master`` or ``slave`` (``None`` when nothing answers)."""
    try:
        return info(port).get("role")
    except (OSError, TopologyError):
        return None


def wait_until(ready: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    """Poll ``ready()`` (an ``OSError`` or :class:`TopologyError` counts as not yet)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, TopologyError):
            if ready():
                return
        if time.monotonic() > deadline:
            raise TopologyError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.05)


@dataclass
class Node:
    """One ``redis-server`` (a data node or a Sentinel) on its port."""

    port: int
    process: Process | None = None
    command: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


@dataclass
class SentinelTopology:
    """A primary, its replicas and three Sentinels; see the module's docstring."""

    folder: Path
    redis_server: str
    data: list[Node] = field(default_factory=list)
    sentinels: list[Node] = field(default_factory=list)
    service: str = SERVICE
    down_after_ms: int = DOWN_AFTER_MS
    durable: bool = False

    @property
    def url(self) -> str:
        """``redis+sentinel://`` URL naming the three Sentinels, the service, db 0."""
        hosts = ",".join(f"{HOST}:{node.port}" for node in self.sentinels)
        return f"redis+sentinel://{hosts}/{self.service}/0"

    @property
    def sentinel_addresses(self) -> list[tuple[str, int]]:
        return [(HOST, node.port) for node in self.sentinels]

    def primary_address(self) -> tuple[str, int]:
        """The primary the Sentinels report (``SENTINEL GET-MASTER-ADDR-BY-NAME``), as
        the first Sentinel that answers says."""
        for node in self.sentinels:
            with contextlib.suppress(OSError, TopologyError):
                host, port = command(node.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.service)
                return str(host), int(str(port))
        raise TopologyError("no Sentinel answers")

    def replica_addresses(self) -> list[tuple[str, int]]:
        """The data nodes running that are not the reported primary."""
        primary = self.primary_address()
        return [
            (HOST, n.port) for n in self.data if n.process is not None and (HOST, n.port) != primary
        ]

    def start(self) -> None:
        """Start the primary, one replica and three Sentinels; return once the replica
        is in sync and every Sentinel knows the replica and the other Sentinels."""
        primary = self._start_data()
        self.add_replica()
        for _ in range(3):
            node = Node(free_port())
            config = self.folder / f"sentinel-{node.port}.conf"
            config.write_text(
                SENTINEL_CONFIG.format(
                    port=node.port,
                    host=HOST,
                    folder=self.folder,
                    service=self.service,
                    primary=primary.port,
                    quorum=QUORUM,
                    down_after=self.down_after_ms,
                    failover_timeout=FAILOVER_TIMEOUT_MS,
                )
            )
            node.process = Process([self.redis_server, str(config), "--sentinel"], cwd=self.folder)
            self.sentinels.append(node)
        for node in self.sentinels:
            wait_until(
                lambda n=node: self._sentinel_sees_all(n.port), f"Sentinel {node.port} ready"
            )

    def add_replica(self) -> Node:
        """Start one more ``redis-server --replicaof`` the primary; return once in sync."""
        host, port = self.primary_address() if self.sentinels else (HOST, self.data[0].port)
        node = self._start_data("--replicaof", host, str(port))
        wait_until(
            lambda: info(node.port).get("master_link_status") == "up",
            f"replica {node.port} in sync",
        )
        for sentinel in self.sentinels:
            wait_until(
                lambda s=sentinel: self._sentinel_sees_all(s.port),
                f"Sentinel {sentinel.port} seeing replica {node.port}",
            )
        return node

    def wait_replicated(self) -> None:
        """Return once every replica has what the primary acknowledged so far (its
        replication offset): what a failover then cannot lose."""
        port = self.primary_address()[1]
        offset = int(info(port)["master_repl_offset"])
        for _, replica in self.replica_addresses():
            wait_until(
                lambda r=replica: int(info(r).get("slave_repl_offset", -1)) >= offset,
                f"replica {replica} at offset {offset}",
            )

    def failover(self) -> tuple[str, int]:
        """``SENTINEL FAILOVER``: return the new primary once the Sentinels report it,
        it answers as a primary, and the old one serves as its replica."""
        old = self.primary_address()
        command(self.sentinels[0].port, "SENTINEL", "FAILOVER", self.service)
        new = self._wait_for_new_primary(old)
        wait_until(
            lambda: (
                role(old[1]) == "slave"
                and info(old[1]).get("master_port") == str(new[1])
                and info(old[1]).get("master_link_status") == "up"
            ),
            f"the old primary {old[1]} following {new[1]}",
        )
        return new

    def switchover(self) -> tuple[str, int]:
        """A planned failover that loses no acknowledged write (docs/deployment.md, "A
        planned failover"): the primary's writes paused (``CLIENT PAUSE WRITE``), every
        replica at its offset, ``SENTINEL FAILOVER``, the old primary made the new one's
        replica at once (the Sentinels would only get to it ~17 s later, while it took
        writes as a primary), writes resumed. Writes sent to it meanwhile then answer
        ``READONLY`` and clients retry them on the new primary. Returns the new primary."""
        old = self.primary_address()
        command(old[1], "CLIENT", "PAUSE", str(PAUSE_MS), "WRITE")
        try:
            self.wait_replicated()
            command(self.sentinels[0].port, "SENTINEL", "FAILOVER", self.service)
            new = self._wait_for_new_primary(old)
            command(old[1], "REPLICAOF", *map(str, new))
        finally:
            command(old[1], "CLIENT", "UNPAUSE")
        wait_until(
            lambda: (
                info(old[1]).get("master_port") == str(new[1])
                and info(old[1]).get("master_link_status") == "up"
            ),
            f"the old primary {old[1]} following {new[1]}",
        )
        return new

    def primary_node(self) -> Node:
        """The data node the Sentinels report as the primary."""
        port = self.primary_address()[1]
        (node,) = [n for n in self.data if n.port == port]
        return node

    def kill_primary(self, rejoin: bool = False) -> tuple[str, int]:
        """SIGKILL the primary; return the replica the Sentinels promoted, once it
        answers as the primary. The killed node stays down, or, ``rejoin``, is started
        again on its port as a replica of the new primary (back once in sync)."""
        old = self.primary_address()
        node = self.primary_node()
        _kill(node)
        new = self._wait_for_new_primary(old)
        if rejoin:
            self._run(node, "--replicaof", *map(str, new))
            wait_until(
                lambda: info(node.port).get("master_link_status") == "up",
                f"the old primary {node.port} back as a replica of {new[1]}",
            )
        return new

    def restart_primary(self) -> Node:
        """SIGKILL the primary and start it again on its port, still the primary (the
        Sentinels' ``down_after_ms`` must be longer than the restart, and the topology
        ``durable`` for it to keep its data); return it once it answers as the primary."""
        node = self.primary_node()
        _kill(node)
        self._run(node)
        wait_until(lambda: role(node.port) == "master", f"redis-server {node.port} restarted")
        return node

    def stop(self) -> None:
        """Stop every Sentinel, then every data node."""
        for node in [*self.sentinels, *self.data]:
            node.stop()

    def _start_data(self, *argv: str) -> Node:
        node = Node(free_port())
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.durable else []
        node.command = [
            self.redis_server,
            "--port",
            str(node.port),
            "--bind",
            HOST,
            "--save",
            "",
            *(persistence or ["--appendonly", "no"]),
            "--appenddirname",
            f"aof-{node.port}",
            "--dir",
            str(self.folder),
            "--dbfilename",
            f"dump-{node.port}.rdb",
        ]
        self.data.append(node)
        self._run(node, *argv)
        return node

    def _run(self, node: Node, *argv: str) -> None:
        """Start ``node``'s ``redis-server`` with ``argv`` added; return once it answers."""
        node.process = Process([*node.command, *argv], cwd=self.folder)
        wait_until(lambda: role(node.port) is not None, f"redis-server {node.port} answering")

    def _sentinel_sees_all(self, port: int) -> bool:
        primary = command(port, "SENTINEL", "MASTER", self.service)
        fields = dict(zip(primary[::2], primary[1::2], strict=True))
        replicas = int(str(fields.get("num-slaves", 0)))
        others = int(str(fields.get("num-other-sentinels", 0)))
        return replicas >= len(self.data) - 1 and others >= len(self.sentinels) - 1

    def _wait_for_new_primary(self, old: tuple[str, int]) -> tuple[str, int]:
        def promoted() -> bool:
            new = self.primary_address()
            return new != old and role(new[1]) == "master"

        wait_until(promoted, f"a replica promoted in place of {old[1]}")
        return self.primary_address()


def _kill(node: Node) -> None:
    """SIGKILL ``node``'s ``redis-server`` and wait for it."""
    assert node.process is not None
    node.process.popen.send_signal(signal.SIGKILL)
    node.process.popen.wait(timeout=TIMEOUT)
    node.stop()


@contextlib.contextmanager
def sentinel_topology(
    replicas: int = 1, *, down_after_ms: int = DOWN_AFTER_MS, durable: bool = False
) -> Iterator[SentinelTopology]:
    """A started :class:`SentinelTopology` (``replicas`` replicas) in a temporary folder,
    stopped when the ``with`` ends."""
    redis_server = binary("redis-server")
    if redis_server is None:
        raise MissingRedis("redis-server is not installed (apt-get install redis-server)")
    with tempfile.TemporaryDirectory() as folder:
        topology = SentinelTopology(
            Path(folder), redis_server, down_after_ms=down_after_ms, durable=durable
        )
        try:
            topology.start()
            for _ in range(replicas - 1):
                topology.add_replica()
            yield topology
        finally:
            topology.stop()
