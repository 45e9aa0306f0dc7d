"""Each answered round is taken once: the same retry sent again is refused before anything
runs, in process (2026-07-28; the requestState exists only there).

A confirmed ``transfer`` retried twice with the same caller, arguments, state and
answers moved money twice before rounds were recorded; now the second retry is
``-32602 Invalid or expired requestState`` and the handler ran once. A round that led
to another round is spent too. The ledger keeps each round for the state's remaining
lifetime (and a minute for clocks that disagree), at most ``max_rounds`` at once.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import pytest
from mcp import types
from mcp.server.request_state import RequestStateSecurity

from container import Container
from mcp_adapter import (
    Elicit,
    McpRequest,
    McpResponse,
    Prompt,
    PromptArgument,
    Resolve,
    Resource,
    Server,
    Tool,
    compile_server,
)
from mcp_adapter.input.single_use import CLOCK_SKEW
from mcp_adapter.serving.lowlevel import build_sdk_server
from mcp_adapter.stores import MemoryRounds, RedisRounds, RoundLedger
from mcp_adapter.testing import McpResult, McpTestClient
from schemas import Schema

pytestmark = pytest.mark.anyio

FORM = {"elicitation": {"form": {}}}
INVALID = "Invalid or expired requestState"
KEY = "k" * 32


class Confirm(Schema):
    ok: bool


class Amount(Schema):
    amount: int


class Bank:
    def __init__(self) -> None:
        self.moves: list[str] = []


async def confirm_transfer(payload: Amount) -> Elicit[Confirm]:
    return Elicit(f"Move {payload.amount}?", Confirm)


class TransferTool(Tool[Amount]):
    """The question as a resolved parameter."""

    name = "transfer"

    async def handle(
        self, payload: Amount, bank: Bank, confirm: Annotated[Confirm, Resolve(confirm_transfer)]
    ) -> McpResponse:
        if not confirm.ok:
            return McpResponse.text("kept")
        bank.moves.append(f"transfer {payload.amount}")
        return McpResponse.text("moved")


class AskedTransferTool(Tool[Amount]):
    """The question asked by the handler (``McpResponse.elicit``)."""

    name = "asked-transfer"

    async def handle(self, payload: Amount, bank: Bank, request: McpRequest) -> McpResponse:
        answer = request.input_responses.get("confirm")
        if answer is None:
            return McpResponse.elicit("Move?", Confirm, key="confirm", state="asked")
        bank.moves.append(f"asked-transfer {payload.amount}")
        return McpResponse.text("moved")


class TwiceTool(Tool):
    """Asks in two rounds (the second once the first is answered)."""

    name = "twice"

    async def handle(self, bank: Bank, request: McpRequest) -> McpResponse:
        if request.request_state is None:
            return McpResponse.elicit("First?", Confirm, key="first", state="one")
        if request.request_state == "one":
            return McpResponse.elicit("Second?", Confirm, key="second", state="two")
        bank.moves.append("twice")
        return McpResponse.text("done")


async def confirm_prompt(topic: str) -> Elicit[Confirm]:
    return Elicit(f"Write about {topic}?", Confirm)


class WritePrompt(Prompt):
    name = "write"
    arguments = (PromptArgument(name="topic", required=True),)

    async def handle(
        self, topic: str, bank: Bank, confirm: Annotated[Confirm, Resolve(confirm_prompt)]
    ) -> McpResponse:
        bank.moves.append(f"write {topic}")
        return McpResponse.text(f"about {topic}")


async def confirm_read(id: str) -> Elicit[Confirm]:
    return Elicit(f"Read {id}?", Confirm)


class SecretResource(Resource):
    name = "secret"
    uri_template = "secret://{id}"

    async def handle(
        self, id: str, bank: Bank, confirm: Annotated[Confirm, Resolve(confirm_read)]
    ) -> McpResponse:
        bank.moves.append(f"read {id}")
        return McpResponse.text(f"secret {id}")


class BankServer(Server):
    name = "bank"
    tools = (TransferTool, AskedTransferTool, TwiceTool)
    prompts = (WritePrompt,)
    resources = (SecretResource,)


YES = {"action": "accept", "content": {"ok": True}}


def bank_client(rounds: RoundLedger | None = None) -> tuple[McpTestClient, Bank]:
    container = Container()
    bank = Bank()
    container.instance(Bank, bank)
    client = McpTestClient(container, BankServer, capabilities=FORM)
    if rounds is not None:
        security = RequestStateSecurity(keys=[KEY])
        catalog = compile_server(BankServer, container)
        client.sdk_server = build_sdk_server(
            catalog, container, request_state_security=security, rounds=rounds
        )
    return client, bank


# (method, params without the retry's fields)
CALLS = {
    "transfer": ("tools/call", {"name": "transfer", "arguments": {"amount": 5}}),
    "asked-transfer": ("tools/call", {"name": "asked-transfer", "arguments": {"amount": 5}}),
    "prompt": ("prompts/get", {"name": "write", "arguments": {"topic": "tea"}}),
    "resource": ("resources/read", {"uri": "secret://7"}),
}


async def ask(client: McpTestClient, which: str) -> dict[str, Any]:
    method, params = CALLS[which]
    first = (await client.request(method, params)).result
    assert first is not None
    assert first["resultType"] == "input_required", first
    return first


async def retry(client: McpTestClient, which: str, first: dict[str, Any]) -> McpResult:
    method, params = CALLS[which]
    answers = dict.fromkeys(first["inputRequests"], YES)
    return await client.request(
        method, {**params, "inputResponses": answers, "requestState": first["requestState"]}
    )


def refused(result: McpResult) -> None:
    assert result.error is not None, result
    assert result.error["code"] == types.INVALID_PARAMS
    assert result.error["message"] == INVALID
    assert result.error["data"] == {"reason": "invalid_request_state"}


@pytest.mark.parametrize("which", list(CALLS))
async def test_the_same_retry_sent_again_is_refused_and_runs_nothing(which: str) -> None:
    client, bank = bank_client()
    first = await ask(client, which)
    honest = await retry(client, which, first)
    assert honest.error is None, honest
    assert len(bank.moves) == 1
    for _ in range(3):
        refused(await retry(client, which, first))
    assert len(bank.moves) == 1  # the confirmed action ran once


async def test_a_round_that_led_to_another_is_spent() -> None:
    client, bank = bank_client()
    first = (await client.tool("twice")).result
    assert first is not None
    retried = {"name": "twice", "arguments": {}, "inputResponses": {"first": YES}}
    second = await client.request("tools/call", {**retried, "requestState": first["requestState"]})
    assert second.result is not None
    assert second.result["resultType"] == "input_required"
    refused(await client.request("tools/call", {**retried, "requestState": first["requestState"]}))
    final = {
        "name": "twice",
        "arguments": {},
        "inputResponses": {"second": YES},
        "requestState": second.result["requestState"],
    }
    assert (await client.request("tools/call", final)).texts == ["done"]
    refused(await client.request("tools/call", final))
    assert bank.moves == ["twice"]


async def test_two_identical_retries_at_once_run_the_action_once() -> None:
    client, bank = bank_client()
    first = await ask(client, "transfer")
    results: list[McpResult] = []

    async def send() -> None:
        results.append(await retry(client, "transfer", first))

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(send)
    assert sorted(r.texts == ["moved"] for r in results) == [False, False, False, True]
    for result in results:
        if result.texts != ["moved"]:
            refused(result)
    assert bank.moves == ["transfer 5"]


async def test_every_call_asking_afresh_gets_a_state_of_its_own() -> None:
    """Two calls with the same arguments, asked the same question: each retry is taken."""
    client, bank = bank_client()
    one, two = await ask(client, "transfer"), await ask(client, "transfer")
    assert (await retry(client, "transfer", two)).texts == ["moved"]
    assert (await retry(client, "transfer", one)).texts == ["moved"]
    assert bank.moves == ["transfer 5", "transfer 5"]


async def test_a_refused_state_is_not_spent() -> None:
    """A retry the boundary refuses (other arguments) records nothing: the honest retry
    still goes through."""
    client, bank = bank_client()
    first = await ask(client, "transfer")
    answers = dict.fromkeys(first["inputRequests"], YES)
    other = {"name": "transfer", "arguments": {"amount": 500}, "inputResponses": answers}
    refused(await client.request("tools/call", {**other, "requestState": first["requestState"]}))
    assert (await retry(client, "transfer", first)).texts == ["moved"]
    assert bank.moves == ["transfer 5"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_round_is_kept_for_the_states_lifetime_and_a_minute_then_forgotten() -> None:
    clock = Clock()
    rounds = MemoryRounds(clock=clock)
    client, _ = bank_client(rounds)
    first = await ask(client, "transfer")
    assert (await retry(client, "transfer", first)).texts == ["moved"]
    assert len(rounds) == 1
    clock.now += CLOCK_SKEW + 1  # a state lives 600 s: still recorded
    assert len(rounds) == 1
    clock.now += 600.0  # past the state's lifetime and the skew
    assert len(rounds) == 0


async def test_a_full_ledger_refuses_a_new_round_until_one_expires() -> None:
    clock = Clock()
    rounds = MemoryRounds(max_rounds=1, clock=clock)
    client, bank = bank_client(rounds)
    one, two = await ask(client, "transfer"), await ask(client, "transfer")
    assert (await retry(client, "transfer", one)).texts == ["moved"]
    full = await retry(client, "transfer", two)
    assert full.error is not None
    assert full.error["code"] == types.INTERNAL_ERROR
    assert full.error["message"].startswith("The answers could not be taken; call again later")
    assert bank.moves == ["transfer 5"]
    clock.now += 600.0 + CLOCK_SKEW + 1
    assert (await retry(client, "transfer", two)).texts == ["moved"]  # it was not spent
    assert bank.moves == ["transfer 5", "transfer 5"]


async def test_a_ledger_that_does_not_answer_refuses_the_retry_and_spends_nothing() -> None:
    import fakeredis

    server = fakeredis.FakeServer()
    server.connected = False  # Redis is down
    client = fakeredis.FakeAsyncRedis(server=server)
    bank_ledger, bank = bank_client(RedisRounds(client, "p:rounds", timeout=5))
    first = await ask(bank_ledger, "transfer")
    down = await retry(bank_ledger, "transfer", first)
    assert down.error is not None
    assert down.error["code"] == types.INTERNAL_ERROR
    assert down.error["message"].startswith("The answers could not be taken; call again later")
    assert "Redis" not in down.error["message"]  # the reason goes to the log only
    assert bank.moves == []
    await client.aclose()


def test_the_memory_ledger_forgets_each_round_at_its_own_time() -> None:
    clock = Clock()
    rounds = MemoryRounds(max_rounds=3, clock=clock)
    assert rounds.consume_now("a", 10.0)
    assert rounds.consume_now("b", 5.0)
    assert not rounds.consume_now("a", 10.0)
    clock.now += 5.0
    assert len(rounds) == 1  # b is gone, a is not
    assert rounds.consume_now("b", 5.0)
    assert not rounds.consume_now("a", 1.0)
    clock.now += 5.0
    assert rounds.consume_now("a", 1.0)
    with pytest.raises(ValueError, match="at least one round"):
        MemoryRounds(max_rounds=0)
