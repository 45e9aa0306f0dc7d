"""``mcp-adapter worker`` processes beside a test deployment: on its Redis, with its app
and flags, each started as docs/deployment.md shows and waited for (bounded)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tests.replicas.cluster import START_TIMEOUT, Cluster
from tests.serving.harness import CLI, REPO, cli_env, stop

RUNNING = "running its tasks"
"""What a worker prints once its Docket worker runs."""


@dataclass
class Worker:
    name: str
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)

    def said(self, text: str) -> bool:
        return any(text in line for line in self.output)

    def wait(self, timeout: float = START_TIMEOUT) -> int:
        """The exit status, once the process ended (bounded)."""
        return self.process.wait(timeout=timeout)


@dataclass(frozen=True)
class Deployed:
    """What a worker shares with the deployment it works for: the app, the Redis URL, the
    ``serve`` flags (it takes ``--container``) and the environment."""

    app: str
    redis_url: str
    flags: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, deployment: Cluster | Deployed) -> Deployed:
        if isinstance(deployment, Deployed):
            return deployment
        return cls(deployment.app, deployment.redis.url, deployment.flags, deployment.env)


def worker_command(deployment: Cluster | Deployed) -> list[str]:
    deployed = Deployed.of(deployment)
    flags = deployed.flags
    container = [
        flag
        for index, flag in enumerate(flags)
        if flag == "--container" or (index > 0 and flags[index - 1] == "--container")
    ]
    return [*CLI, "worker", deployed.app, "--redis", deployed.redis_url, *container]


@contextmanager
def worker(
    deployment: Cluster | Deployed, name: str, env: dict[str, str] | None = None
) -> Iterator[Worker]:
    """A worker named ``name`` (its ``REPLICA``), yielded once it runs; stopped at the end."""
    process = subprocess.Popen(
        worker_command(deployment),
        cwd=REPO,
        env=cli_env({**Deployed.of(deployment).env, **(env or {}), "REPLICA": name}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    running = Worker(name, process)

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            running.output.append(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not running.said(RUNNING):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the worker did not start:\n" + "".join(running.output))
            time.sleep(0.05)
        yield running
    finally:
        stop(process)
