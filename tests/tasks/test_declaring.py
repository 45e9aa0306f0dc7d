"""Task support declared on ``@tool`` and ``ToolSpec`` as on class tools, and the clear
failure of a task tool served where Docket (pydocket) is not installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from container import Container
from mcp_adapter import McpExtension, Platform, ToolSpec, tool
from mcp_adapter.serving.lowlevel import build_sdk_server
from tests import needs
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


def test_the_task_benchmark_measures_each_operation_in_memory_and_redis() -> None:
    needs.command("redis-server", "apt-get install -y redis-server")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.task_cost", "--calls", "3"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = {
        cells[0]: cells[1:]
        for line in done.stdout.splitlines()
        if line.startswith("| ") and not line.startswith("| operation")
        for cells in [[cell.strip() for cell in line.strip("|").split("|")]]
    }
    assert list(rows) == ["inline", "start", "result", "start + result"]
    for memory, redis, ratio in rows.values():
        assert float(memory) > 0
        assert float(redis) > 0
        assert float(ratio.removesuffix("x")) == pytest.approx(
            float(redis) / float(memory), rel=0.02
        )


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
