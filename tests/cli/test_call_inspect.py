"""``mcp-adapter call`` and ``inspect`` against the demo: over HTTP (a real ``serve --http``
subprocess, with and without a bearer token), over stdio (``--stdio``: the CLI starts
``serve`` itself) and in process, in both protocol eras; each run as a real process."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from mcp_adapter.cli.calling import ARGUMENTS_HINT, arguments_of
from mcp_adapter.cli.connecting import TOKEN as TOKEN_SETTING
from mcp_adapter.cli.errors import CliError
from tests.serving.harness import Served, run_cli, serve_http

TARGET = "examples.demo.server:DemoServer"
CONTAINER = ["--container", "examples.demo.container:build_container"]
AUTH = ["--auth", "examples.demo.auth:verifier", "--anonymous"]
TOKEN = "call-inspect-token"
ERAS = ["2026-07-28", "2025-11-25"]
TOKEN_ENV = TOKEN_SETTING.env
"""Where these tests put the token: out of the process list (tests/cli/test_secrets.py)."""


@pytest.fixture(scope="module")
def demo() -> Iterator[Served]:
    """README's demo: a token is optional, and ``private-message`` needs one."""
    with serve_http([TARGET, *CONTAINER, *AUTH], {"MCP_DEMO_TOKEN": TOKEN}) as served:
        yield served


