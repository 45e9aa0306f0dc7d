"""Keys and tokens kept out of the process list.

``serve``'s request-state keys and the bearer token of ``call`` and ``inspect`` come
from a variable or a file, and then are not in the command line of the process that
holds them (``/proc/PID/cmdline``, what ``ps`` shows every user of the machine); the
flag still works, with one warning on stderr naming the safer ways. Real
``mcp-adapter`` processes: ``serve`` servers, and ``call`` against one or against a
listener that reads what it sends.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mcp_adapter.cli import build_parser
from mcp_adapter.cli.connecting import TOKEN, reach_of
from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.options import ServeOptions
from mcp_adapter.cli.settings import KEYS_ENV, forget_secrets, options_of
from mcp_adapter.cli.sources import MAX_FILE_BYTES
from tests.serving.harness import (
    CLI,
    REPO,
    START_TIMEOUT,
    STOP_TIMEOUT,
    Served,
    cli_env,
    run_cli,
    serve_http,
)
from tests.serving.test_request_state_serving import ASK, _ask_then_retry

KEY_1 = secrets.token_hex(32)
KEY_2 = secrets.token_hex(32)
DEMO = ["examples.demo.server:DemoServer", "--container", "examples.demo.container:build_container"]
DEMO_TOKEN = secrets.token_urlsafe(24)
KEYS_FILE_ENV = f"{KEYS_ENV}_FILE"
KEY_WARNING = (
    "warning: --request-state-key on the command line is visible to every user of this "
    f"machine (ps); give it as {KEYS_ENV} or --request-state-key-file PATH"
)
TOKEN_WARNING = (
    "warning: --token on the command line is visible to every user of this machine (ps); "
    "give it as MCP_ADAPTER_TOKEN or --token-file PATH"
)
SAFE_WAYS = ["variable", "file", "file variable"]


def _argv(pid: int) -> bytes:
    """The command line of the running process ``pid``, as ``ps`` reads it."""
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def _given(
    how: str, flag: str, env: str, value: str, folder: Path
) -> tuple[list[str], dict[str, str]]:
    """The arguments and variables that give ``value`` as ``how`` says."""
    file = folder / "secret"
    file.write_text(value.replace(",", "\n") + "\n", encoding="utf-8")
    file.chmod(0o600)
    ways = {
        "flag": ([arg for item in value.split(",") for arg in (flag, item)], {}),
        "variable": ([], {env: value}),
        "file": ([f"{flag}-file", str(file)], {}),
        "file variable": ([], {f"{env}_FILE": str(file)}),
    }
    return ways[how]


def _warnings(lines: list[str]) -> list[str]:
    return [line.rstrip("\n") for line in lines if line.startswith("warning:")]


# -- serve's request-state keys ----------------------------------------------------------------


@pytest.mark.parametrize("how", SAFE_WAYS)
def test_serve_takes_its_keys_and_keeps_them_out_of_its_command_line(
    how: str, tmp_path: Path
) -> None:
    args, env = _given(how, "--request-state-key", KEYS_ENV, f"{KEY_1},{KEY_2}", tmp_path)
    with serve_http([*ASK, *args], env) as one, serve_http([*ASK, *args], env) as two:
        for served in (one, two):
            argv = _argv(served.process.pid)
            assert b"serve" in argv  # the server's own command line, read while it serves
            assert KEY_1.encode() not in argv
            assert KEY_2.encode() not in argv
        # the key is in use: a round sealed by one process opens in the other
        answer = _ask_then_retry(one.url, two.url)
    assert answer["result"]["content"][0]["text"] == "accept asked"
    assert _warnings(one.output + two.output) == []


def test_keys_on_the_command_line_work_with_one_warning() -> None:
    flags = ["--request-state-key", KEY_1, "--request-state-key", KEY_2, "--workers", "2"]
    with serve_http([*ASK, *flags]) as one, serve_http(ASK, {KEYS_ENV: KEY_1}) as two:
        assert KEY_1.encode() in _argv(one.process.pid)  # where ps shows it to everyone
        answer = _ask_then_retry(one.url, two.url)
    assert answer["result"]["content"][0]["text"] == "accept asked"
    # once: not once per key, nor once per worker process
    assert _warnings(one.output) == [KEY_WARNING]
    assert KEY_1 not in "".join(one.output)


# -- the token of call and inspect -------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[Served]:
    """README's demo: ``private-message`` is listed and called only with the token."""
    args = [*DEMO, "--auth", "examples.demo.auth:verifier", "--anonymous"]
    with serve_http(args, {"MCP_DEMO_TOKEN": DEMO_TOKEN}) as served:
        yield served


@pytest.mark.parametrize("how", SAFE_WAYS)
def test_call_and_inspect_take_the_token_from_a_variable_or_a_file(
    demo: Served, how: str, tmp_path: Path
) -> None:
    args, env = _given(how, "--token", TOKEN.env, DEMO_TOKEN, tmp_path)
    called = run_cli(["call", demo.url, "private-message", "message=hi", *args], env)
    assert (called.returncode, called.stdout, called.stderr) == (0, "hi\n", "")
    listed = run_cli(["inspect", demo.url, *args], env)
    assert (listed.returncode, listed.stderr) == (0, "")
    assert "private-message" in listed.stdout  # listed to the token's identity only


def test_a_token_on_the_command_line_works_with_one_warning(demo: Served) -> None:
    called = run_cli(["call", demo.url, "private-message", "message=hi", "--token", DEMO_TOKEN])
    assert (called.returncode, called.stdout) == (0, "hi\n")
    assert called.stderr.splitlines() == [TOKEN_WARNING]


