"""Every tool example of seed 004, run as written (only the import lines changed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from container import Container
from mcp_adapter import Server
from mcp_adapter.testing import McpTestClient
from tests.seed_examples import check_greet
from tests.seed_examples.demo_server import DemoServer, GreetingService, NameFormatter
from tests.seed_examples.echo_tool import EchoTool
from tests.seed_examples.greet_tool import GreetTool
from tests.seed_examples.summary_tool import SummaryTool
from tests.tools.drivers import LEGACY, MODERN, Driver

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


class EchoServer(Server):
    tools = (EchoTool,)


class GreetServer(Server):
    """The server the seed tells a user to register ``GreetTool`` in."""

    name = "Demo"
    tools = (GreetTool,)


class SummaryServer(Server):
    tools = (SummaryTool,)


# -- the EchoTool template ---------------------------------------------------------------


async def test_echo_template_is_listed_with_its_contract(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), EchoServer, "echo")
    assert entry["description"] == "Echo the provided message."
    assert entry["inputSchema"]["type"] == "object"
    assert entry["inputSchema"]["properties"] == {"message": {"title": "Message", "type": "string"}}
    assert entry["inputSchema"]["required"] == ["message"]
    assert "outputSchema" not in entry


async def test_echo_template_returns_the_message_as_text(driver: Driver) -> None:
    result = await driver.call(Container(), EchoServer, "echo", {"message": "hi there"})
    result.assertOk()
    assert result.result is not None
    assert result.result["content"] == [{"type": "text", "text": "hi there"}]
    assert "structuredContent" not in result.result


async def test_echo_template_rejects_a_missing_message(driver: Driver) -> None:
    result = await driver.call(Container(), EchoServer, "echo", {})
    result.assertError("Invalid tool arguments")
    result.assertTextContains("message")


# -- GreetTool with annotations -------------------------------------------------------------


async def test_greet_example_is_listed_with_title_description_and_hints(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), GreetServer, "greet")
    assert entry["title"] == "Greet a user"
    assert entry["description"] == "Return a friendly greeting for the supplied name."
    assert entry["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    if driver.modern:
        assert entry["outputSchema"] == {"type": "string"}
    else:
        assert entry["outputSchema"] == {
            "type": "object",
            "properties": {"result": {"type": "string"}},
            "required": ["result"],
        }


async def test_greet_example_returns_structured_text(driver: Driver) -> None:
    result = await driver.call(Container(), GreetServer, "greet", {"name": "Ada"})
    result.assertOk()
    expected = "Hello, Ada!" if driver.modern else {"result": "Hello, Ada!"}
    result.assertStructured(expected)
    assert result.texts == ["Hello, Ada!"]  # a string is its own text


async def test_greet_example_business_error_skips_the_output_contract(driver: Driver) -> None:
    result = await driver.call(Container(), GreetServer, "greet", {"name": "   "})
    result.assertError("Provide a nonempty name.")
    assert result.result is not None
    assert "structuredContent" not in result.result


# -- SummaryTool ------------------------------------------------------------------------------


async def test_summary_example_returns_the_documented_object(driver: Driver) -> None:
    result = await driver.call(Container(), SummaryServer, "summarize", {"values": [2.5, 3.5]})
    result.assertOk()
    result.assertStructured({"count": 2, "total": 6.0})
    assert [json.loads(text) for text in result.texts] == [{"count": 2, "total": 6.0}]


async def test_summary_example_object_schema_is_the_same_in_both_eras(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), SummaryServer, "summarize")
    schema = entry["outputSchema"]
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"count", "total"}
    assert "result" not in schema["properties"]


async def test_summary_example_rejects_a_non_number(driver: Driver) -> None:
    result = await driver.call(Container(), SummaryServer, "summarize", {"values": [1, "two"]})
    result.assertError("Invalid tool arguments")
    result.assertTextContains("values.1")


# -- the services example -------------------------------------------------------------------


async def test_services_example_injects_constructor_and_handle_services(driver: Driver) -> None:
    result = await driver.call(Container(), DemoServer, "greet", {"name": "  Ada  "})
    result.assertOk()
    result.assertStructured("Hello, Ada!" if driver.modern else {"result": "Hello, Ada!"})


async def test_services_example_schema_shows_only_the_payload(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), DemoServer, "greet")
    assert set(entry["inputSchema"]["properties"]) == {"name"}
    assert entry["inputSchema"]["required"] == ["name"]
    text = json.dumps(entry)
    assert "names" not in text
    assert "greetings" not in text
    assert "NameFormatter" not in text


async def test_services_example_payload_key_named_like_a_service_is_rejected(
    driver: Driver,
) -> None:
    result = await driver.call(
        Container(), DemoServer, "greet", {"name": "Ada", "names": "not a formatter"}
    )
    result.assertError("Invalid tool arguments")
    result.assertTextContains("names")
    assert "not a formatter" not in json.dumps(result.message)


async def test_services_example_uses_the_container_bindings(driver: Driver) -> None:
    class Shouting(NameFormatter):
        def normalize(self, name: str) -> str:
            return name.strip().upper()

    class Formal(GreetingService):
        def greet(self, name: str) -> str:
            return f"Good day, {name}."

    container = Container()
    container.bind(NameFormatter, Shouting)
    container.bind(GreetingService, Formal)
    result = await driver.call(container, DemoServer, "greet", {"name": " ada "})
    result.assertOk()
    expected = "Good day, ADA."
    result.assertStructured(expected if driver.modern else {"result": expected})


# -- check_greet.py -----------------------------------------------------------------------


async def test_check_greet_main_passes() -> None:
    await check_greet.main()


async def test_check_greet_flow_with_the_greet_tool_example() -> None:
    """The seed says check_greet works with DemoServer "from either complete example"."""
    client = McpTestClient(Container(), GreetServer)
    result = await client.tool("greet", {"name": "Ada"})
    result.assertOk()
    assert result.message["result"]["structuredContent"] == "Hello, Ada!"
    result.assertTextContains("Hello, Ada!")


@pytest.mark.parametrize("server", [DemoServer, GreetServer], ids=["services", "greet"])
async def test_check_greet_flow_in_the_2025_era_wraps_the_string(server: type[Server]) -> None:
    client = McpTestClient(Container(), server, protocol=LEGACY)
    result = await client.tool("greet", {"name": "Ada"})
    result.assertOk()
    assert result.message["result"]["structuredContent"] == {"result": "Hello, Ada!"}
    result.assertTextContains("Hello, Ada!")
    listed = (await client.list_tools()).assertOk()
    assert listed.result is not None
    (entry,) = listed.result["tools"]
    assert entry["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
    }


async def test_check_greet_flow_in_the_2026_era_lists_the_bare_schema() -> None:
    client = McpTestClient(Container(), DemoServer, protocol=MODERN)
    listed = (await client.list_tools()).assertOk()
    assert listed.result is not None
    (entry,) = listed.result["tools"]
    assert entry["outputSchema"] == {"type": "string"}


DIAGNOSTICS = (
    "PYTHONASYNCIODEBUG",
    "PYTHONDEVMODE",
    "PYTHONWARNINGS",
    "PYTHONVERBOSE",
    "PYTHONPROFILEIMPORTTIME",
)
"""Settings of the caller's shell that make the interpreter itself write to stderr: with
asyncio debug on (``PYTHONASYNCIODEBUG``, ``PYTHONDEVMODE``), a loaded machine gets
``Executing <Task ...> took 0.2 seconds`` for the script's first step (compiling the server),
which says nothing about the script."""


def test_check_greet_runs_as_a_program() -> None:
    """``python -B check_greet.py``, as the seed runs it (repository root importable).

    It runs as a user's plain interpreter would, without the diagnostics a developer's or
    CI's environment may have turned on, and is bounded so that a hang fails the test.
    """
    env = {k: v for k, v in os.environ.items() if k not in DIAGNOSTICS}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src")])
    script = ROOT / "tests" / "seed_examples" / "check_greet.py"
    done = subprocess.run(
        [sys.executable, "-B", str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == ""
