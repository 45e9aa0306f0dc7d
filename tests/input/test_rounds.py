"""Rounds of questions: several in 2026-07-28 by hand, the sealed record of answers, the
attacker's retries, the limits; a thread-bound call in 2025-11-25.
"""

from __future__ import annotations

import inspect
import threading
from typing import Annotated, Any

import anyio
import pytest
from mcp import types

from container import Container
from mcp_adapter import Elicit, McpResponse, Resolve, Server, Tool, compile_server
from mcp_adapter.input.asking import MAX_STATE_CHARS
from mcp_adapter.input.resolution import MAX_INPUT_ROUNDS, MAX_QUESTIONS_PER_ROUND
from mcp_adapter.testing import McpResult, McpTestClient
from schemas import Schema
from tests.components.support import LEGACY, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

FORM = {"elicitation": {"form": {}}}


class Name(Schema):
    name: str


class Count(Schema):
    count: int


class Book:
    """Mutable facts the questions are built from, and what the handlers did."""

    def __init__(self) -> None:
        self.price = 10
        self.handled: list[str] = []
        self.threads: set[int] = set()


async def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


async def ask_count(book: Book) -> Elicit[Count]:
    return Elicit(f"How many, at {book.price} each?", Count)


async def ask_again(
    name: Annotated[Name, Resolve(ask_name)], count: Annotated[Count, Resolve(ask_count)]
) -> Elicit[Name]:
    """Asked once both others are answered: a second round."""
    return Elicit(f"Confirm {count.count} for {name.name}: type your name again", Name)


class OrderTool(Tool):
    name = "order"

    async def handle(
        self,
        book: Book,
        name: Annotated[Name, Resolve(ask_name)],
        count: Annotated[Count, Resolve(ask_count)],
        again: Annotated[Name, Resolve(ask_again)],
    ) -> McpResponse:
        book.handled.append("order")
        return McpResponse.text(f"{count.count} for {name.name} ({again.name})")


async def ask_forever(book: Book) -> Elicit[Count]:
    book.price += 1  # a new question every round
    return Elicit(f"How many, at {book.price}?", Count)


class ForeverTool(Tool):
    name = "forever"

    async def handle(self, count: Annotated[Count, Resolve(ask_forever)]) -> McpResponse:
        return McpResponse.text("never")


class Connection:
    """Stands for a resource that must stay on the thread that made it."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def check(self) -> None:
        assert threading.get_ident() == self.thread, "used on another thread"


def ask_name_sync(connection: Connection) -> Elicit[Name]:
    connection.check()
    return Elicit("Your name?", Name)


class SyncTool(Tool):
    """Everything sync: a thread-bound call, which may not hold its thread while asking."""

    name = "sync"

    def handle(
        self, book: Book, connection: Connection, name: Annotated[Name, Resolve(ask_name_sync)]
    ) -> McpResponse:
        connection.check()
        book.handled.append("sync")
        return McpResponse.text(f"hello {name.name}")


class Shop(Server):
    tools = (OrderTool, ForeverTool, SyncTool)


def shop() -> tuple[Container, Book]:
    container = Container()
    book = Book()
    container.instance(Book, book)
    container.scoped(Connection)
    return container, book


KEY_NAME = "name"  # a question's key: the name of the parameter its resolver fills
KEY_COUNT = "count"
KEY_AGAIN = "again"
ACCEPT_NAME = {"action": "accept", "content": {"name": "Ada"}}
ACCEPT_COUNT = {"action": "accept", "content": {"count": 3}}


async def retry(
    client: McpTestClient, state: str, answers: dict[str, Any], name: str = "order"
) -> McpResult:
    params = {"name": name, "arguments": {}, "inputResponses": answers, "requestState": state}
    return await client.request("tools/call", params)


# -- 2026-07-28 by hand ---------------------------------------------------------------------------


async def test_2026_rounds_by_hand_with_the_answers_sealed_between_them() -> None:
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    first = (await client.tool("order")).result
    assert first is not None
    assert sorted(first["inputRequests"]) == sorted([KEY_NAME, KEY_COUNT])
    assert "Ada" not in first["requestState"]
    second = (
        await retry(client, first["requestState"], {KEY_NAME: ACCEPT_NAME, KEY_COUNT: ACCEPT_COUNT})
    ).result
    assert second is not None
    assert list(second["inputRequests"]) == [KEY_AGAIN]
    assert "Ada" not in second["requestState"]  # recorded, sealed: not readable
    third = await retry(
        client, second["requestState"], {KEY_AGAIN: {"action": "accept", "content": {"name": "A."}}}
    )
    assert third.texts == ["3 for Ada (A.)"]
    assert book.handled == ["order"]


async def test_2026_a_missing_answer_is_asked_again_and_extra_keys_are_ignored() -> None:
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    first = (await client.tool("order")).result
    assert first is not None
    second = (
        await retry(client, first["requestState"], {KEY_NAME: ACCEPT_NAME, "other": ACCEPT_COUNT})
    ).result
    assert second is not None
    assert list(second["inputRequests"]) == [KEY_COUNT]  # the name is recorded
    assert book.handled == []


# -- the attacker's retries -----------------------------------------------------------------------


async def test_an_answer_given_before_it_was_asked_is_dropped() -> None:
    """A client cannot answer ahead: the second round's question was not asked yet."""
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    first = (await client.tool("order")).result
    assert first is not None
    answers = {
        KEY_NAME: ACCEPT_NAME,
        KEY_COUNT: ACCEPT_COUNT,
        KEY_AGAIN: {"action": "accept", "content": {"name": "forged"}},
    }
    second = (await retry(client, first["requestState"], answers)).result
    assert second is not None
    assert list(second["inputRequests"]) == [KEY_AGAIN]
    assert book.handled == []


