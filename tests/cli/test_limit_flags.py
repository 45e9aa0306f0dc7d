"""``serve``'s limit flags reach ``http_app`` (and every ``--workers`` process) or are refused."""

from __future__ import annotations

import pytest

from mcp_adapter.cli import build_parser, main
from mcp_adapter.cli.options import ENV_VAR, ServeOptions
from mcp_adapter.cli.serve import build_app, options_of
from mcp_adapter.serving import HttpLimits

AUDIT = ["tests.serving.apps:AuditServer", "--container", "tests.serving.apps:build_container"]
FLAGS = [
    "--header-timeout", "3", "--body-timeout", "4", "--keep-alive-timeout", "2",
    "--max-connections", "500", "--shutdown-timeout", "6", "--max-sse-streams", "7",
    "--max-sessions", "8", "--max-sessions-per-client", "9", "--session-idle-timeout", "60",
    "--handle-idle-timeout", "90", "--max-handles", "11", "--max-handles-per-client", "3",
]  # fmt: skip


def test_every_limit_flag_reaches_the_app_and_survives_the_environment() -> None:
    args = ["serve", *AUDIT, "--http", "--stateful", *FLAGS]
    options = options_of(build_parser().parse_args(args))
    restored = ServeOptions.from_env({ENV_VAR: options.to_env()})
    assert restored == options
    app = build_app(restored)
    assert app.state.mcp_http_limits == HttpLimits(
        header_timeout=3,
        body_timeout=4,
        keep_alive_timeout=2,
        max_connections=500,
        shutdown_timeout=6,
        max_sse_streams=7,
        max_sessions=8,
        max_sessions_per_client=9,
        session_idle_timeout=60,
        handle_idle_timeout=90,
        max_handles=11,
        max_handles_per_client=3,
    )
    manager = app.state.mcp_session_manager
    assert (manager.max_sessions, manager.session_idle_timeout) == (8, 60)


def test_no_flag_keeps_the_defaults() -> None:
    options = options_of(build_parser().parse_args(["serve", *AUDIT, "--http"]))
    assert build_app(options).state.mcp_http_limits == HttpLimits()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*AUDIT, "--header-timeout", "5"], "error: --header-timeout only applies to HTTP"),
        ([*AUDIT, "--http", "--max-sessions", "5"], "error: --max-sessions applies to sessions"),
        ([*AUDIT, "--http", "--body-timeout", "0"], "error: --body-timeout 0.0 is not positive"),
    ],
)
def test_wrong_limit_flags_are_refused(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *args]) != 0
    assert message in capsys.readouterr().err