def _ok(args: list[str], env: dict[str, str] | None = None) -> str:
    done = run_cli(args, env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _failed(args: list[str], status: int, env: dict[str, str] | None = None) -> list[str]:
    done = run_cli(args, env)
    assert done.returncode == status, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stderr.splitlines()


# -- over HTTP -----------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_call_over_http(demo: Served, era: str) -> None:
    assert _ok(["call", demo.url, "greet", "name=Ada", "--protocol", era]) == "Hello, Ada!\n"
    out = _ok(["call", demo.url, "summarize", "values=[1, 2, 3.5]", "--protocol", era])
    assert json.loads(out) == {"count": 3, "total": 6.5}


def test_call_over_http_with_a_token_reaches_the_private_tool(demo: Served) -> None:
    args = ["call", demo.url, "private-message", "message=hi"]
    assert _ok(args, {TOKEN_ENV: TOKEN}) == "hi\n"
    # anonymous, the tool is hidden: unknown, as the protocol says
    lines = _failed(args, 1)
    assert (
        lines[0]
        == "error: tools/call 'private-message' failed: Unknown tool: private-message (-32602)"
    )
    assert lines[1] == f"hint: `mcp-adapter inspect {demo.url}` lists the tools and what each takes"


def test_a_refused_token_names_the_http_status(demo: Served) -> None:
    lines = _failed(["call", demo.url, "greet", "name=Ada"], 1, {TOKEN_ENV: "wrong"})
    assert lines == [
        f"error: {demo.url} answered HTTP 401 Unauthorized",
        "hint: the token was refused: check it (and, on 403, its scopes)",
    ]


def test_a_wrong_path_names_the_http_status(demo: Served) -> None:
    url = demo.url.replace("/mcp", "/nope")
    assert _failed(["inspect", url], 1) == [
        f"error: {url} answered HTTP 404 Not Found",
        "hint: check the URL's path (mcp-adapter serve answers at /mcp unless --path)",
    ]


def test_a_server_that_is_not_there() -> None:
    lines = _failed(["inspect", "http://127.0.0.1:9/mcp", "--timeout", "20"], 1)
    assert lines[0].startswith("error: cannot reach http://127.0.0.1:9/mcp: ")
    assert lines[1] == "hint: is the server running? `mcp-adapter serve TARGET --http` starts one"


@pytest.mark.parametrize("era", ERAS)
def test_inspect_over_http_with_a_token(demo: Served, era: str) -> None:
    out = _ok(["inspect", demo.url, "--protocol", era], {TOKEN_ENV: TOKEN}).splitlines()
    assert out[0] == f"Demo 0.1.0: {demo.url}; protocol {era}"
    assert out[2].split() == ["TOOL", "TITLE", "ARGUMENTS", "ANNOTATIONS"]
    tools = [line.split()[0] for line in out[3:6]]
    assert tools == ["greet", "summarize", "private-message"]
    greet = out[3]
    assert "Greet a user" in greet
    assert "read-only, non-destructive, idempotent, closed-world" in greet
    assert any(
        line.split() == ["greeting", "demo://greetings/{name}", "text/plain"] for line in out
    )
    assert any(line.split() == ["greeting", "-", "name"] for line in out)


def test_inspect_json_is_what_the_server_lists(demo: Served) -> None:
    listed = json.loads(_ok(["inspect", demo.url, "--json"]))
    assert listed["server"]["name"] == "Demo"
    assert listed["protocolVersion"] == "2026-07-28"
    assert [tool["name"] for tool in listed["tools"]] == ["greet", "summarize"]
    assert listed["tools"][0]["inputSchema"]["required"] == ["name"]
    assert listed["resources"] == []
    assert [t["uriTemplate"] for t in listed["resourceTemplates"]] == ["demo://greetings/{name}"]
    assert [p["name"] for p in listed["prompts"]] == ["greeting"]


# -- over stdio and in process -------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("how", [["--stdio"], []], ids=["stdio", "in-process"])
def test_call_a_target(how: list[str], era: str) -> None:
    out = _ok(
        ["call", TARGET, *CONTAINER, *how, "greet", "--json", '{"name": "Bo"}', "--protocol", era]
    )
    assert out == "Hello, Bo!\n"


@pytest.mark.parametrize("how", [["--stdio"], []], ids=["stdio", "in-process"])
def test_inspect_a_target(how: list[str]) -> None:
    out = _ok(["inspect", TARGET, *CONTAINER, *how]).splitlines()
    where = "over stdio" if how else "in process"
    assert out[0] == f"Demo 0.1.0: {TARGET}, {where}; protocol 2026-07-28"
    assert [line.split()[0] for line in out[3:5]] == ["greet", "summarize"]


def test_call_prints_the_whole_result_as_json() -> None:
    """Over stdio, with serve settings in the environment meant for HTTP servers: the
    subprocess serves exactly what ``call`` names, over stdio."""
    args = ["call", TARGET, "--stdio", "greet", "name=Ada", "--format", "json"]
    done = run_cli(args, {"MCP_ADAPTER_PORT": "9000", "MCP_ADAPTER_HTTP": "1"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert result["structuredContent"] == "Hello, Ada!"
    assert result["isError"] is False


def test_an_error_result_is_printed_and_exits_1() -> None:
    done = run_cli(["call", TARGET, "greet", "name="])
    assert done.returncode == 1
    assert done.stdout == "Provide a nonempty name.\n"
    assert done.stderr.splitlines() == ["error: the tool 'greet' answered with an error result"]


def test_a_stdio_server_that_stops_shows_why() -> None:
    lines = _failed(["call", "tests.cli.apps:BrokenServer", "--stdio", "x"], 1)
    assert lines[0] == (
        "error: the stdio server for tests.cli.apps:BrokenServer stopped: MCPError: "
        "Connection closed"
    )
    assert "  error: cannot compile tests.cli.apps:BrokenServer: 3 problems" in lines
    assert lines[-1].startswith("hint: the lines above are its own stderr")


# -- what the command line says ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (
            ["call", "http://127.0.0.1:9/mcp", "t", "--container", "a:b"],
            [
                "error: --container only applies to a target (MODULE:ATTR), not to a URL",
                "hint: the server at a URL is already running with its own container",
            ],
        ),
        (
            ["inspect", TARGET, "--token", "x"],
            [
                "warning: --token on the command line is visible to every user of this machine "
                "(ps); give it as MCP_ADAPTER_TOKEN or --token-file PATH",
                "error: --token only applies to a URL (streamable HTTP)",
                "hint: a target runs here, in process or over stdio, where no bearer token is sent",
            ],
        ),
        (
            ["call", TARGET, "greet", "name"],
            [
                "error: 'name' is not KEY=VALUE",
                f"hint: {ARGUMENTS_HINT}",
            ],
        ),
        (
            ["call", TARGET, "greet", "--json", "[1]"],
            [
                "error: --json must be a JSON object ({...}), not list",
                f"hint: {ARGUMENTS_HINT}",
            ],
        ),
        (
            ["call", TARGET, "greet", "--timeout", "0"],
            ["error: --timeout 0 is not positive"],
        ),
    ],
)
def test_misuse_is_one_error_and_its_hint(args: list[str], lines: list[str]) -> None:
    assert _failed(args, 2) == lines


def test_arguments_are_json_when_they_parse_else_strings() -> None:
    assert arguments_of(
        ["n=3", "f=1.5", "b=false", "z=null", "l=[1]", "o={}", "s=Ada", 'q="3"', "e=", "x=NaN"],
        None,
    ) == {
        "n": 3,
        "f": 1.5,
        "b": False,
        "z": None,
        "l": [1],
        "o": {},
        "s": "Ada",
        "q": "3",
        "e": "",
        "x": "NaN",
    }
    assert arguments_of(["b=2"], '{"a": 1}') == {"a": 1, "b": 2}
    with pytest.raises(CliError, match="given twice"):
        arguments_of(["a=2"], '{"a": 1}')
    with pytest.raises(CliError, match="--json is not JSON"):
        arguments_of([], "{name: 1}")