async def test_an_answer_to_another_question_is_dropped() -> None:
    """The question changed since it was asked (the price moved): the answer does not
    count for the new question, which is asked again."""
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    first = (await client.tool("order")).result
    assert first is not None
    book.price = 99
    second = (
        await retry(client, first["requestState"], {KEY_NAME: ACCEPT_NAME, KEY_COUNT: ACCEPT_COUNT})
    ).result
    assert second is not None
    assert list(second["inputRequests"]) == [KEY_COUNT]
    assert second["inputRequests"][KEY_COUNT]["params"]["message"] == "How many, at 99 each?"


async def test_an_answer_outside_the_schema_is_asked_again() -> None:
    container, _book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    first = (await client.tool("order")).result
    assert first is not None
    wrong = {"action": "accept", "content": {"count": "many"}}
    second = (
        await retry(client, first["requestState"], {KEY_NAME: ACCEPT_NAME, KEY_COUNT: wrong})
    ).result
    assert second is not None
    assert list(second["inputRequests"]) == [KEY_COUNT]


@pytest.mark.parametrize("state", ["forged", "v1.AAAA", ""])
async def test_a_forged_state_is_refused(state: str) -> None:
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    result = await retry(client, state, {KEY_NAME: ACCEPT_NAME, KEY_COUNT: ACCEPT_COUNT})
    assert result.error is not None
    assert result.error["code"] == types.INVALID_PARAMS
    assert book.handled == []


async def test_answers_without_a_state_are_no_answers() -> None:
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    answers = {KEY_NAME: ACCEPT_NAME, KEY_COUNT: ACCEPT_COUNT}
    params = {"name": "order", "arguments": {}, "inputResponses": answers}
    result = (await client.request("tools/call", params)).result
    assert result is not None
    assert sorted(result["inputRequests"]) == sorted([KEY_NAME, KEY_COUNT])
    assert book.handled == []


async def test_a_state_replayed_on_another_tool_is_refused() -> None:
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    first = (await client.tool("order")).result
    assert first is not None
    result = await retry(client, first["requestState"], {KEY_NAME: ACCEPT_NAME}, name="sync")
    assert result.error is not None
    assert result.error["code"] == types.INVALID_PARAMS
    assert book.handled == []


async def test_a_call_that_never_stops_asking_is_stopped() -> None:
    container, _book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    result = (await client.tool("forever")).result
    key = "count"
    rounds = 1
    while result is not None and result.get("resultType") == "input_required":
        answers = {key: {"action": "accept", "content": {"count": 1}}}
        reply = await retry(client, result["requestState"], answers, name="forever")
        result = reply.result
        rounds += 1
        assert rounds <= MAX_INPUT_ROUNDS + 1
    assert result is not None
    assert result["isError"] is True
    assert "rounds" in result["content"][0]["text"]


