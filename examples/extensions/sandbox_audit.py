"""A second extension that extends ``Sandboxes``' ``launch_sandbox`` by name.

It never imports the tool's code: it contributes a ``ToolExtension`` under the
name ``launch_sandbox``, which the platform applies when it builds the server:

- middleware around the call: refuse the ``prod`` variant, record every launch;
- amendments of what clients read: the description, a meta entry, annotations.

Run ``uv run python examples/extensions/sandbox_audit.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.types import ToolAnnotations
from sandboxes import Sandboxes

from container import Container
from mcp_adapter import McpExtension, McpResponse, Platform, PluginManifest
from mcp_adapter.extensions import Call, Next, ToolExtension
from mcp_adapter.testing import McpTestClient


class SandboxAudit(McpExtension):
    def __init__(self) -> None:
        self.log: list[str] = []

    def manifest(self) -> PluginManifest:
        return PluginManifest(name="sandbox-audit", version="1.0.0")

    def tool_extensions(self) -> list[ToolExtension]:
        return [
            ToolExtension(
                "launch_sandbox",
                middleware=self.audit,
                description=(
                    "Launch a sandbox for this session to run code in. "
                    "Launches are audited; the prod variant is not available."
                ),
                meta={"audit": {"policy": "no-prod"}},
                annotations=ToolAnnotations(
                    read_only_hint=False,
                    destructive_hint=False,
                    idempotent_hint=False,
                    open_world_hint=False,
                ),
            )
        ]

    async def audit(self, call: Call, call_next: Next) -> Any:
        name = call.arguments["sandbox_name"]
        if call.arguments["variant"] == "prod":
            self.log.append(f"refused {name}")
            return McpResponse.error("The prod variant cannot be launched from a session.")
        result = await call_next(call)
        self.log.append(f"launched {name}")
        return result


async def main() -> None:
    audit = SandboxAudit()
    catalog = Platform([Sandboxes(), audit]).compile(Container())
    client = McpTestClient(Container(), catalog)
    [entry] = ((await client.list_tools()).assertOk().result or {})["tools"]
    print("description:", entry["description"])
    print("meta:", entry["_meta"])
    ok = await client.tool("launch_sandbox", {"sandbox_name": "demo"})
    print("eval:", ok.structured)
    refused = await client.tool("launch_sandbox", {"sandbox_name": "live", "variant": "prod"})
    print("prod:", refused.texts)
    print("audit log:", audit.log)


if __name__ == "__main__":
    asyncio.run(main())
