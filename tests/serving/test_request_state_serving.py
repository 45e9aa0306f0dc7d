"""Request-state keys as operators set them, and input requests where no back-channel exists.

Two ``mcp-adapter serve`` processes given the same key (flag or environment)
accept each other's ``requestState``, as replicas behind a load balancer must;
with other keys they refuse it. A 2025-11-25 call that needs input on a
transport that cannot carry the server's request says so (``-32600``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from mcp import types

from container import Container
from mcp_adapter.cli.options import ServeOptions
from mcp_adapter.cli.settings import KEYS_ENV
from mcp_adapter.serving import http_app
from tests.reliability.fuzz import LEGACY, MODERN, envelope
from tests.reliability.transports import decoded, http_headers
from tests.serving.asking import AskServer
from tests.serving.harness import run_cli, serve_app, serve_http

ASK = ["tests.serving.asking:AskServer"]
KEY_1 = "1" * 64
KEY_2 = "2" * 64
ELICITATION = {"elicitation": {"form": {}}}


def _call(url: str, era: str, params: dict[str, Any]) -> dict[str, Any]:
    if era == MODERN:
        params = {
            **params,
            "_meta": envelope({"io.modelcontextprotocol/clientCapabilities": ELICITATION}),
        }
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    answer = decoded(httpx2.post(url, content=body, headers=http_headers(body, era), timeout=30))
    assert answer is not None
    return answer


def _ask_then_retry(first_url: str, second_url: str) -> dict[str, Any]:
    first = _call(first_url, MODERN, {"name": "ask", "arguments": {}})
    state = first["result"]["requestState"]
    retry = {
        "name": "ask",
        "arguments": {},
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": state,
    }
    return _call(second_url, MODERN, retry)


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_two_processes_with_one_key_accept_each_others_state(how: str) -> None:
    args = [*ASK, "--request-state-key", KEY_1] if how == "flag" else ASK
    env = {KEYS_ENV: f"{KEY_1},{KEY_2}"} if how == "environment" else None
    with serve_http(args, env) as one, serve_http(args, env) as two:
        answer = _ask_then_retry(one.url, two.url)
    assert answer["result"]["content"][0]["text"] == "accept asked"


def test_a_rotated_ring_accepts_state_sealed_under_the_old_key() -> None:
    with (
        serve_http([*ASK, "--request-state-key", KEY_1]) as old,
        serve_http([*ASK, "--request-state-key", KEY_2, "--request-state-key", KEY_1]) as new,
    ):
        answer = _ask_then_retry(old.url, new.url)
    assert answer["result"]["content"][0]["text"] == "accept asked"


@pytest.mark.parametrize("second", [["--request-state-key", KEY_2], []], ids=["other-key", "none"])
def test_processes_with_other_keys_refuse_each_others_state(second: list[str]) -> None:
    with (
        serve_http([*ASK, "--request-state-key", KEY_1]) as one,
        serve_http([*ASK, *second]) as two,
    ):
        answer = _ask_then_retry(one.url, two.url)
    assert answer["error"]["code"] == types.INVALID_PARAMS
    assert answer["error"]["message"] == "Invalid or expired requestState"


def test_a_short_key_is_refused_before_serving() -> None:
    done = run_cli(["serve", *ASK, "--http", "--port", "0", "--request-state-key", "short"])
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("warning: --request-state-key on the command line is visible")
    assert lines[1].startswith("error: --request-state-key: request-state keys must be at least 32")
    assert "short" not in done.stderr  # a secret, even a bad one, is not echoed
    assert "Traceback" not in done.stderr


def test_workers_without_a_key_share_one_made_at_start() -> None:
    from mcp_adapter.cli import build_parser
    from mcp_adapter.cli.serve import options_of

    args = build_parser().parse_args(["serve", *ASK, "--http", "--workers", "2"])
    options = options_of(args)
    (key,) = options.request_state_keys
    assert len(key) >= 32
    assert ServeOptions.from_env({"MCP_ADAPTER_SERVE": options.to_env()}).request_state_keys == (
        key,
    )
    assert key not in repr(options)
    single = options_of(build_parser().parse_args(["serve", *ASK, "--http"]))
    assert single.request_state_keys == ()  # one process: the SDK's ephemeral key


# -- no back-channel on 2025-11-25 ----------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{"stateless": True}, {"stateless": True, "json_response": True}],
    ids=["sse", "json"],
)
@pytest.mark.parametrize("tool", ["ask", "ask_resolved"])
def test_2025_input_on_stateless_http_says_there_is_no_back_channel(
    options: dict[str, Any], tool: str
) -> None:
    with serve_app(http_app(AskServer, Container(), **options)) as base:
        answer = _call(f"{base}/mcp", LEGACY, {"name": tool, "arguments": {}})
    assert answer["error"]["code"] == types.INVALID_REQUEST
    assert (
        "back-channel" in answer["error"]["message"] or "cannot send" in answer["error"]["message"]
    )


# -- each round answered once ---------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "done"), [("ask", "accept asked"), ("ask_resolved", "ok=True")])
def test_a_retry_sent_again_over_http_is_refused(tool: str, done: str) -> None:
    """2026-07-28 over real HTTP: the retry that answered is taken once; the same retry
    again (same state, arguments and answers) is the forged state's ``-32602``."""
    with serve_http(ASK) as served:
        first = _call(served.url, MODERN, {"name": tool, "arguments": {}})["result"]
        yes = {"action": "accept", "content": {"ok": True}}
        answers = dict.fromkeys(first["inputRequests"], yes)
        retry = {
            "name": tool,
            "arguments": {},
            "inputResponses": answers,
            "requestState": first["requestState"],
        }
        assert _call(served.url, MODERN, retry)["result"]["content"][0]["text"] == done
        again = _call(served.url, MODERN, retry)
    assert again["error"] == {
        "code": types.INVALID_PARAMS,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"},
    }
