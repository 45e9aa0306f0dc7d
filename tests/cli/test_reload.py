"""``serve --reload`` and ``dev``: an edit to a ``.py`` file of the project restarts the server
(the same port, a new process); an edit that does not compile is reported in the CLI's
two lines and the next edit brings it back. ``dev`` is ``serve --http --reload`` with the
command that opens the MCP Inspector on it (printed, never run: nothing is downloaded).
Each case runs the installed command in a project folder of its own."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import MCPError

from mcp_adapter.cli.reload import watched_files
from tests.serving.clients import connect
from tests.serving.harness import CLI, START_TIMEOUT, Served, run_cli, serve_process

APP = """\
from mcp_adapter import McpResponse, Server, Tool, ToolAnnotations
from schemas import Schema


class SayInput(Schema):
    pass


class SayTool(Tool[SayInput]):
    name = "say"
    description = "Say the word of the moment."
    annotations = ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )

    async def handle(self, payload: SayInput) -> McpResponse:
        return McpResponse.text({word!r})


class App(Server):
    name = "reloading"
    tools = (SayTool,)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP.format(word="one"))
    return tmp_path


def _said(url: str) -> str | None:
    """What the ``say`` tool answers now; ``None`` while the server cannot answer."""

    async def call() -> str | None:
        async with connect(url) as client:
            result = await client.call_tool("say", {})
            return str(getattr(result.content[0], "text", None))

    try:
        return anyio.run(call)
    except (OSError, httpx2.HTTPError, MCPError, ExceptionGroup, TimeoutError):
        return None  # between two processes, or refused: no answer yet


def _edit(app: Path, text: str) -> None:
    """Write ``text`` with a modification time later than any the reloader has seen (the
    reloader compares times; a write within the clock's granularity must still count)."""
    app.write_text(text)
    later = time.time() + 2
    os.utime(app, (later, later))


def _until(check: Callable[[], bool], edit: Callable[[], None], what: str) -> None:
    """Edit, then poll ``check`` (bounded); edit again if the reloader had not yet taken its
    first look at the files when the first edit landed."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        edit()
        for _ in range(20):
            if check():
                return
            time.sleep(0.5)
    raise AssertionError(f"no {what} within {START_TIMEOUT} s")


def _banner(served: Served, lines: int) -> list[str]:
    """The first ``lines`` lines the server printed (the banner comes line by line)."""
    deadline = time.monotonic() + START_TIMEOUT
    while len(served.output) < lines and time.monotonic() < deadline:
        time.sleep(0.05)
    return served.output[:lines]


def _serves(served: Served, project: Path) -> None:
    app = project / "app.py"
    assert _said(served.url) == "one"
    _until(lambda: _said(served.url) == "two", lambda: _edit(app, APP.format(word="two")), "reload")
    broken = APP.format(word="three").replace("'three'", "'three")
    _until(lambda: any("error: importing 'app' failed" in line for line in served.output),
           lambda: _edit(app, broken), "error line")  # fmt: skip
    _until(lambda: _said(served.url) == "three", lambda: _edit(app, APP.format(word="three")),
           "recovery")  # fmt: skip
    assert served.process.poll() is None
    failed = [line for line in served.output if line.startswith(("error:", "hint:"))]
    assert failed[:2] == [
        "error: importing 'app' failed: SyntaxError: unterminated string literal (detected at "
        "line 17) (app.py, line 17)\n",
        "hint: run again with --debug to see the traceback\n",
    ]
    assert not any("Traceback" in line for line in served.output)


def test_serve_reload_restarts_on_an_edit(project: Path) -> None:
    command = [*CLI, "serve", "app.py:App", "--http", "--reload", "--port", "0"]
    with serve_process(command, cwd=project) as served:
        assert _banner(served, 2)[1] == (
            f"  restarting when a .py file under {project} changes (--reload)\n"
        )
        _serves(served, project)


def test_dev_serves_with_reload_and_prints_the_inspector_command(project: Path) -> None:
    with serve_process([*CLI, "dev", "app.py:App", "--port", "0"], cwd=project) as served:
        assert _banner(served, 3)[2] == (
            "  MCP Inspector: npx @modelcontextprotocol/inspector --transport http "
            f"--server-url {served.url}\n"
        )
        _serves(served, project)


def test_dev_with_auth_says_to_send_the_token() -> None:
    args = ["examples.demo.server:DemoServer", "--auth", "examples.demo.auth:verifier"]
    with serve_process([*CLI, "dev", *args, "--port", "0"], {"MCP_DEMO_TOKEN": "t"}) as served:
        assert _banner(served, 4)[3].endswith(
            f'--server-url {served.url} --header "Authorization: Bearer $TOKEN"\n'
        )
        assert _said(served.url) is None  # a token is required


def test_dev_refuses_what_reload_cannot_do() -> None:
    done = run_cli(["dev", "examples.demo.server:DemoServer", "--workers", "2"])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "error: --reload restarts one process and cannot watch --workers"
    )


def test_the_reloader_watches_the_projects_files_only(tmp_path: Path) -> None:
    for name in ("app.py", "pkg/mod.py", ".venv/lib/x.py", "env/lib/y.py", "node_modules/z.py",
                 "build/b.py", "pkg/__pycache__/c.py", ".git/d.py", "notes.txt"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    found = sorted(str(path.relative_to(tmp_path.resolve())) for path in watched_files([tmp_path]))
    assert found == ["app.py", "pkg/mod.py"]
