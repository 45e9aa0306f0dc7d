# Seed 004, "Check the contract without a network server": check_greet.py.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
# ruff: noqa: I001
import asyncio

from tests.seed_examples.demo_server import DemoServer
from container import Container
from mcp_adapter.testing import McpTestClient


async def main() -> None:
    client = McpTestClient(Container(), DemoServer)
    result = await client.tool("greet", {"name": "Ada"})
    result.assertOk()
    assert result.message["result"]["structuredContent"] == "Hello, Ada!"
    result.assertTextContains("Hello, Ada!")


if __name__ == "__main__":
    asyncio.run(main())
