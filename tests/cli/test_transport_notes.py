"""What a server needs of its transport is known before it serves: a component that needs
the HTTP request is refused over stdio, and ``check`` says where it works and which
services live per session."""

from __future__ import annotations

import httpx2

from tests.serving.harness import run_cli, serve_http

ORIGIN = "tests.serving.http_only:OriginServer"
SESSIONS = [
    "tests.serving.sessions:SessionServer",
    "--container",
    "tests.serving.sessions:build_container",
]


def test_serving_an_http_only_tool_over_stdio_is_refused_before_it_starts() -> None:
    done = run_cli(["serve", ORIGIN])
    assert done.returncode != 0
    first = done.stderr.strip().splitlines()[0]
    assert first.startswith("error: cannot compile tests.serving.http_only:OriginServer")
    assert "tool 'origin' needs the HTTP request" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_the_same_server_works_over_http() -> None:
    with serve_http([ORIGIN]) as served:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "origin", "arguments": {}},
        }
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        }
        answer = httpx2.post(served.url, json=body, headers=headers, timeout=30)
    assert "127.0.0.1" in answer.text


def test_check_notes_http_only_components_and_session_scoped_services() -> None:
    origin = run_cli(["check", ORIGIN])
    assert origin.returncode == 0, origin.stdout + origin.stderr
    assert "note: tool 'origin' needs the HTTP request: it works over HTTP only" in origin.stdout
    sessions = run_cli(["check", *SESSIONS])
    assert sessions.returncode == 0, sessions.stdout + sessions.stderr
    assert "note: session-scoped: Conversation: one per 2025-11-25 session" in sessions.stdout
    assert "ok (1 tool, 0 resources, 0 prompts)" in sessions.stdout
