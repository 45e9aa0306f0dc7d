"""The seed's ``Sandboxes`` extension: one tool, offered with ``@tool``.

Run ``uv run python examples/extensions/sandboxes.py`` to call it without a server,
then through the host, as a client would.
"""

from __future__ import annotations

import asyncio

from container import Container
from mcp_adapter import McpExtension, Platform, PluginManifest, tool
from mcp_adapter.testing import McpTestClient


class SandboxHost:
    """Stands in for the service that really starts sandboxes."""

    def __init__(self) -> None:
        self.running: list[str] = []

    async def launch(self, sandbox_name: str, variant: str) -> dict[str, str]:
        self.running.append(sandbox_name)
        return {"sandbox": sandbox_name, "variant": variant, "status": "running"}


HOST = SandboxHost()


async def launch(sandbox_name: str, variant: str) -> dict[str, str]:
    return await HOST.launch(sandbox_name, variant)


class Sandboxes(McpExtension):
    def manifest(self) -> PluginManifest:
        return PluginManifest(name="sandboxes", version="1.0.0")

    @tool(title="Launch Sandbox")
    async def launch_sandbox(self, sandbox_name: str, variant: str = "eval") -> dict[str, str]:
        """Launch a sandbox for this session to run code in."""
        return await launch(sandbox_name, variant)


async def main() -> None:
    print("without a server:", await Sandboxes().launch_sandbox("scratch"))
    catalog = Platform([Sandboxes()]).compile(Container())
    client = McpTestClient(Container(), catalog)
    result = await client.tool("launch_sandbox", {"sandbox_name": "demo"})
    print("through the host:", result.result["structuredContent"] if result.result else result)


if __name__ == "__main__":
    asyncio.run(main())
