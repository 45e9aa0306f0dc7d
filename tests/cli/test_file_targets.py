"""``path/to/app.py:ATTR`` wherever a command takes a target (the server, ``--container``,
``--auth``): under the current folder it is the module its path names (as ``python -m``
would import it); elsewhere the file by its own name, its folder importable. Each case
runs the installed command from a project folder."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.serving.clients import connect, tool_names
from tests.serving.harness import CLI, REPO, run_cli, serve_process

APP = """\
from mcp_adapter import McpResponse, Server, Tool, ToolAnnotations
from schemas import Schema

from {services} import Greeter


class HelloInput(Schema):
    name: str


class HelloTool(Tool[HelloInput]):
    name = "hello"
    description = "Say hello."
    annotations = ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )

    def __init__(self, greeter: Greeter) -> None:
        self.greeter = greeter

    async def handle(self, payload: HelloInput) -> McpResponse:
        return McpResponse.text(self.greeter.hello(payload.name))


class App(Server):
    name = "files"
    tools = (HelloTool,)
"""
SERVICES = """\
class Greeter:
    def __init__(self, greeting: str = "Hello") -> None:
        self.greeting = greeting

    def hello(self, name: str) -> str:
        return f"{self.greeting}, {name}!"
"""
WIRING = """\
from container import Container

from {services} import Greeter


def build_container() -> Container:
    container = Container()
    container.singleton(Greeter, lambda: Greeter("Howdy"))
    return container
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``app/server.py`` and ``app/wiring.py`` in a package; ``solo.py`` at the top."""
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "services.py").write_text(SERVICES)
    (package / "server.py").write_text(APP.format(services="app.services"))
    (package / "wiring.py").write_text(WIRING.format(services="app.services"))
    (tmp_path / "services.py").write_text(SERVICES)
    (tmp_path / "solo.py").write_text(APP.format(services="services"))
    return tmp_path


def _ok(args: list[str], cwd: Path) -> str:
    done = run_cli(args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_check_and_list_take_file_targets(project: Path) -> None:
    wiring = ["--container", "app/wiring.py:build_container"]
    out = _ok(["check", "app/server.py:App", *wiring], project)
    assert out == "app/server.py:App: ok (1 tool, 0 resources, 0 prompts)\n"
    assert _ok(["check", "solo.py:App"], project).endswith(
        ": ok (1 tool, 0 resources, 0 prompts)\n"
    )
    listed = json.loads(_ok(["list", "app/server.py:App", *wiring, "--json"], project))
    assert [tool["name"] for tool in listed["tools"]] == ["hello"]


def test_the_file_and_its_dotted_module_are_one_module(project: Path) -> None:
    """``app/wiring.py`` is imported as ``app.wiring``: the ``Greeter`` its container binds
    is the class ``app/server.py`` asks for, so the binding is used."""
    args = ["call", "app/server.py:App", "--container", "app/wiring.py:build_container"]
    assert _ok([*args, "hello", "name=Ada"], project) == "Howdy, Ada!\n"
    mixed = ["call", "app.server:App", "--container", "app/wiring.py:build_container"]
    assert _ok([*mixed, "hello", "name=Ada"], project) == "Howdy, Ada!\n"


def test_call_over_stdio_takes_file_targets(project: Path) -> None:
    args = ["call", "app/server.py:App", "--container", "app/wiring.py:build_container"]
    assert _ok([*args, "--stdio", "hello", "name=Bo"], project) == "Howdy, Bo!\n"


def test_a_file_outside_the_current_folder(project: Path, tmp_path: Path) -> None:
    """Run from elsewhere: ``solo.py`` is imported as ``solo``, its folder first on the
    path, so its own ``from services import Greeter`` works as under ``python solo.py``."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _ok(["call", str(project / "solo.py") + ":App", "hello", "name=Cy"], elsewhere)
    assert out == "Hello, Cy!\n"


def test_serve_over_http_takes_file_targets(project: Path) -> None:
    command = [*CLI, "serve", "app/server.py:App", "--container", "app/wiring.py:build_container"]
    # the processes --reload starts resolve the file target again: tests/cli/test_reload.py
    with serve_process([*command, "--http", "--port", "0"], cwd=project) as served:

        async def names() -> list[str]:
            async with connect(served.url) as client:
                return await tool_names(client)

        assert anyio.run(names) == ["hello"]


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (
            ["check", "missing.py:App"],
            [
                "error: no file missing.py",
                "hint: file targets are paths from the current folder: app/server.py:App",
            ],
        ),
        (
            ["check", "app/server.py:Nope"],
            [
                "error: 'app/server.py' has no attribute 'Nope'",
                "hint: check the name after the colon",
            ],
        ),
        (
            ["check", "app/server.py"],
            [
                "error: server 'app/server.py' is not of the form MODULE:ATTR",
                "hint: for example: app.mcp.servers.demo_server:DemoServer or "
                "app/server.py:DemoServer",
            ],
        ),
    ],
)
def test_a_wrong_file_target_is_one_error_and_a_hint(
    project: Path, args: list[str], lines: list[str]
) -> None:
    done = run_cli(args, cwd=project)
    assert done.returncode == 2
    assert done.stderr.splitlines() == lines


def test_a_file_named_as_a_package_of_this_distribution_is_refused(project: Path) -> None:
    """``container.py:build_container``: imported as ``container``, it would have to replace
    this distribution's package of that name."""
    (project / "container.py").write_text(WIRING.format(services="services"))
    done = run_cli(
        ["check", "solo.py:App", "--container", "container.py:build_container"], cwd=project
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: container.py cannot be imported as the module 'container': that name is "
        "mcp-adapter-di's package 'container'",
        "hint: rename container.py (for example to app_container.py)",
    ]
    (project / "container.py").rename(project / "app_container.py")
    args = ["call", "solo.py:App", "--container", "app_container.py:build_container"]
    assert _ok([*args, "hello", "name=Di"], project) == "Howdy, Di!\n"


def test_the_demo_by_its_files_from_the_repository() -> None:
    args = [
        "examples/demo/server.py:DemoServer",
        "--container",
        "examples/demo/container.py:build_container",
    ]
    assert _ok(["call", *args, "greet", "name=Ada"], REPO) == "Hello, Ada!\n"
