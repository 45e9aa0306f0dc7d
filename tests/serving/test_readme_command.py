"""README's two commands: command one serves the demo over HTTP on 127.0.0.1 and prints
its URL; both set up ``uv`` in a virtual environment of their own (``build/uv``) and never
install anything into the system's Python (``tests/packaging/test_fresh_machine.py`` runs
command one from a bare Python)."""

from __future__ import annotations

import re
import shlex

import pytest

from tests.serving.clients import connect, tool_names
from tests.serving.harness import REPO, serve_http

pytestmark = pytest.mark.anyio

BOOTSTRAP = "build/uv"
UV_PIN = "uv==0.13.9"


def readme_command(marker: str) -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- {marker} -->\s*```sh\n(.+?)\n```", text, re.DOTALL)
    assert found, f"README.md has no {marker}"
    return found.group(1)


def main_command() -> str:
    return readme_command("main-command")


def steps(command: str) -> list[list[str]]:
    return [shlex.split(step) for step in command.split("&&")]


def serve_arguments() -> list[str]:
    """The ``mcp-adapter serve`` arguments of the command, without host and port."""
    words = steps(main_command())[-1]
    assert words[:4] == [f"{BOOTSTRAP}/bin/uv", "run", "mcp-adapter", "serve"]
    args = words[4:]
    assert args[args.index("--host") + 1] == "127.0.0.1"
    for option in ("--host", "--port"):
        at = args.index(option)
        del args[at : at + 2]
    assert "--http" in args
    args.remove("--http")
    return args


@pytest.mark.parametrize("marker", ["main-command", "test-command"])
def test_the_commands_never_install_into_the_system_python(marker: str) -> None:
    """A system Python may refuse ``pip install`` (Debian: externally managed) and must
    not be changed: the commands make a virtual environment, and every later step runs a
    program from it (its pip, then its uv, which makes the project's own ``.venv``)."""
    first, install, sync, *rest = steps(readme_command(marker))
    assert first == ["python3", "-m", "venv", BOOTSTRAP]
    assert install == [f"{BOOTSTRAP}/bin/python", "-m", "pip", "install", "-q", UV_PIN]
    assert sync[:3] == [f"{BOOTSTRAP}/bin/uv", "sync", "--frozen"]
    assert rest
    for words in rest:
        assert words[:2] == [f"{BOOTSTRAP}/bin/uv", "run"], words


SET_UP_PAGES = ("README.md", "docs/index.md", "docs/getting-started.md", "docs/cli.md")
"""Pages whose commands run in this checkout after the README's set-up."""
_UV_COMMAND = re.compile(r"(\S*)\buv (?:run|build|sync|pip|lock)\b")


def bare_uv_commands(text: str) -> list[str]:
    """``uv run ...`` (and ``build``, ``sync``, ``pip``, ``lock``) not through the set-up's
    ``build/uv/bin/uv``: the set-up puts uv there, not on ``PATH``. (``uv add`` is for
    the reader's own project, with the reader's uv.)"""
    return [
        line.strip()
        for line in text.splitlines()
        for prefix in _UV_COMMAND.findall(line)
        if prefix.lstrip("`(") != f"{BOOTSTRAP}/bin/"
    ]


@pytest.mark.parametrize("page", SET_UP_PAGES)
def test_commands_after_the_set_up_run_its_uv(page: str) -> None:
    assert bare_uv_commands((REPO / page).read_text(encoding="utf-8")) == []


def test_the_check_finds_a_bare_uv() -> None:
    text = "read it with `uv run mkdocs serve`\nbuild/uv/bin/uv run mkdocs build\n"
    assert bare_uv_commands(text) == ["read it with `uv run mkdocs serve`"]


def test_the_docs_site_is_served_beside_the_demo() -> None:
    """The README's ``mkdocs serve`` listens on loopback, on a port other than the demo's
    (mkdocs' default, 8000, is the demo's)."""
    lines = readme_command("docs-commands").splitlines()
    serve, build = (shlex.split(line.split("#")[0]) for line in lines)
    assert serve[:4] == [f"{BOOTSTRAP}/bin/uv", "run", "mkdocs", "serve"]
    assert build == [f"{BOOTSTRAP}/bin/uv", "run", "mkdocs", "build"]
    host, port = serve[serve.index("-a") + 1].split(":")
    demo = steps(main_command())[-1]
    assert host == "127.0.0.1"
    assert port != demo[demo.index("--port") + 1]


def test_the_benchmark_command_sets_up_uv_the_same_way() -> None:
    text = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    setup = " && ".join(" ".join(words) for words in steps(readme_command("test-command"))[:3])
    assert setup in text


async def test_readme_command_serves_the_demo_with_its_private_tool() -> None:
    with serve_http(serve_arguments(), {"MCP_DEMO_TOKEN": "readme-token"}) as served:
        assert served.url.startswith("http://127.0.0.1:")
        assert served.url.endswith("/mcp")
        async with connect(served.url) as client:
            assert await tool_names(client) == ["greet", "summarize"]
        async with connect(served.url, token="readme-token") as client:
            result = await client.call_tool("private-message", {"message": "hi"})
            assert [getattr(c, "text", None) for c in result.content] == ["hi"]


async def test_without_a_token_variable_the_demo_prints_one() -> None:
    with serve_http(serve_arguments(), {"MCP_DEMO_TOKEN": ""}) as served:
        line = next(line for line in served.output if "demo token" in line)
        token = line.rsplit(": ", 1)[1].strip()
        async with connect(served.url, token=token) as client:
            assert "private-message" in await tool_names(client)