# -- 2025-11-25: a thread-bound call ---------------------------------------------------------


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_thread_bound_tool_asks_and_runs_once_on_its_thread(mode: str) -> None:
    container, book = shop()
    assert compile_server(Shop, container).tools["sync"].thread_bound
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with sdk_client(Shop, container, mode, elicitation_callback=elicit) as sdk:
        result = await sdk.call_tool("sync", {})
    assert [c.text for c in result.content if isinstance(c, types.TextContent)] == ["hello Ada"]
    assert asked == ["Your name?"]
    assert book.handled == ["sync"]


async def test_2025_the_order_tool_asks_each_question_once() -> None:
    container, book = shop()
    asked: list[str] = []

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        if params["message"].startswith("How many"):
            return ACCEPT_COUNT
        return ACCEPT_NAME

    client = McpTestClient(
        container, Shop, protocol=LEGACY, capabilities=FORM, on_server_request=on_request
    )
    result = (await client.tool("order")).assertOk()
    assert result.texts == ["3 for Ada (Ada)"]
    assert len(asked) == 3
    assert book.handled == ["order"]


# -- limits ------------------------------------------------------------------------------------


async def test_answers_too_large_to_carry_end_the_call() -> None:
    container, book = shop()
    client = McpTestClient(container, Shop, capabilities=FORM)
    first = (await client.tool("order")).result
    assert first is not None
    huge = {"action": "accept", "content": {"name": "x" * (MAX_STATE_CHARS + 1)}}
    second = (
        await retry(client, first["requestState"], {KEY_NAME: huge, KEY_COUNT: ACCEPT_COUNT})
    ).result
    assert second is not None
    assert second["isError"] is True
    assert "too large" in second["content"][0]["text"]
    assert book.handled == []


def _many(count: int) -> type[Tool]:
    """A tool whose handle takes ``count`` independent questions."""

    def resolver(index: int) -> Any:
        async def ask() -> Elicit[Name]:
            return Elicit(f"Question {index}?", Name)

        return ask

    async def handle(self: Any, **answers: Any) -> McpResponse:
        return McpResponse.text("never")

    parameters = [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *(inspect.Parameter(f"q{i}", inspect.Parameter.KEYWORD_ONLY) for i in range(count)),
    ]
    handle.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    handle.__annotations__ = {
        f"q{i}": Annotated[Name, Resolve(resolver(i))] for i in range(count)
    } | {"return": McpResponse}
    return type("ManyTool", (Tool,), {"name": "many", "handle": handle})


async def test_a_round_asks_at_most_the_limit_of_questions() -> None:
    class Many(Server):
        tools = (_many(MAX_QUESTIONS_PER_ROUND + 1),)

    client = McpTestClient(Container(), Many, capabilities=FORM)
    result = (await client.tool("many")).result
    assert result is not None
    assert result["isError"] is True
    assert f"at most {MAX_QUESTIONS_PER_ROUND}" in result["content"][0]["text"]

    class Enough(Server):
        tools = (_many(MAX_QUESTIONS_PER_ROUND),)

    client = McpTestClient(Container(), Enough, capabilities=FORM)
    result = (await client.tool("many")).result
    assert result is not None
    assert len(result["inputRequests"]) == MAX_QUESTIONS_PER_ROUND


# -- 2025-11-25: a client that does not answer, or answers nonsense ------------------------------


async def test_2025_a_client_that_does_not_answer_ends_the_call_with_a_tool_error() -> None:
    class Impatient(Shop):
        input_timeout = 0.05

    container, book = shop()

    async def never(method: str, params: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    client = McpTestClient(
        container, Impatient, protocol=LEGACY, capabilities=FORM, on_server_request=never
    )
    result = await client.tool("order")
    result.assertError("did not answer")
    assert book.handled == []


async def test_2025_an_answer_outside_the_schema_is_asked_again_then_refused() -> None:
    container, book = shop()
    asked: list[str] = []

    async def nonsense(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"count": "many", "name": 7}}

    client = McpTestClient(
        container, Shop, protocol=LEGACY, capabilities=FORM, on_server_request=nonsense
    )
    result = await client.tool("order")
    result.assertError("did not match what was asked")
    assert len(asked) == MAX_INPUT_ROUNDS
    assert book.handled == []


