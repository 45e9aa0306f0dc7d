"""``serve``'s settings from ``MCP_ADAPTER_*`` variables: every flag has one, a flag wins
over its variable, a bad value is one line naming the variable, and docs/cli.md's table
lists exactly the variables read."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from mcp_adapter.cli import build_parser
from mcp_adapter.cli.limit_flags import LIMIT_OPTIONS
from mcp_adapter.cli.options import ENV_VAR, ServeOptions
from mcp_adapter.cli.settings import ALL_SETTINGS, options_of
from mcp_adapter.dispatch.telemetry import ENVIRONMENT as TELEMETRY_ENV
from tests.serving.clients import connect, tool_names
from tests.serving.harness import CLI, run_cli, serve_process

ROOT = Path(__file__).resolve().parents[2]
TOOLSETS = "tests.serving.apps:toolset_catalog"
KEY_1 = "1" * 64
KEY_2 = "2" * 64
VERIFIER = "tests.serving.apps:StaticVerifier"


def _options(args: list[str], environ: Mapping[str, str]) -> ServeOptions:
    return options_of(build_parser().parse_args(["serve", "m:attr", *args]), environ)


# -- every setting from its variable ----------------------------------------------------------

EVERY_VARIABLE = {
    "MCP_ADAPTER_CONTAINER": "tests.serving.apps:build_container",
    "MCP_ADAPTER_HTTP": "yes",
    "MCP_ADAPTER_HOST": " 127.0.0.2 ",
    "MCP_ADAPTER_PORT": "8123",
    "MCP_ADAPTER_PATH": "custom/",
    "MCP_ADAPTER_WORKERS": "1",
    "MCP_ADAPTER_RELOAD": "yes",
    "MCP_ADAPTER_TOOLSETS": "repos, users",
    "MCP_ADAPTER_STATEFUL": "On",
    "MCP_ADAPTER_JSON_RESPONSE": "true",
    "MCP_ADAPTER_AUTH": VERIFIER,
    "MCP_ADAPTER_SCOPES": "read, write,",
    "MCP_ADAPTER_ANONYMOUS": "1",
    "MCP_ADAPTER_RESOURCE_URL": "https://mcp.example/mcp",
    "MCP_ADAPTER_ISSUER_URL": "https://auth.example",
    "MCP_ADAPTER_ALLOWED_HOSTS": "mcp.example:443,mcp.example",
    "MCP_ADAPTER_FORWARDED_ALLOW_IPS": "10.0.0.5, 10.1.0.0/16",
    "MCP_ADAPTER_MAX_BODY_SIZE": "4096",
    "MCP_ADAPTER_REQUEST_STATE_KEYS": f"{KEY_1}, {KEY_2}",
    "MCP_ADAPTER_HEADER_TIMEOUT": "3",
    "MCP_ADAPTER_BODY_TIMEOUT": "4.5",
    "MCP_ADAPTER_KEEP_ALIVE_TIMEOUT": "2",
    "MCP_ADAPTER_MAX_CONNECTIONS": "500",
    "MCP_ADAPTER_SHUTDOWN_TIMEOUT": "6",
    "MCP_ADAPTER_MAX_SSE_STREAMS": "7",
    "MCP_ADAPTER_MAX_SESSIONS": "8",
    "MCP_ADAPTER_MAX_SESSIONS_PER_CLIENT": "9",
    "MCP_ADAPTER_MAX_CALLS": "10",
    "MCP_ADAPTER_MAX_CALLS_PER_CLIENT": "11",
    "MCP_ADAPTER_SESSION_IDLE_TIMEOUT": "60",
    "MCP_ADAPTER_HANDLE_IDLE_TIMEOUT": "90",
    "MCP_ADAPTER_MAX_HANDLES": "12",
    "MCP_ADAPTER_MAX_HANDLES_PER_CLIENT": "13",
    "MCP_ADAPTER_REDIS_URL": "redis://127.0.0.1:6379/1",
    "MCP_ADAPTER_REDIS_PREFIX": "notes-prod",
    "MCP_ADAPTER_REDIS_WAIT_REPLICAS": "1",
    "MCP_ADAPTER_ENQUEUE_ONLY": "yes",
}


STDIO_ONLY = {"MCP_ADAPTER_IDENTITY": "os-user"}
"""The settings that cannot go with ``--http``, read on their own below."""


def test_every_setting_comes_from_its_variable() -> None:
    assert {*EVERY_VARIABLE, *STDIO_ONLY} == {setting.env for setting in ALL_SETTINGS}
    assert _options([], STDIO_ONLY) == ServeOptions(target="m:attr", identity="os-user")
    options = _options([], EVERY_VARIABLE)
    assert options == ServeOptions(
        target="m:attr",
        container="tests.serving.apps:build_container",
        http=True,
        host="127.0.0.2",
        port=8123,
        path="/custom",
        workers=1,
        reload=True,
        toolsets=("repos", "users"),
        stateful=True,
        json_response=True,
        auth=VERIFIER,
        scopes=("read", "write"),
        anonymous=True,
        resource_url="https://mcp.example/mcp",
        issuer_url="https://auth.example",
        allowed_hosts=("mcp.example:443", "mcp.example"),
        forwarded_allow_ips=("10.0.0.5", "10.1.0.0/16"),
        max_body_size=4096,
        request_state_keys=(KEY_1, KEY_2),
        header_timeout=3.0,
        body_timeout=4.5,
        keep_alive_timeout=2,
        max_connections=500,
        shutdown_timeout=6.0,
        max_sse_streams=7,
        max_sessions=8,
        max_sessions_per_client=9,
        max_calls=10,
        max_calls_per_client=11,
        session_idle_timeout=60.0,
        handle_idle_timeout=90.0,
        max_handles=12,
        max_handles_per_client=13,
        redis_url="redis://127.0.0.1:6379/1",
        redis_prefix="notes-prod",
        redis_wait_replicas=1,
        enqueue_only=True,
    )
    # --workers processes get the resolved options, not the variables
    assert ServeOptions.from_env({ENV_VAR: options.to_env()}) == options


def test_no_flag_and_no_variable_keeps_the_defaults() -> None:
    assert _options([], {}) == ServeOptions(target="m:attr")
    empty = dict.fromkeys(EVERY_VARIABLE, " ")  # an empty variable counts as unset
    assert _options([], empty) == ServeOptions(target="m:attr")


# -- a flag wins over its variable ------------------------------------------------------------

AUTH = ["--http", "--auth", VERIFIER]
PRECEDENCE = [
    ("container", ["--container", "flag:c"], "env:c", "flag:c"),
    ("http", ["--no-http"], "1", False),
    ("identity", ["--identity", "os-user"], "m:who", "os-user"),
    ("host", ["--http", "--host", "::1"], "127.0.0.2", "::1"),
    ("port", ["--http", "--port", "1"], "2", 1),
    ("path", ["--http", "--path", "/flag"], "/env", "/flag"),
    ("workers", ["--http", "--workers", "3"], "2", 3),
    ("reload", ["--http", "--no-reload"], "1", False),
    ("toolsets", ["--toolsets", "repos"], "issues,users", ("repos",)),
    ("stateful", ["--http", "--no-stateful"], "1", False),
    ("json_response", ["--http", "--json-response"], "0", True),
    ("auth", ["--http", "--auth", "flag:v"], "env:v", "flag:v"),
    ("scopes", [*AUTH, "--scope", "flag"], "env1,env2", ("flag",)),
    ("anonymous", [*AUTH, "--no-anonymous"], "1", False),
    ("resource_url", [*AUTH, "--resource-url", "https://f.example"], "https://e.example", None),
    ("issuer_url", [*AUTH, "--issuer-url", "https://f.example"], "https://e.example", None),
    ("allowed_hosts", ["--http", "--allowed-host", "f:1"], "e:1,e:2", ("f:1",)),
    ("forwarded_allow_ips", ["--http", "--forwarded-allow-ips", "10.0.0.1"], "::1", ("10.0.0.1",)),
    ("max_body_size", ["--http", "--max-body-size", "10"], "20", 10),
    ("request_state_keys", ["--request-state-key", KEY_1], KEY_2, (KEY_1,)),
    ("redis_url", ["--redis", "redis://127.0.0.1:1/0"], "redis://127.0.0.1:2/0", None),
    ("redis_prefix", ["--redis", "redis://h:1/0", "--redis-prefix", "flag"], "env", "flag"),
    ("redis_wait_replicas", ["--redis", "redis://h:1/0", "--redis-wait-replicas", "2"], "1", 2),
    ("enqueue_only", ["--no-enqueue-only"], "1", False),
    *(
        (option.name, ["--http", "--stateful", option.flag, "3"], "4", 3)
        for option in LIMIT_OPTIONS
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "variable", "expected"), PRECEDENCE, ids=[case[0] for case in PRECEDENCE]
)
def test_a_flag_wins_over_its_variable(
    name: str, args: list[str], variable: str, expected: object
) -> None:
    (setting,) = [s for s in ALL_SETTINGS if s.name == name]
    if expected is None:
        expected = args[-1]
    assert getattr(_options(args, {setting.env: variable}), name) == expected
    flag = next(arg for arg in args if arg.endswith(setting.flag.removeprefix("--")))
    without_flag = args[: args.index(flag)]  # the same context without the flag ...
    assert getattr(_options(without_flag, {setting.env: variable}), name) != expected  # reads it


def test_every_setting_has_a_precedence_case() -> None:
    assert [case[0] for case in PRECEDENCE] == [setting.name for setting in ALL_SETTINGS]


def test_a_flag_wins_so_its_variable_is_not_even_read() -> None:
    options = _options(["--http", "--port", "0"], {"MCP_ADAPTER_PORT": "not a port"})
    assert options.port == 0


# -- in a real process -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_serve_configured_only_by_variables() -> None:
    env = {
        "MCP_ADAPTER_HTTP": "1",
        "MCP_ADAPTER_PORT": "0",
        "MCP_ADAPTER_PATH": "/from-env",
        "MCP_ADAPTER_TOOLSETS": "users",
        "MCP_ADAPTER_JSON_RESPONSE": "1",
    }
    with serve_process([*CLI, "serve", TOOLSETS], env) as served:
        assert served.url.endswith("/from-env")
        async with connect(served.url) as client:
            assert await tool_names(client) == ["me"]


@pytest.mark.anyio
async def test_flags_win_over_variables_in_a_real_process() -> None:
    env = {
        "MCP_ADAPTER_HTTP": "1",
        "MCP_ADAPTER_PORT": "not a port",  # never read: --port is given
        "MCP_ADAPTER_PATH": "/from-env",
        "MCP_ADAPTER_TOOLSETS": "users",
    }
    args = ["--port", "0", "--path", "/from-flag", "--toolsets", "repos"]
    with serve_process([*CLI, "serve", TOOLSETS, *args], env) as served:
        assert served.url.endswith("/from-flag")
        async with connect(served.url) as client:
            assert await tool_names(client) == ["list-repos", "get-repo"]


def test_a_switch_flag_turns_off_its_variable() -> None:
    """``MCP_ADAPTER_HTTP=1`` with ``--no-http``: stdio, which ends at the end of its input."""
    done = run_cli(["serve", TOOLSETS, "--no-http"], {"MCP_ADAPTER_HTTP": "1"})
    assert done.returncode == 0, done.stderr
    assert "on stdio" in done.stderr
    assert "http://" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {"MCP_ADAPTER_PORT": "80a"}, "error: MCP_ADAPTER_PORT='80a' is not an integer"),
        (
            ["--http"],
            {"MCP_ADAPTER_BODY_TIMEOUT": "soon"},
            "error: MCP_ADAPTER_BODY_TIMEOUT='soon' is not a number",
        ),
        (
            [],
            {"MCP_ADAPTER_HTTP": "maybe"},
            "error: MCP_ADAPTER_HTTP='maybe' is not a switch (1/0, true/false, yes/no, on/off)",
        ),
        (
            ["--http"],
            {"MCP_ADAPTER_PORT": "70000"},
            "error: MCP_ADAPTER_PORT=70000 is not a TCP port",
        ),
        (["--http"], {"MCP_ADAPTER_WORKERS": "0"}, "error: MCP_ADAPTER_WORKERS must be at least 1"),
        ([], {"MCP_ADAPTER_TOOLSETS": ","}, "error: MCP_ADAPTER_TOOLSETS names no toolset"),
        (
            ["--http"],
            {"MCP_ADAPTER_MAX_SESSIONS": "5"},
            "error: MCP_ADAPTER_MAX_SESSIONS applies to sessions",
        ),
        (
            [],
            {"MCP_ADAPTER_REDIS_WAIT_REPLICAS": "1"},
            "error: MCP_ADAPTER_REDIS_WAIT_REPLICAS needs --redis redis://HOST:PORT/DB",
        ),
    ],
)
def test_a_bad_variable_is_one_line_naming_it(
    args: list[str], env: dict[str, str], message: str
) -> None:
    done = run_cli(["serve", TOOLSETS, *args], env)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == message
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_variable_that_applies_to_http_only_says_so() -> None:
    done = run_cli(["serve", TOOLSETS], {"MCP_ADAPTER_STATEFUL": "1"})
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: MCP_ADAPTER_STATEFUL only applies to HTTP",
        "hint: add --http",
    ]


@pytest.mark.parametrize("keys", ["too-short-secret", f"{KEY_1},too-short-secret"])
def test_a_bad_request_state_key_is_named_never_echoed(keys: str) -> None:
    done = run_cli(["serve", TOOLSETS, "--http"], {"MCP_ADAPTER_REQUEST_STATE_KEYS": keys})
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith(
        "error: MCP_ADAPTER_REQUEST_STATE_KEYS: request-state keys must be at least 32"
    )
    assert "too-short-secret" not in done.stderr
    assert KEY_1 not in done.stderr


# -- the table in docs/cli.md ------------------------------------------------------------------


class Recording(Mapping[str, str]):
    """An empty environment that remembers every variable looked up."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.read.append(key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def documented() -> dict[str, str]:
    """``variable -> flag`` from the rows of docs/cli.md whose first cell is a variable."""
    rows = re.findall(r"^\| `(MCP_ADAPTER_\w+)` \| `([^`]+)` \|", _cli_md(), re.MULTILINE)
    assert len(rows) == len({variable for variable, _ in rows}), "a variable listed twice"
    return dict(rows)


