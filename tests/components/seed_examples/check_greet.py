# Seed 004, "Check the contract without a network server": check_greet.py, verbatim
# but for the import lines (DemoServer comes from the seed's demo_server module here).
import asyncio

from container import Container
from mcp_adapter.testing import McpTestClient
from tests.components.seed_examples.demo_server import DemoServer


async def main() -> None:
    client = McpTestClient(Container(), DemoServer)
    result = await client.tool("greet", {"name": "Ada"})
    result.assertOk()
    assert result.message["result"]["structuredContent"] == "Hello, Ada!"
    result.assertTextContains("Hello, Ada!")


if __name__ == "__main__":
    asyncio.run(main())
