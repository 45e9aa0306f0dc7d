"""Turning Redis on, without a Redis running: ``serve``'s one-line refusal, the settings'
checks, and ``/healthz`` and ``/readyz`` of an app whose Redis does not answer."""

from __future__ import annotations

import httpx2
import pytest

from container import Container
from mcp_adapter import BearerAuth, http_app
from mcp_adapter.cli import build_parser
from mcp_adapter.cli.serve import redis_of
from mcp_adapter.cli.settings import options_of
from mcp_adapter.serving.replicas import Readiness
from tests.notifications.apps import NoteVerifier
from tests.replicas.app import ReplicaServer
from tests.replicas.cluster import APP, free_port
from tests.serving.harness import run_cli, serve_app


def _unreachable() -> str:
    return f"redis://:hunter2@127.0.0.1:{free_port()}/0"  # nothing listens there


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_serve_says_in_one_line_that_redis_cannot_be_reached(how: str) -> None:
    url = _unreachable()
    args = ["serve", APP, "--http", "--port", "0"]
    if how == "flag":
        done = run_cli([*args, "--redis", url])
    else:
        done = run_cli(args, {"MCP_ADAPTER_REDIS_URL": url})
    assert done.returncode == 1
    error, hint = done.stderr.strip().splitlines()
    shown = url.replace("hunter2", "***")
    assert error.startswith(f"error: cannot reach Redis at {shown}: ")
    assert "connecting to 127.0.0.1" in error
    assert hint.startswith("hint: start Redis there, or serve without --redis")
    assert "hunter2" not in done.stderr + done.stdout


def test_a_prefix_needs_redis_and_a_url_is_a_redis_one() -> None:
    done = run_cli(["serve", APP, "--redis-prefix", "notes"])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "error: --redis-prefix needs --redis redis://HOST:PORT/DB"
    done = run_cli(["serve", APP, "--redis-wait-replicas", "1"])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "error: --redis-wait-replicas needs --redis redis://HOST:PORT/DB"
    )
    done = run_cli(["serve", APP, "--redis", "http://u:hunter2@cache:6379"])
    assert done.returncode == 2
    assert (
        "a Redis URL starts with redis://, rediss://, unix:// or redis+sentinel://" in done.stderr
    )
    assert "hunter2" not in done.stderr


def test_health_and_readiness_need_no_token_and_the_endpoint_still_does() -> None:
    app = http_app(ReplicaServer, Container(), auth=BearerAuth(NoteVerifier()))
    with serve_app(app) as base:
        assert httpx2.get(f"{base}/healthz").json() == {"status": "ok"}
        ready = httpx2.get(f"{base}/readyz")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
        refused = httpx2.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401


def test_without_its_redis_an_app_serves_but_is_not_ready() -> None:
    app = http_app(ReplicaServer, Container(), redis=_unreachable())
    with serve_app(app) as base:
        assert httpx2.get(f"{base}/healthz").status_code == 200
        ready = httpx2.get(f"{base}/readyz", timeout=30)
        assert ready.status_code == 503
        assert ready.json() == {"status": "not ready", "reason": "redis unreachable"}


@pytest.mark.anyio
async def test_a_replica_is_not_ready_before_its_lifespan_started() -> None:
    assert await Readiness().problem() == "not started"


def test_the_replicas_an_answered_round_waits_for_reach_its_record() -> None:
    url = ["--redis", "redis://127.0.0.1:1/0"]  # nothing connects: the settings only
    options = options_of(build_parser().parse_args(["serve", APP, *url]), {})
    shared = redis_of(options)
    assert shared is not None
    assert shared.rounds().wait_replicas == 0
    flags = ["serve", APP, *url, "--redis-wait-replicas", "2"]
    shared = redis_of(options_of(build_parser().parse_args(flags), {}))
    assert shared is not None
    assert (shared.wait_replicas, shared.rounds().wait_replicas) == (2, 2)
    done = run_cli(["serve", APP, *url, "--redis-wait-replicas", "-1"])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "error: --redis-wait-replicas -1 is not a number of replicas (0 or more)"
    )
    assert "Traceback" not in done.stderr