def _cli_md() -> str:
    return (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_the_table_lists_exactly_the_variables_serve_reads() -> None:
    environ = Recording()
    _options([], environ)
    read = [key for key in environ.read if key.startswith("MCP_ADAPTER_")]
    assert len(read) == len(set(read))
    assert set(documented()) == set(read)
    assert documented() == {env: flag for setting in ALL_SETTINGS for flag, env in setting.forms}


def test_every_serve_flag_is_a_setting() -> None:
    commands = next(
        action
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    serve = commands.choices["serve"]
    flags = {
        option
        for action in serve._actions
        for option in action.option_strings
        if option.startswith("--") and not option.startswith("--no-")
    }
    assert flags - {"--help", "--debug"} == {
        flag for setting in ALL_SETTINGS for flag, _ in setting.forms
    }


def test_no_other_variable_of_the_prefix_is_read_by_the_package() -> None:
    """Literal ``MCP_ADAPTER_*`` names in the source are documented: the table's, the
    one ``serve`` hands its ``--workers``, and the telemetry switch every process reads
    (both named in docs/cli.md too)."""
    source = ROOT / "src" / "mcp_adapter"
    literals = {
        name
        for path in source.rglob("*.py")
        for name in re.findall(r"MCP_ADAPTER_[A-Z0-9_]*[A-Z0-9]", path.read_text("utf-8"))
    }
    assert literals - set(documented()) == {ENV_VAR, TELEMETRY_ENV}
    assert f"`{ENV_VAR}`" in _cli_md()
    assert f"`{TELEMETRY_ENV}=off`" in _cli_md()
