"""The order app of ``examples/apps`` through the SDK's own client, and its view rendered
once in headless Chromium from a host page that reads the resource and hands it the
tool's result, as an MCP Apps host does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from examples.apps.server import VIEW_URI, ShopServer, container
from mcp import Client, StdioServerParameters, types
from mcp.client.extension import advertise
from mcp.server.apps import EXTENSION_ID

from mcp_adapter import APP_MIME_TYPE, build_sdk_server, compile_server
from mcp_adapter.testing import texts_of
from tests.apps.png import Pixel, pixels
from tests.needs import command
from tests.serving.clients import CALL_TIMEOUT
from tests.serving.harness import REPO, cli_env

pytestmark = pytest.mark.anyio

APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
MODES = ["auto", "legacy"]  # 2026-07-28 (discovered), then the 2025-11-25 handshake
CHROMIUM_TIMEOUT = 120  # seconds: a bound on a stuck browser, not a speed threshold


def served() -> Any:
    shop = container()
    return build_sdk_server(compile_server(ShopServer, shop), shop)


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_with_apps_sees_the_view_and_reads_it(mode: str) -> None:
    async with Client(served(), mode=mode, extensions=[APPS]) as client:
        (tool,) = (await client.list_tools()).tools
        assert tool.meta == {"ui": {"resourceUri": VIEW_URI}}
        read = await client.read_resource(VIEW_URI)
        (contents,) = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.mime_type == APP_MIME_TYPE == "text/html;profile=mcp-app"
        assert '<h1 id="title">Corner Shop</h1>' in contents.text  # an injected service
        listed = (await client.list_resources()).resources
        assert [(r.uri, r.mime_type) for r in listed] == [(VIEW_URI, APP_MIME_TYPE)]
        answer = await client.call_tool("order_summary", {"order": "A-1"})
        assert texts_of(answer)[0] == "Order A-1: 15.00 EUR."
        assert answer.structured_content is not None
        assert answer.structured_content["total"] == 15.0


async def test_the_server_declares_the_extension_in_2026_07_28() -> None:
    async with Client(served(), mode="auto", extensions=[APPS]) as client:
        assert client.protocol_version == "2026-07-28"
        extensions = client.server_capabilities.extensions or {}
        assert extensions == {EXTENSION_ID: {}}


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_apps_gets_no_view_and_the_whole_answer_in_text(
    mode: str,
) -> None:
    async with Client(served(), mode=mode) as client:
        (tool,) = (await client.list_tools()).tools
        assert tool.meta is None
        answer = await client.call_tool("order_summary", {"order": "A-1"})
        assert texts_of(answer)[0] == "Order A-1: 2 x Tea, 1 x Mug; total 15.00 EUR."


async def test_python_m_examples_apps_serves_it_over_stdio() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "examples.apps"], env=cli_env(), cwd=REPO
    )
    with anyio.fail_after(CALL_TIMEOUT):  # a bound on a stuck process, not a speed threshold
        async with Client(params, extensions=[APPS]) as client:
            (tool,) = (await client.list_tools()).tools
            assert tool.meta == {"ui": {"resourceUri": VIEW_URI}}
            read = await client.read_resource(VIEW_URI)
            assert read.contents[0].mime_type == APP_MIME_TYPE


# -- the view, rendered ------------------------------------------------------------------------

GREEN: Pixel = (0x1A, 0x7F, 0x37)
"""The background of the view's total (``#total`` in view.html), shown only once it has
rendered a result."""

HOST = """<!doctype html>
<html><body style="margin:0;background:#fff">
<iframe id="view" sandbox="allow-scripts" style="border:0;width:780px;height:580px"></iframe>
<script>
const page = %(page)s;
const result = %(result)s;
const view = document.getElementById("view");
window.addEventListener("message", (event) => {
  const message = event.data || {};
  const reply = (body) => view.contentWindow.postMessage({jsonrpc: "2.0", ...body}, "*");
  if (message.method === "ui/initialize") {
    reply({id: message.id, result: {protocolVersion: message.params.protocolVersion,
      hostInfo: {name: "test-host", version: "0"}, hostCapabilities: {}, hostContext: {}}});
  } else if (message.method === "ui/notifications/initialized" && result !== null) {
    reply({method: "ui/notifications/tool-input", params: {arguments: {order: "A-1"}}});
    reply({method: "ui/notifications/tool-result", params: result});
  }
});
view.srcdoc = page;
</script>
</body></html>
"""


def script_literal(value: object) -> str:
    """``value`` as a JavaScript literal inside ``<script>``: no ``</`` to end it early."""
    return json.dumps(value).replace("</", "<\\/")


def near(pixel: Pixel, colour: Pixel, tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True))


def screenshot(folder: Path, page: str, result: dict[str, Any] | None) -> list[list[Pixel]]:
    """Render the host page with ``page`` as the view and ``result`` as the tool's result
    (``None``: the host never sends one) and return the screenshot's pixels."""
    chromium = command("chromium", "apt-get install -y chromium (Debian's package)")
    folder.mkdir()
    host = folder / "host.html"
    host.write_text(HOST % {"page": script_literal(page), "result": script_literal(result)})
    shot = folder / "shot.png"
    run = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # the CI container runs as root
            "--disable-gpu",
            # the sandboxed view in the host's process, so that the virtual time the
            # screenshot waits for covers the messages between the two frames
            "--disable-site-isolation-trials",
            "--disable-features=IsolateOrigins,site-per-process",
            f"--user-data-dir={folder / 'profile'}",
            "--window-size=800,600",
            "--virtual-time-budget=10000",
            f"--screenshot={shot}",
            host.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=CHROMIUM_TIMEOUT,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert shot.exists(), run.stderr[-2000:]
    return pixels(shot)


async def test_the_view_shows_the_tool_result_in_chromium(tmp_path: Path) -> None:
    async with Client(served(), mode="auto", extensions=[APPS]) as client:
        (tool,) = (await client.list_tools()).tools
        assert tool.meta is not None
        read = await client.read_resource(tool.meta["ui"]["resourceUri"])
        (contents,) = read.contents
        assert isinstance(contents, types.TextResourceContents)
        answer = await client.call_tool("order_summary", {"order": "A-1"})
    result = answer.model_dump(by_alias=True, mode="json", exclude_none=True)

    waiting = screenshot(tmp_path / "waiting", contents.text, None)
    assert not any(near(pixel, GREEN) for row in waiting for pixel in row), (
        "the total is shown before any result: the check below would prove nothing"
    )

    rows = screenshot(tmp_path / "rendered", contents.text, result)
    green = [
        (x, y) for y, row in enumerate(rows) for x, pixel in enumerate(row) if near(pixel, GREEN)
    ]
    assert len(green) > 5_000, f"the total is not visible ({len(green)} green pixels)"
    left = min(x for x, _ in green)
    right = max(x for x, _ in green)
    top = min(y for _, y in green)
    bottom = max(y for _, y in green)
    inside = [rows[y][x] for y in range(top, bottom + 1) for x in range(left, right + 1)]
    assert sum(near(pixel, (255, 255, 255), 40) for pixel in inside) > 100, (
        "the total's box has no text in it"
    )
