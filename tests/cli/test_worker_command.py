"""``mcp-adapter worker`` and ``serve --enqueue-only`` refuse, in one line, what cannot
work: no Redis to share, nothing to run. (Running workers: tests/replicas.)"""

from __future__ import annotations

from typing import Any

import pytest

from container import Container
from mcp_adapter import Server, Tasks
from mcp_adapter.cli import build_parser, main
from mcp_adapter.cli.serve import load_catalog
from mcp_adapter.cli.settings import options_of
from mcp_adapter.cli.task_settings import deployed_tasks
from mcp_adapter.errors import CompileError
from mcp_adapter.serving import catalog_of
from tests.tasks.fixtures import Echo

TASKS = "tests.replicas.task_app:TaskReplicaServer"
PLAIN = "tests.replicas.app:ReplicaServer"


def _errors(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.splitlines()


@pytest.mark.usefixtures("in_root")
def test_a_worker_without_redis_says_it_needs_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["worker", TASKS]) == 2
    error, hint = _errors(capsys)
    assert (
        error
        == "error: a worker needs Redis: without --redis the tasks stay in each serving process"
    )
    assert hint.startswith("hint: give --redis redis://HOST:PORT/DB")


@pytest.mark.usefixtures("in_root")
def test_a_worker_on_memory_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["worker", TASKS, "--redis", "memory://"]) == 2
    error, _ = _errors(capsys)
    assert error.startswith("error: --redis: a Redis URL starts with redis://")


@pytest.mark.usefixtures("in_root")
def test_a_worker_of_a_server_without_task_tools_has_nothing_to_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_ADAPTER_PORT", "not a port")  # serve's: a worker does not read it
    assert main(["worker", PLAIN]) == 2
    error, _ = _errors(capsys)
    assert (
        error == f"error: {PLAIN} has no tool that may run as a task: a worker has nothing to run"
    )


@pytest.mark.usefixtures("in_root")
def test_enqueue_only_without_redis_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", TASKS, "--http", "--port", "0", "--enqueue-only"]) == 2
    error, hint = _errors(capsys)
    assert error.startswith("error: --enqueue-only leaves the tasks to `mcp-adapter worker`")
    assert hint.startswith("hint: add --redis")


@pytest.mark.usefixtures("in_root")
def test_several_workers_with_tasks_in_memory_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each ``--workers`` process would keep its own memory:// tasks: a ``tasks/get`` that
    reaches another worker than the call would answer that the task does not exist."""
    assert main(["serve", TASKS, "--http", "--port", "0", "--workers", "2"]) == 2
    error, hint = _errors(capsys)
    assert error.startswith("error: --workers 2 serves from 2 processes, and memory:// tasks")
    assert hint.startswith("hint: add --redis redis://HOST:PORT/DB")


@pytest.mark.usefixtures("in_root")
def test_several_workers_share_tasks_in_redis_and_a_server_without_tasks_is_unaffected() -> None:
    def catalog_of_serve(*args: str) -> Any:
        parsed = build_parser().parse_args(["serve", *args, "--http", "--workers", "2"])
        return load_catalog(options_of(parsed, {}))[0]

    shared = catalog_of_serve(TASKS, "--redis", "redis://cache:6379/0").tasks
    assert (shared.url, shared.worker) == ("redis://cache:6379/0", True)
    assert catalog_of_serve(PLAIN).tasks is None


def test_the_help_says_what_a_stop_signal_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["worker", "--help"])
    assert "SIGTERM" in " ".join(capsys.readouterr().out.split())


def test_a_server_that_runs_no_worker_needs_a_redis_url() -> None:
    class EnqueuesOnly(Server):
        tools = (Echo,)
        tasks = Tasks(worker=False)

    with pytest.raises(CompileError) as failed:
        catalog_of(EnqueuesOnly, Container())
    (problem,) = failed.value.problems
    assert "worker=False" in problem.render()

    class OnRedis(Server):
        tools = (Echo,)
        tasks = Tasks(url="redis://127.0.0.1:6379/0", worker=False)

    assert catalog_of(OnRedis, Container()).tasks == OnRedis.tasks


@pytest.mark.usefixtures("in_root")
def test_redis_holds_the_tasks_under_the_deployments_prefix() -> None:
    def tasks_of(*args: str) -> Tasks | None:
        parsed = build_parser().parse_args(["serve", TASKS, "--http", *args])
        return load_catalog(options_of(parsed, {}))[0].tasks

    alone = tasks_of()
    assert alone is not None
    assert (alone.url, alone.name, alone.worker) == ("memory://", None, True)
    shared = tasks_of("--redis", "redis://cache:6379/0", "--redis-prefix", "notes-prod")
    assert shared is not None
    assert (shared.url, shared.name) == ("redis://cache:6379/0", "notes-prod:task-replicas:tasks")
    default = tasks_of("--redis", "redis://cache:6379/0", "--enqueue-only")
    assert default is not None
    assert (default.name, default.worker) == ("mcp_adapter:task-replicas:tasks", False)


def test_a_redis_of_the_servers_own_keeps_its_tasks() -> None:
    class OwnRedis(Server):
        name = "own"
        tools = (Echo,)
        tasks = Tasks(url="redis://tasks:6379/2")

    catalog = catalog_of(OwnRedis, Container())
    deployed = deployed_tasks(catalog, "redis://cache:6379/0", "p", worker=False)
    assert deployed.tasks == Tasks(url="redis://tasks:6379/2", worker=False)
