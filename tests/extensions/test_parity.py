"""The same tools through the host and through ``put_on_server``, compared field by field.

Host: ``McpTestClient`` (JSON-RPC text) over a ``Platform``-compiled catalog.
``put_on_server``: ``mcp.Client`` on an ``MCPServer`` and on a low-level ``Server``.
Valid, invalid and failing inputs, in both protocol eras.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from mcp.server import Server as LowLevelServer
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from container import Container
from mcp_adapter import (
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    ToolAnnotations,
    put_on_server,
    tool,
)
from tests.extensions.support import (
    ERAS,
    MODERN,
    comparable,
    host_call,
    host_tools,
    sdk_call,
    sdk_tools,
)

pytestmark = pytest.mark.anyio


class Pool:
    """A per-request service: counts the sandboxes launched in one scope."""

    def __init__(self) -> None:
        self.launched = 0


class Lab(McpExtension):
    @tool(
        title="Launch Sandbox",
        annotations=ToolAnnotations(idempotent=False, open_world=False),
        meta={"scope": "lab:write"},
    )
    async def launch_sandbox(
        self,
        sandbox_name: str,
        pool: Pool,
        request: McpRequest,
        variant: Literal["eval", "gpu"] = "eval",
        cpus: Annotated[int, Field(ge=1, le=8)] = 1,
    ) -> dict:
        """Launch a sandbox for this session to run code in."""
        if sandbox_name == "explode":
            raise RuntimeError("the host at 10.0.0.7 refused (secret)")
        if sandbox_name == "taken":
            return McpResponse.error("That sandbox name is taken.")  # type: ignore[return-value]
        pool.launched += 1
        return {
            "sandbox": sandbox_name,
            "variant": variant,
            "cpus": cpus,
            "method": request.method,
            "launched": pool.launched,
        }

    @tool()
    def count(self, items: list[str]) -> int:
        """Count items (returns a non-integer for 'bad', violating its output contract)."""
        return "many" if "bad" in items else len(items)  # type: ignore[return-value]

    @tool()
    def describe(self, topic: str = "sandboxes") -> str:
        """A non-object output."""
        return f"About {topic}."


CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("valid", "launch_sandbox", {"sandbox_name": "a"}),
    ("valid, every argument", "launch_sandbox", {"sandbox_name": "b", "variant": "gpu", "cpus": 4}),
    ("invalid: missing", "launch_sandbox", {}),
    ("invalid: extra and wrong type", "launch_sandbox", {"sandbox_name": 5, "pool": "x"}),
    (
        "invalid: constraint and literal",
        "launch_sandbox",
        {"sandbox_name": "c", "cpus": 99, "variant": "tpu"},
    ),
    ("failing: raises", "launch_sandbox", {"sandbox_name": "explode"}),
    ("failing: business error", "launch_sandbox", {"sandbox_name": "taken"}),
    ("valid: int output", "count", {"items": ["x", "y"]}),
    ("failing: output contract", "count", {"items": ["bad"]}),
    ("invalid: not a list", "count", {"items": "x"}),
    ("valid: default", "describe", {}),
    ("unknown tool", "nope", {}),
]


NON_OBJECT = {"count", "describe"}


def container() -> Container:
    built = Container()
    built.scoped(Pool)
    return built


def servers(services: Container) -> dict[str, Any]:
    mcpserver = MCPServer("lab")
    put_on_server(mcpserver, Lab().tools(), services)
    lowlevel: LowLevelServer = LowLevelServer("lab")
    put_on_server(lowlevel, Lab().tools(), services)
    return {"mcpserver": mcpserver, "lowlevel": lowlevel}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("case", "name", "arguments"), CASES, ids=[c[0] for c in CASES])
async def test_calls_match_field_by_field(
    era: str, case: str, name: str, arguments: dict[str, Any]
) -> None:
    services = container()
    catalog = Platform([Lab()]).compile(services)
    hosted = comparable(await host_call(services, catalog, name, arguments, era))
    for kind, server in servers(services).items():
        served = comparable(await sdk_call(server, name, arguments, era))
        if kind == "mcpserver" and name == "nope":
            # an unknown name is MCPServer's own business: it answers with a tool error
            assert served["isError"] is True
            assert served["content"] == [{"type": "text", "text": "Unknown tool: nope"}]
            continue
        wrapped = kind == "mcpserver" and era == MODERN and name in NON_OBJECT
        if wrapped and not hosted["isError"]:
            # MCPServer lists one schema for both eras: a non-object output is wrapped
            assert served["structuredContent"] == {"result": hosted["structuredContent"]}
            served["structuredContent"] = hosted["structuredContent"]
        assert served == hosted, f"{kind} differs from the host for {case!r} ({era})"
    if case.startswith("invalid"):
        assert hosted["isError"] is True
        assert hosted["content"][0]["text"].startswith("Invalid tool arguments\n- ")
        assert "99" not in str(hosted)  # rejected values are never echoed
        assert "tpu" not in str(hosted)
    elif case == "failing: raises" or case == "failing: output contract":
        assert hosted["content"] == [
            {"type": "text", "text": "Tool execution failed (incident <incident>)"}
        ]
        assert hosted["_meta"] == {"incident": "<incident>"}
    elif case == "unknown tool":
        assert hosted["error"]["message"] == "Unknown tool: nope"
    else:
        assert "error" not in hosted


@pytest.mark.parametrize("era", ERAS)
async def test_listings_match_field_by_field(era: str) -> None:
    services = container()
    catalog = Platform([Lab()]).compile(services)
    hosted = await host_tools(services, catalog, era)
    assert {entry["name"] for entry in hosted} == {"launch_sandbox", "count", "describe"}
    launch = next(entry for entry in hosted if entry["name"] == "launch_sandbox")
    assert set(launch["inputSchema"]["properties"]) == {"sandbox_name", "variant", "cpus"}
    assert launch["_meta"] == {"scope": "lab:write"}
    for kind, server in servers(services).items():
        served = await sdk_tools(server, era)
        if kind == "mcpserver" and era == MODERN:
            # MCPServer lists the 2025-11-25 form of non-object outputs in every era
            legacy = await host_tools(services, catalog, "2025-11-25")
            expected = [
                legacy_entry if entry["name"] in NON_OBJECT else entry
                for entry, legacy_entry in zip(hosted, legacy, strict=True)
            ]
            assert served == expected
        else:
            assert served == hosted, f"{kind} lists differently from the host ({era})"


async def test_each_call_gets_its_own_scope_on_every_server() -> None:
    services = container()
    for server in servers(services).values():
        for _ in range(2):
            result = await sdk_call(server, "launch_sandbox", {"sandbox_name": "s"}, MODERN)
            assert result["structuredContent"]["launched"] == 1
