"""Every failure of the command is one ``error:`` line and one ``hint:`` line on stderr, exit
status 2 for a usage mistake, no traceback without ``--debug`` (and with it, no advice to
use it): argparse's own errors included. Each case runs the installed command."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mcp_adapter.cli import main
from mcp_adapter.cli.errors import DEBUG_HINT
from mcp_adapter.distribution import DISTRIBUTION, version
from tests.lifespan.apps import FAIL_ENV
from tests.serving.harness import run_cli

DEMO = "examples.demo.server:DemoServer"


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (
            ["serve", DEMO, "--http", "--port", "abc"],
            [
                "error: --port 'abc' is not an integer",
                "hint: `mcp-adapter serve --help` shows what it takes",
            ],
        ),
        (
            ["serve", DEMO, "--http", "--header-timeout", "soon"],
            [
                "error: --header-timeout 'soon' is not a number",
                "hint: `mcp-adapter serve --help` shows what it takes",
            ],
        ),
        (
            ["serve"],
            ["error: missing MODULE:ATTR", "hint: `mcp-adapter serve --help` shows what it takes"],
        ),
        (
            ["serve", DEMO, "--port"],
            ["error: --port needs a value", "hint: `mcp-adapter serve --help` shows what it takes"],
        ),
        (
            ["serve", DEMO, "--htp"],
            ["error: unknown arguments: --htp", "hint: `mcp-adapter --help` shows what it takes"],
        ),
        (
            ["list", DEMO, "--json", "--protocol", "2024"],
            [
                "error: '2024' is not a valid --protocol (choose from '2026-07-28', '2025-11-25')",
                "hint: `mcp-adapter list --help` shows what it takes",
            ],
        ),
        (
            ["serve", DEMO, "--http=yes"],
            [
                "error: --http takes no value (got 'yes')",
                "hint: `mcp-adapter serve --help` shows what it takes",
            ],
        ),
    ],
)
def test_argparse_errors_are_one_line_and_a_hint(args: list[str], lines: list[str]) -> None:
    done = run_cli(args)
    assert done.returncode == 2
    assert done.stderr.splitlines() == lines
    assert done.stdout == ""


def test_an_unknown_command() -> None:
    done = run_cli(["sevre", DEMO])
    assert done.returncode == 2
    error, hint = done.stderr.splitlines()
    assert error.startswith("error: 'sevre' is not a valid COMMAND (choose from 'serve', 'dev', ")
    assert hint == "hint: `mcp-adapter --help` shows what it takes"


@pytest.mark.parametrize(
    ("args", "flags"),
    [
        (["--port", "9000"], "--port"),
        (["--host", "0.0.0.0"], "--host"),
        (["--path", "/x"], "--path"),
        (["--reload"], "--reload"),
        (["--host", "::1", "--port", "1", "--stateful"], "--host, --port and --stateful"),
    ],
)
def test_an_http_flag_without_http_is_refused(args: list[str], flags: str) -> None:
    """It used to be ignored: ``serve --port 9000`` served stdio."""
    done = run_cli(["serve", DEMO, *args])
    assert done.returncode == 2
    applies = "applies" if "," not in flags else "apply"
    assert done.stderr.splitlines() == [
        f"error: {flags} only {applies} to HTTP",
        "hint: add --http",
    ]


def test_reload_and_workers_are_refused_together() -> None:
    done = run_cli(["serve", DEMO, "--http", "--reload", "--workers", "2"])
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: --reload restarts one process and cannot watch --workers",
        "hint: drop --workers while developing, or --reload in production",
    ]


def test_a_port_in_use_says_so() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        done = run_cli(["serve", DEMO, "--http", "--port", str(port)])
    finally:
        taken.close()
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use",
        f"hint: choose another --port (0 picks a free one) or stop what is using port {port}",
    ]


def test_an_address_of_another_machine_is_not_about_the_port() -> None:
    """192.0.2.1 (TEST-NET-1) is no address of this machine: bind fails at once,
    EADDRNOTAVAIL, and the hint speaks of --host, not of the port."""
    done = run_cli(["serve", DEMO, "--http", "--host", "192.0.2.1", "--port", "0"])
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: cannot listen on 192.0.2.1:0: Cannot assign requested address",
        "hint: --host must be an address of this machine (127.0.0.1 for this machine only, "
        "0.0.0.0 or :: for every interface)",
    ]


def test_without_debug_the_hint_says_how_to_see_the_traceback(
    capsys: pytest.CaptureFixture[str], in_root: Path
) -> None:
    args = ["list", DEMO, "--container", "tests.cli.apps:exploding_container"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == f"hint: {DEBUG_HINT}"


@pytest.mark.parametrize("where", ["after", "before"])
def test_with_debug_the_traceback_and_no_advice_to_use_debug(
    capsys: pytest.CaptureFixture[str], in_root: Path, where: str
) -> None:
    args = ["list", DEMO, "--container", "tests.cli.apps:exploding_container"]
    args = [*args, "--debug"] if where == "after" else ["--debug", *args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert "RuntimeError: database is down" in err
    assert "--debug" not in err


@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_a_failed_start_up_advises_debug_only_without_it(debug: list[str]) -> None:
    target = [
        "tests.lifespan.apps:LifespanServer",
        "--container",
        "tests.lifespan.apps:build_container",
    ]
    done = run_cli(["serve", *target, *debug], {FAIL_ENV: "lifespan"})
    assert done.returncode == 1
    hint = done.stderr.splitlines()[-1]
    assert hint.startswith("hint: fix what start-up needs (eager singletons, Server.lifespan)")
    if debug:
        assert "Traceback" in done.stderr
        assert "--debug" not in done.stderr
    else:
        assert "Traceback" not in done.stderr
        assert hint.endswith(f"; {DEBUG_HINT}")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{DISTRIBUTION} {version()} (mcp 2.3.0, Python ")