def _request_head(connection: socket.socket) -> str:
    """The request line and headers the client sent (bounded)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < MAX_FILE_BYTES:
        chunk = connection.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.partition(b"\r\n\r\n")[0].decode("latin-1")


@pytest.mark.parametrize("how", [*SAFE_WAYS, "flag"])
def test_the_token_is_in_the_command_line_of_call_only_as_the_flag(
    how: str, tmp_path: Path
) -> None:
    """``call`` is read while it waits for the answer to what it sent: a listener holds the
    request, reads the caller's command line, then hangs up."""
    token = secrets.token_urlsafe(24)
    args, env = _given(how, "--token", TOKEN.env, token, tmp_path)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(START_TIMEOUT)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        process = subprocess.Popen(
            [*CLI, "call", url, "greet", "--timeout", str(START_TIMEOUT), *args],
            cwd=REPO,
            env=cli_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(START_TIMEOUT)
                head = _request_head(connection)
                argv = _argv(process.pid)
        finally:
            try:  # hung up on: it ends with its error
                _, stderr = process.communicate(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                raise
    headers = dict(line.split(": ", 1) for line in head.splitlines()[1:] if ": " in line)
    sent = {name.lower(): value for name, value in headers.items()}
    assert sent["authorization"] == f"Bearer {token}"
    assert b"call" in argv  # read while it ran
    assert (token.encode() in argv) == (how == "flag")
    assert _warnings(stderr.splitlines()) == ([TOKEN_WARNING] if how == "flag" else [])
    assert token not in stderr


# -- what is refused, in one line ------------------------------------------------------------


def _serve_options(args: list[str], environ: dict[str, str]) -> ServeOptions:
    return options_of(build_parser().parse_args(["serve", "m:attr", "--http", *args]), environ)


def _refused(run: Callable[[], object]) -> str:
    with pytest.raises(CliError) as raised:
        run()
    return raised.value.message


def test_a_flag_and_its_file_are_one_too_many(tmp_path: Path) -> None:
    args, _ = _given("file", "--request-state-key", KEYS_ENV, KEY_1, tmp_path)
    both = [*args, "--request-state-key", KEY_2]
    assert _refused(lambda: _serve_options(both, {})) == (
        "--request-state-key and --request-state-key-file are both given"
    )
    environ = {KEYS_ENV: KEY_1, KEYS_FILE_ENV: str(tmp_path / "secret")}
    assert _refused(lambda: _serve_options([], environ)) == (
        f"{KEYS_ENV} and {KEYS_FILE_ENV} are both set"
    )


def test_the_command_line_wins_over_the_variables(tmp_path: Path) -> None:
    args, _ = _given("file", "--request-state-key", KEYS_ENV, f"{KEY_2},{KEY_1}", tmp_path)
    environ = {KEYS_ENV: "never read", KEYS_FILE_ENV: "/never/read"}
    assert _serve_options(args, environ).request_state_keys == (KEY_2, KEY_1)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, ": No such file or directory"),
        (b"\n \n", " is empty"),
        (b"\xff" * 40, " is not UTF-8 text"),
        (b"k" * (MAX_FILE_BYTES + 1), f" holds more than {MAX_FILE_BYTES} bytes: no --token"),
    ],
    ids=["missing", "empty", "binary", "huge"],
)
def test_a_file_that_holds_no_token_is_named_never_echoed(
    content: bytes | None, problem: str, tmp_path: Path
) -> None:
    file = tmp_path / "token"
    if content is not None:
        file.write_bytes(content)
    flag = build_parser().parse_args(
        ["call", "http://127.0.0.1:9/mcp", "t", "--token-file", str(file)]
    )
    assert _refused(lambda: reach_of(flag, {})) == f"--token-file {file}{problem}"
    variable = build_parser().parse_args(["call", "http://127.0.0.1:9/mcp", "t"])
    environ = {f"{TOKEN.env}_FILE": str(file)}
    assert _refused(lambda: reach_of(variable, environ)) == f"{TOKEN.env}_FILE={file}{problem}"


def test_a_short_key_in_a_file_is_named_by_its_flag_never_echoed(tmp_path: Path) -> None:
    args, _ = _given("file", "--request-state-key", KEYS_ENV, "short-secret", tmp_path)
    done = run_cli(["serve", ASK[0], "--http", *args])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith(
        "error: --request-state-key-file: request-state keys must be at least 32"
    )
    assert "short-secret" not in done.stderr


def test_a_token_variable_with_a_target_is_refused_as_its_flag_is() -> None:
    args = build_parser().parse_args(["inspect", "app:App"])
    assert _refused(lambda: reach_of(args, {TOKEN.env: "x"})) == (
        "MCP_ADAPTER_TOKEN only applies to a URL (streamable HTTP)"
    )


def test_several_keys_on_the_command_line_are_one_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    keys = _serve_options(["--request-state-key", KEY_1, "--request-state-key", KEY_2], {})
    assert keys.request_state_keys == (KEY_1, KEY_2)
    assert capsys.readouterr().err.splitlines() == [KEY_WARNING]


def test_serve_forgets_the_variable_naming_the_file_too() -> None:
    environ = {KEYS_ENV: KEY_1, KEYS_FILE_ENV: "/run/secrets/k", "PATH": os.defpath}
    forget_secrets(environ)
    assert environ == {"PATH": os.defpath}


def test_every_credential_flag_has_its_file_flag() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, flag in [
        ("serve", "--request-state-key"),
        ("dev", "--request-state-key"),
        ("call", "--token"),
        ("inspect", "--token"),
    ]:
        flags = {o for a in commands.choices[command]._actions for o in a.option_strings}
        assert {flag, f"{flag}-file"} <= flags, command
