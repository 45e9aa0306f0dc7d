"""docs/tasks.md's "From a real client" runs against a real ``mcp-adapter serve --http`` on
127.0.0.1: each of its two scripts (the SDK's ``mcp.Client``, raw HTTP) is saved as the page
says and run with the page's command lines (the SDK's over stdio too), and the headers its
table lists are each needed, as the table says."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.serving.harness import CLI, REPO, START_TIMEOUT, Served, run_command, serve_process
from tests.test_docs import DOCS, python_blocks

PAGE = DOCS / "tasks.md"
SECTION = "## From a real client"
SDK = "### With the SDK's `mcp.Client`"
RAW = "### Raw HTTP"
PAGE_URL = "http://127.0.0.1:8000/mcp"
RUN_TIMEOUT = 3 * START_TIMEOUT  # seconds: a bound on a stuck script, not a speed threshold

SDK_OUTPUT = [
    "report ready",
    "asked: Delete a.txt?",
    "deleted a.txt",
    "asked: Delete b.txt?",
    "kept b.txt",
    "cancelled",
]
RAW_OUTPUT = ["task working", "report ready", "asked: Delete c.txt?", "deleted c.txt", "cancelled"]


def part(text: str, heading: str) -> str:
    """From ``heading`` to the next heading of its level or above."""
    start = text.index(f"\n{heading}\n")
    level = len(heading.split(" ", 1)[0])
    ends = [text.find(f"\n{'#' * n} ", start + 1) for n in range(2, level + 1)]
    found = [end for end in ends if end != -1]
    return text[start : min(found)] if found else text[start:]


def section() -> str:
    return part(PAGE.read_text(encoding="utf-8"), SECTION)


def script(heading: str) -> str:
    """The runnable blocks under ``heading``, in order: what the page says to save."""
    return "".join(block.code for block in python_blocks(part(section(), heading)))


def command_lines(program: str) -> list[list[str]]:
    """The section's lines that start with ``program``, as argument lists."""
    found = re.findall(rf"^{re.escape(program)} .*$", section(), re.M)
    return [shlex.split(line.split("#")[0]) for line in found]


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    (serve,) = command_lines("mcp-adapter serve")
    assert serve[serve.index("--port") + 1] == "8000"
    serve[serve.index("--port") + 1] = "0"
    with serve_process([*CLI, *serve[1:]]) as server:
        yield server


