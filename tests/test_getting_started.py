"""docs/getting-started.md's commands work on its code: the page's runnable blocks become
``greeter.py``, and its ``mcp-adapter`` lines run against it (``check``, ``list``, and
``serve --http`` called with the SDK's client)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import anyio
import pytest

from tests.serving.clients import connect
from tests.serving.harness import CLI, run_cli, serve_process
from tests.test_docs import DOCS, python_blocks

PAGE = DOCS / "getting-started.md"


def commands(verb: str) -> list[list[str]]:
    """The page's ``mcp-adapter VERB ...`` lines, as argument lists (without the program)."""
    found = re.findall(rf"^mcp-adapter {verb} .*$", PAGE.read_text(encoding="utf-8"), re.M)
    return [shlex.split(line.split("#")[0])[1:] for line in found]


@pytest.fixture(scope="module")
def greeter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("getting-started")
    code = "".join(block.code for block in python_blocks(PAGE.read_text(encoding="utf-8")))
    (folder / "greeter.py").write_text(code, encoding="utf-8")
    return folder


def test_the_page_shows_each_command() -> None:
    assert [len(commands(verb)) for verb in ("check", "list", "serve")] == [1, 1, 2]


@pytest.mark.parametrize("verb", ["check", "list"])
def test_check_and_list_run_on_the_pages_code(greeter: Path, verb: str) -> None:
    (args,) = commands(verb)
    done = run_cli(args, cwd=greeter)
    assert done.returncode == 0, done.stderr
    if verb == "list":
        assert re.search(r"^greet\b", done.stdout, re.M), done.stdout


@pytest.mark.anyio
async def test_serve_over_http_answers_a_client(greeter: Path) -> None:
    http = next(args for args in commands("serve") if "--http" in args)
    args = [*http[: http.index("--port")], "--port", "0"]
    with serve_process([*CLI, *args], env={"PYTHONPATH": str(greeter)}) as served:
        with anyio.fail_after(60):
            async with connect(served.url) as client:
                result = await client.call_tool("greet", {"name": "Ada"})
    assert result.structured_content == {"message": "Hello, Ada!"}
