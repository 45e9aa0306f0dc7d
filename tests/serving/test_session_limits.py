"""Stateful session limits: the total cap (503), the per-client cap (429), GET-stream cap (503).

A closed (DELETE) or expired session frees its place. Servers are real
``mcp-adapter serve --http --stateful`` subprocesses or uvicorn threads on loopback.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx2
import pytest

from mcp_adapter.serving import HttpLimits, http_app
from tests.serving.apps import AuditServer, build_container
from tests.serving.harness import Served, serve_app, serve_http
from tests.serving.rawhttp import SESSION, close_session, open_session, refusal

AUDIT = ["tests.serving.apps:AuditServer", "--container", "tests.serving.apps:build_container"]
MAX_SESSIONS = 2


@pytest.fixture(scope="module")
def capped() -> Iterator[Served]:
    args = [*AUDIT, "--stateful", "--max-sessions", str(MAX_SESSIONS), "--max-sse-streams", "1"]
    with serve_http(args) as served:
        yield served


@pytest.fixture(scope="module")
def per_client() -> Iterator[Served]:
    args = [*AUDIT, "--stateful", "--max-sessions-per-client", "1"]
    args += ["--auth", "tests.serving.apps:StaticVerifier", "--anonymous"]
    with serve_http(args) as served:
        yield served


def test_sessions_over_the_cap_get_503_and_delete_frees_a_place(capped: Served) -> None:
    with httpx2.Client(timeout=10) as http:
        sessions = [open_session(http, capped.url).headers[SESSION] for _ in range(MAX_SESSIONS)]
        refused = open_session(http, capped.url)
        assert refused.status_code == 503
        assert refusal(refused) == "Too many open sessions"
        close_session(http, capped.url, sessions.pop())
        again = open_session(http, capped.url)
        assert again.status_code == 200
        sessions.append(again.headers[SESSION])
        for session in sessions:
            close_session(http, capped.url, session)


def test_get_streams_over_the_cap_get_503(capped: Served) -> None:
    headers = {"Accept": "text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}
    with httpx2.Client(timeout=10) as http:
        first, second = (open_session(http, capped.url).headers[SESSION] for _ in range(2))
        with http.stream("GET", capped.url, headers={**headers, SESSION: first}) as stream:
            assert stream.status_code == 200
            refused = http.get(capped.url, headers={**headers, SESSION: second})
            assert refused.status_code == 503
            assert refusal(refused) == "Too many open SSE streams"
        for session in (first, second):
            close_session(http, capped.url, session)


def test_sessions_per_principal_are_capped(per_client: Served) -> None:
    reader = {"Authorization": "Bearer reader-token"}
    admin = {"Authorization": "Bearer admin-token"}
    with httpx2.Client(timeout=10) as http:
        mine = open_session(http, per_client.url, reader).headers[SESSION]
        refused = open_session(http, per_client.url, reader)
        assert refused.status_code == 429
        assert refusal(refused) == "Too many open sessions for this client"
        other = open_session(http, per_client.url, admin)  # another principal, same address
        assert other.status_code == 200
        close_session(http, per_client.url, mine, reader)
        again = open_session(http, per_client.url, reader)
        assert again.status_code == 200
        close_session(http, per_client.url, again.headers[SESSION], reader)
        close_session(http, per_client.url, other.headers[SESSION], admin)


def _client_from(source: str) -> httpx2.Client:
    return httpx2.Client(timeout=10, transport=httpx2.HTTPTransport(local_address=source))


def test_sessions_per_address_are_capped() -> None:
    limits = HttpLimits(max_sessions_per_client=1)
    app = http_app(AuditServer, build_container(), stateless=False, limits=limits)
    with serve_app(app) as base, _client_from("127.0.0.1") as one, _client_from("127.0.0.2") as two:
        url = f"{base}/mcp"
        first = open_session(one, url)
        assert first.status_code == 200
        assert open_session(one, url).status_code == 429
        assert open_session(two, url).status_code == 200  # another address
        close_session(one, url, first.headers[SESSION])
        assert open_session(one, url).status_code == 200


def test_an_expired_session_frees_its_place() -> None:
    limits = HttpLimits(max_sessions=1, session_idle_timeout=0.5)
    app = http_app(AuditServer, build_container(), stateless=False, limits=limits)
    with serve_app(app) as base, httpx2.Client(timeout=10) as http:
        url = f"{base}/mcp"
        first = open_session(http, url)
        assert first.status_code == 200
        deadline = time.monotonic() + 15
        while (response := open_session(http, url)).status_code == 503:
            assert time.monotonic() < deadline, "the idle session never expired"
            time.sleep(0.2)
        assert response.status_code == 200
        stale = {SESSION: first.headers[SESSION], "Mcp-Protocol-Version": "2025-11-25"}
        assert http.delete(url, headers=stale).status_code == 404