def run_script(tmp_path: Path, heading: str, name: str, args: list[str]) -> list[str]:
    """Save the blocks under ``heading`` as ``name``, run it with ``args`` from the
    repository's root (where ``examples`` imports), and return its output lines."""
    path = tmp_path / name
    path.write_text(script(heading), encoding="utf-8")
    # the page's `mcp-adapter` is this environment's, found on PATH (the SDK's stdio client
    # passes PATH on to the server it starts)
    path_variable = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    command = [sys.executable, str(path), *args]
    done = run_command(command, {"PATH": path_variable}, REPO, RUN_TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def page_args(script_name: str, served: Served) -> list[list[str]]:
    """The arguments of the page's ``python SCRIPT ...`` lines, its URL made the served one."""
    lines = [args[2:] for args in command_lines("python") if args[1] == script_name]
    return [[served.url if arg == PAGE_URL else arg for arg in args] for args in lines]


def test_the_sdk_client_drives_tasks_over_http_and_stdio(served: Served, tmp_path: Path) -> None:
    over_http, over_stdio = page_args("client.py", served)
    assert over_http == [served.url]
    assert over_stdio[:2] == ["mcp-adapter", "serve"]
    assert "--http" not in over_stdio
    assert run_script(tmp_path, SDK, "client.py", over_http) == SDK_OUTPUT
    assert run_script(tmp_path, SDK, "client.py", over_stdio) == SDK_OUTPUT


def test_the_raw_http_client_drives_tasks(served: Served, tmp_path: Path) -> None:
    raw = re.search(r"python raw_client\.py (\S+)", section())
    assert raw is not None
    assert raw.group(1) == PAGE_URL
    assert run_script(tmp_path, RAW, "raw_client.py", [served.url]) == RAW_OUTPUT


def page_module(heading: str) -> types.ModuleType:
    """The script under ``heading``, as a module (its ``__main__`` part does not run)."""
    name = "docs_tasks_" + re.sub(r"\W+", "_", heading).strip("_").lower()
    module = types.ModuleType(name)
    sys.modules[name] = module  # pydantic looks the module up for the models' annotations
    try:
        exec(compile(script(heading), str(PAGE), "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def raw_client() -> types.ModuleType:
    return page_module(RAW)


@pytest.mark.anyio
async def test_the_sdk_client_sends_the_headers_the_table_lists(served: Served) -> None:
    """What the SDK sends for the page's ``TaskRequest`` is what the raw client sends:
    ``name_param`` puts the task's id in ``Mcp-Name``."""
    page = page_module(SDK)
    sent: list[httpx2.Request] = []

    async def record(request: httpx2.Request) -> None:
        sent.append(request)

    with anyio.fail_after(START_TIMEOUT):
        async with (
            httpx2.AsyncClient(event_hooks={"request": [record]}) as http,
            Client(
                streamable_http_client(served.url, http_client=http),
                extensions=[page.TasksExtension()],
            ) as client,
        ):
            handle = await client.session.call_tool(
                "build_report", {"seconds": 0}, allow_claimed=True
            )
            assert isinstance(handle, page.TaskHandle)
            task_id = handle.task_id
            await page.get_task(client.session, task_id)
    (tasks_get,) = [request for request in sent if request.headers.get("mcp-method") == "tasks/get"]
    expected = raw_client().headers("tasks/get", task_id)
    assert {key: tasks_get.headers[key] for key in expected} == expected


def table_headers() -> list[str]:
    rows = re.findall(r"^\| `([A-Za-z-]+)` \|", part(section(), RAW), re.M)
    return [str(row) for row in rows]


def wire_example() -> tuple[dict[str, str], dict[str, Any]]:
    """The headers and body of the request the page shows as text."""
    found = re.search(r"```\nPOST /mcp HTTP/1.1\n(.*?)\n\n(.*?)\n```", section(), re.S)
    assert found is not None
    headers = dict(line.split(": ", 1) for line in found.group(1).splitlines())
    return headers, json.loads(found.group(2))


def test_the_table_and_the_wire_example_are_what_the_client_sends() -> None:
    client = raw_client()
    sent = client.headers("tasks/get", "<taskId>")
    assert table_headers() == list(sent)
    headers, body = wire_example()
    assert headers == sent
    assert body == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tasks/get",
        "params": {"taskId": "<taskId>", "_meta": client.ENVELOPE},
    }


def post(client: types.ModuleType, url: str, body: dict[str, Any], **changed: str | None) -> Any:
    """POST ``body`` with the page's headers for it, ``changed`` (None: left out)."""
    params = body["params"]
    name = params.get("name", params.get("taskId"))
    headers = client.headers(body["method"], name)
    for header, value in changed.items():
        header = header.replace("_", "-")
        headers.pop(header)
        if value is not None:
            headers[header] = value
    # the body as bytes: with ``json=``, httpx2 would add the Content-Type left out
    return httpx2.post(url, content=json.dumps(body), headers=headers, timeout=START_TIMEOUT)


def test_each_header_the_table_lists_is_needed(served: Served) -> None:
    client = raw_client()
    call = {"name": "build_report", "arguments": {"seconds": 0}, "_meta": client.ENVELOPE}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}

    created = client.answer(post(client, served.url, body))["result"]
    assert created["resultType"] == "task"
    get = {"taskId": created["taskId"], "_meta": client.ENVELOPE}
    get_body = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": get}
    assert client.answer(post(client, served.url, get_body))["result"]["taskId"] == get["taskId"]

    assert post(client, served.url, body, Content_Type=None).status_code == 400
    for accept in ("application/json", "text/event-stream"):
        assert post(client, served.url, body, Accept=accept).status_code == 406
    inline = client.answer(post(client, served.url, body, MCP_Protocol_Version=None))
    assert inline["result"]["content"] == [{"type": "text", "text": "report ready"}]
    mismatches = [
        post(client, served.url, body, Mcp_Method="tools/list"),
        post(client, served.url, body, Mcp_Name="delete_file"),
        post(client, served.url, get_body, Mcp_Name="another-task"),
    ]
    for response in mismatches:
        assert response.status_code == 400
        assert client.answer(response)["error"]["code"] == -32020


def test_what_the_envelope_declares_decides(served: Served) -> None:
    """The page's notes: without the extension a task tool runs inline or is refused;
    without elicitation, a task that asks ends ``failed``."""
    client = raw_client()
    capabilities = client.ENVELOPE["io.modelcontextprotocol/clientCapabilities"]

    def call(tool: str, arguments: dict[str, Any], declared: dict[str, Any]) -> Any:
        meta = {**client.ENVELOPE, "io.modelcontextprotocol/clientCapabilities": declared}
        params = {"name": tool, "arguments": arguments, "_meta": meta}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        return client.answer(post(client, served.url, body))

    inline = call("build_report", {"seconds": 0}, {})["result"]
    assert inline["content"] == [{"type": "text", "text": "report ready"}]
    assert call("delete_file", {"filename": "d.txt"}, {})["error"]["code"] == -32021

    without_elicitation = {"extensions": capabilities["extensions"]}
    handle = call("delete_file", {"filename": "d.txt"}, without_elicitation)["result"]
    ended = client.poll(served.url, handle["taskId"], "input_required")  # it ends at once
    assert ended["status"] == "failed"
    assert ended["error"]["code"] == -32021
