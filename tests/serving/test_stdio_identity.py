"""Over stdio the caller is who ``serve --identity`` says: the OS user, or an identity
a function of the application gives; per-caller services work as over HTTP.

Real ``mcp-adapter serve`` stdio subprocesses driven by the SDK's client, both eras.
"""

from __future__ import annotations

import os
import pwd
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_adapter import Identity
from mcp_adapter.serving import os_user
from tests.serving.harness import START_TIMEOUT, run_cli
from tests.serving.test_stdio import MODES, stdio_server

WORKSPACE = ["tests.serving.trust_apps:WorkspaceServer"]
CONTAINER = ["--container", "tests.serving.trust_apps:workspace_container"]

pytestmark = pytest.mark.anyio


async def _call(args: list[str], name: str, mode: str, env: dict[str, str] | None = None) -> Any:
    with anyio.fail_after(START_TIMEOUT):
        async with Client(stdio_server([*WORKSPACE, *CONTAINER, *args], env), mode=mode) as client:
            result = await client.call_tool(name, {})
    assert not result.is_error, result
    return result.structured_content


@pytest.mark.parametrize("mode", MODES)
async def test_os_user_is_the_caller_and_reaches_its_own_workspace(mode: str) -> None:
    user = pwd.getpwuid(os.getuid()).pw_name
    # $USER says someone else: the identity comes from the process's user id, not from it
    seen = await _call(["--identity", "os-user"], "workspace", mode, {"USER": "mallory"})
    assert seen == {
        "owner": user,
        "subject": user,
        "client_id": "stdio",
        "scopes": [],
        "scheme": "local",
    }


@pytest.mark.parametrize("mode", MODES)
async def test_a_function_gives_the_identity(mode: str) -> None:
    seen = await _call(["--identity", "tests.serving.trust_apps:deploy_bot"], "workspace", mode)
    assert seen == {
        "owner": "deploy-bot",
        "subject": "deploy-bot",
        "client_id": "ci",
        "scopes": ["deploy"],
        "scheme": "local",
    }


@pytest.mark.parametrize("mode", MODES)
async def test_the_variable_gives_it_too(mode: str) -> None:
    env = {"MCP_ADAPTER_IDENTITY": "tests.serving.trust_apps:deploy_bot"}
    seen = await _call([], "who", mode, env)
    assert seen == {"subject": "deploy-bot", "scheme": "local"}


async def test_without_it_every_request_is_anonymous() -> None:
    assert await _call([], "who", "auto") == {"subject": None, "scheme": None}


def test_os_user_in_python() -> None:
    assert os_user() == Identity(pwd.getpwuid(os.getuid()).pw_name, "stdio")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--identity", "tests.serving.trust_apps:not_an_identity"],
            "error: tests.serving.trust_apps:not_an_identity gives a str, not an Identity",
        ),
        (["--identity", "os-user", "--http"], "error: --identity only applies to stdio"),
        (["--identity", "no_such_module:x"], "error: cannot import module 'no_such_module'"),
    ],
)
def test_a_bad_identity_is_a_one_line_error(args: list[str], said: str) -> None:
    done = run_cli(["serve", *WORKSPACE, *CONTAINER, *args])
    assert done.returncode == 2
    assert done.stderr.startswith(said), done.stderr
    assert "Traceback" not in done.stderr