# -- 2025-11-25, asking at once: the same limits ---------------------------------------------


def _chain(length: int, *, sync: bool = False) -> type[Tool]:
    """A tool whose one parameter is the last of ``length`` resolvers, each asking a
    question once the one before it is answered: ``length`` rounds on 2026-07-28."""
    before: Any = None
    for index in range(length):
        if sync:

            def ask_sync(**given: Any) -> Elicit[Name]:
                return Elicit("Next?", Name)

            step: Any = ask_sync
        else:

            async def ask(**given: Any) -> Elicit[Name]:
                return Elicit("Next?", Name)

            step = ask
        step.__name__ = step.__qualname__ = f"step{index}"
        parameters = []
        if before is not None:
            parameters.append(inspect.Parameter("prev", inspect.Parameter.KEYWORD_ONLY))
            step.__annotations__ = {"prev": Annotated[Name, Resolve(before)]}
        step.__annotations__ = {**step.__annotations__, "return": Elicit[Name]}
        step.__signature__ = inspect.Signature(parameters)
        before = step

    def handle(self: Any, last: Name) -> McpResponse:
        return McpResponse.text(f"done {last.name}")

    handle.__annotations__ = {"last": Annotated[Name, Resolve(before)], "return": McpResponse}
    if not sync:

        async def handle_async(self: Any, last: Name) -> McpResponse:
            return McpResponse.text(f"done {last.name}")

        handle_async.__annotations__ = handle.__annotations__
        return type("ChainTool", (Tool,), {"name": "chain", "handle": handle_async})
    return type("ChainTool", (Tool,), {"name": "chain", "handle": handle})


def _legacy_client(server: type[Server], asked: list[str], answer: Any = None) -> McpTestClient:
    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return answer or ACCEPT_NAME

    return McpTestClient(
        Container(), server, protocol=LEGACY, capabilities=FORM, on_server_request=on_request
    )


async def test_2025_a_call_asks_at_most_the_limit_of_questions_of_one_round() -> None:
    class Many(Server):
        tools = (_many(MAX_QUESTIONS_PER_ROUND + 1),)

    asked: list[str] = []
    result = await _legacy_client(Many, asked).tool("many")
    result.assertError(f"at most {MAX_QUESTIONS_PER_ROUND}")
    assert len(asked) == MAX_QUESTIONS_PER_ROUND  # the one past the limit never went out

    class Enough(Server):
        tools = (_many(MAX_QUESTIONS_PER_ROUND),)

    asked = []
    (await _legacy_client(Enough, asked).tool("many")).assertOk()
    assert len(asked) == MAX_QUESTIONS_PER_ROUND


@pytest.mark.parametrize("sync", [False, True], ids=["on the loop", "thread-bound"])
async def test_2025_a_chain_of_questions_longer_than_the_rounds_is_refused(sync: bool) -> None:
    class Long(Server):
        tools = (_chain(MAX_INPUT_ROUNDS + 1, sync=sync),)

    assert compile_server(Long, Container()).tools["chain"].thread_bound is sync
    asked: list[str] = []
    result = await _legacy_client(Long, asked).tool("chain")
    result.assertError("rounds")
    assert len(asked) == MAX_INPUT_ROUNDS

    class Enough(Server):
        tools = (_chain(MAX_INPUT_ROUNDS, sync=sync),)

    asked = []
    assert (await _legacy_client(Enough, asked).tool("chain")).assertOk().texts == ["done Ada"]
    assert len(asked) == MAX_INPUT_ROUNDS


@pytest.mark.parametrize("sync", [False, True], ids=["on the loop", "thread-bound"])
async def test_2025_answers_too_large_to_carry_end_the_call(sync: bool) -> None:
    class Two(Server):
        tools = (_chain(2, sync=sync),)

    huge = {"action": "accept", "content": {"name": "x" * (MAX_STATE_CHARS + 1)}}
    asked: list[str] = []
    result = await _legacy_client(Two, asked, huge).tool("chain")
    result.assertError("too large")
    assert len(asked) == 1  # the question after the huge answer never went out
