"""Task support declared on ``@tool`` and ``ToolSpec`` as on class tools, and the clear
failure of a task tool served where Docket (pydocket) is not installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from container import Container
from mcp_adapter import McpExtension, Platform, ToolSpec, tool
from mcp_adapter.serving.lowlevel import build_sdk_server
from tests.tasks.helpers import connected

pytestmark = pytest.mark.anyio


class Reports(McpExtension):
    @tool(task_support="required")
    async def build_report(self, title: str) -> str:
        """Builds a report (a long job)."""
        return f"report {title}"

    def tools(self) -> list[ToolSpec]:
        async def count(upto: int) -> int:
            return upto

        return [
            *super().tools(),
            ToolSpec(name="count", handler=count, task_support="optional"),
            ToolSpec(name="now", handler=lambda: "now"),
        ]


async def test_function_tools_declare_task_support() -> None:
    container = Container()
    catalog = Platform([Reports()]).compile(container)
    assert catalog.tools["build_report"].task_support == "required"
    assert catalog.tools["count"].task_support == "optional"
    assert catalog.tools["now"].task_support == "forbidden"
    async with connected(None, built=build_sdk_server(catalog, container)) as tasks:
        report = await tasks.until((await tasks.call("build_report", {"title": "Q3"}))["taskId"])
        assert report["result"]["structuredContent"] == "report Q3"
        counted = await tasks.until((await tasks.call("count", {"upto": 3}))["taskId"])
        assert counted["result"]["structuredContent"] == 3
        assert (await tasks.call("now"))["content"] == [{"type": "text", "text": "now"}]


def test_a_task_tool_without_pydocket_fails_to_compile_with_the_install_hint() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["docket"] = None  # as if pydocket were not installed
        from container import Container
        from mcp_adapter import CompileError, McpResponse, Server, Tool, compile_server

        class Long(Tool):
            name = "long"
            task_support = "optional"
            async def handle(self) -> McpResponse:
                return McpResponse.text("")

        class Needs(Server):
            tools = (Long,)

        try:
            compile_server(Needs, Container())
        except CompileError as failed:
            print(failed)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "may run as tasks, which run on Docket (pydocket), and it is not installed" in (
        done.stdout
    )
    assert "pip install 'mcp-adapter-di[tasks]'" in done.stdout


def test_check_names_a_task_tool_whose_service_needs_the_http_request() -> None:
    from tests.serving.harness import run_cli

    done = run_cli(
        [
            "check",
            "tests.tasks.peeking:Peeking",
            "--container",
            "tests.tasks.peeking:build_container",
        ]
    )
    assert done.returncode != 0
    report = done.stdout + done.stderr
    assert "tool 'peeks'" in report
    assert "HTTP Request" in report
    assert "ends before the task does" in report
    assert "hint:" in report
