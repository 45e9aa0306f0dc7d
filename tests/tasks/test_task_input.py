"""Tasks that ask for input, through the real SDK client (2026-07-28): ``input_required``
on ``tasks/get`` with the questions under ``inputRequests``, answers by ``tasks/update``,
the task resumed and completed with its handler run once; forged, replayed, misplaced
and foreign answers refused; a waiting task cancelled or outliving its TTL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from docket import Docket
from mcp import MCPError

from mcp_adapter import BearerAuth, Tasks, http_app
from mcp_adapter.input.resolution import MAX_INPUT_ROUNDS
from mcp_adapter.tasks.waiting import MAX_ANSWER_CHARS, Waiting, asked
from mcp_adapter.testing import TaskClient
from tests.serving.apps import StaticVerifier
from tests.serving.harness import serve_app
from tests.tasks.asking import (
    AskingServer,
    Runs,
    ShortServer,
    accept,
    asking,
    container_with,
    never,
)
from tests.tasks.helpers import over_http

pytestmark = pytest.mark.anyio


async def waiting(tasks: TaskClient, task_id: str) -> dict[str, Any]:
    """The task once it waits for input (or has ended)."""
    return await tasks.until(task_id, "input_required", "completed", "failed", "cancelled")


def only_key(task: dict[str, Any]) -> str:
    assert task["status"] == "input_required", task
    keys = list(task["inputRequests"])
    assert len(keys) == 1, keys
    return keys[0]


def text_of(task: dict[str, Any]) -> str:
    assert task["status"] == "completed", task
    return str(task["result"]["content"][0]["text"])


async def test_a_task_asks_one_question_and_completes_with_the_answer() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        created = await tasks.call("delete", {"filename": "notes.txt"})
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        asked = await waiting(tasks, task_id)
        key = only_key(asked)
        question = asked["inputRequests"][key]
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"] == "Delete notes.txt?"
        assert question["params"]["requestedSchema"]["required"] == ["confirm"]
        assert "requestState" not in asked
        assert "result" not in asked
        assert runs.handled == []
        assert runs.built == 0
        ack = await tasks.update(task_id, {key: accept(confirm=True)})
        assert {name for name in ack if name != "_meta"} == {"resultType"}
        assert ack["resultType"] == "complete"
        done = await tasks.until(task_id)
        assert text_of(done) == "deleted notes.txt"
        assert done["createdAt"] == created["createdAt"]  # the resumed run is the same task
        assert "inputRequests" not in done
    assert runs.handled == ["delete"]
    assert (runs.built, runs.finalized) == (1, 1)


async def test_two_rounds_the_second_question_made_from_the_first_answer() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("paint"))["taskId"]
        first = only_key(await waiting(tasks, task_id))
        await tasks.update(task_id, {first: accept(name="Ada")})
        second_round = await tasks.until(task_id, "input_required", "completed", "failed")
        second = only_key(second_round)
        assert second != first
        assert second_round["inputRequests"][second]["params"]["message"] == "Which color, Ada?"
        await tasks.update(task_id, {second: accept(color="teal")})
        assert text_of(await tasks.until(task_id)) == "Ada paints in teal"
    assert runs.handled == ["paint"]  # the handler ran once, after both rounds
    assert (runs.built, runs.finalized) == (1, 1)


async def test_questions_of_one_round_may_be_answered_one_at_a_time() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("either"))["taskId"]
        asked = await waiting(tasks, task_id)
        assert len(asked["inputRequests"]) == 2
        by_message = {q["params"]["message"]: k for k, q in asked["inputRequests"].items()}
        name_key, go_key = by_message["What is your name?"], by_message["Go ahead?"]
        await tasks.update(task_id, {name_key: accept(name="Bo")})
        partial = await tasks.get(task_id)
        assert partial["status"] == "input_required"
        assert list(partial["inputRequests"]) == [go_key]
        await tasks.update(task_id, {name_key: accept(name="Mallory")})  # a second answer: ignored
        await tasks.update(task_id, {go_key: accept(confirm=False)})
        assert text_of(await tasks.until(task_id)) == "Bo: False"
    assert runs.handled == ["either"]


async def test_a_decline_is_a_tool_error_naming_the_parameter_or_an_outcome_to_branch_on() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        declined = (await tasks.call("delete", {"filename": "a"}))["taskId"]
        key = only_key(await waiting(tasks, declined))
        await tasks.update(declined, {key: {"action": "decline"}})
        done = await tasks.until(declined)
        assert done["status"] == "completed"
        assert done["result"]["isError"] is True
        assert "declined the request for 'answer'" in done["result"]["content"][0]["text"]
        branching = (await tasks.call("branches"))["taskId"]
        key = only_key(await waiting(tasks, branching))
        await tasks.update(branching, {key: {"action": "cancel"}})
        assert text_of(await tasks.until(branching)) == "outcome: cancel"
    assert runs.handled == ["branches"]  # the declined handler never ran
    assert (runs.built, runs.finalized) == (0, 0)


async def test_cancelling_a_waiting_task_ends_it_and_later_answers_change_nothing() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("delete", {"filename": "b"}))["taskId"]
        key = only_key(await waiting(tasks, task_id))
        ack = await tasks.cancel(task_id)
        assert ack["resultType"] == "complete"
        assert (await tasks.get(task_id))["status"] == "cancelled"
        await tasks.update(task_id, {key: accept(confirm=True)})
        await anyio.sleep(0.2)  # had it resumed, its worker would have run it by now
        cancelled = await tasks.get(task_id)
        assert cancelled["status"] == "cancelled"
        assert "inputRequests" not in cancelled
        assert (await tasks.cancel(task_id))["resultType"] == "complete"  # idempotent
    assert runs.handled == []


async def test_an_answer_to_another_key_or_outside_the_schema_is_no_answer() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("delete", {"filename": "c"}))["taskId"]
        key = only_key(await waiting(tasks, task_id))
        await tasks.update(task_id, {"someone-else": accept(confirm=True)})
        assert only_key(await tasks.get(task_id)) == key  # still waiting for its own key
        await tasks.update(task_id, {key: "yes"})  # not an answer object: ignored
        assert only_key(await tasks.get(task_id)) == key
        await tasks.update(task_id, {key: accept(confirm="certainly", extra=1)})
        asked_again = await tasks.until(task_id, "input_required", "completed", "failed")
        assert only_key(asked_again) == key  # the resolver asked again: the answer was dropped
        await tasks.update(task_id, {key: accept(confirm=True)})
        assert text_of(await tasks.until(task_id)) == "deleted c"
    assert runs.handled == ["delete"]


async def test_answers_of_one_task_never_reach_another_nor_a_replay_the_ended_one() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        first = (await tasks.call("delete", {"filename": "one"}))["taskId"]
        second = (await tasks.call("delete", {"filename": "two"}))["taskId"]
        key = only_key(await waiting(tasks, first))
        assert only_key(await waiting(tasks, second)) == key  # same tool, same key
        await tasks.update(first, {key: accept(confirm=True)})
        assert text_of(await tasks.until(first)) == "deleted one"
        assert only_key(await tasks.get(second)) == key  # the other task still waits
        await tasks.update(first, {key: accept(confirm=False)})  # replayed on the ended task
        await anyio.sleep(0.2)
        assert text_of(await tasks.get(first)) == "deleted one"
        await tasks.update(second, {key: accept(confirm=False)})
        assert text_of(await tasks.until(second)) == "kept two"
    assert runs.handled == ["delete", "delete"]


async def test_a_task_asked_again_and_again_ends_after_the_rounds_limit() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("delete", {"filename": "d"}))["taskId"]
        for _ in range(MAX_INPUT_ROUNDS):
            key = only_key(await waiting(tasks, task_id))
            await tasks.update(task_id, {key: accept(confirm="not a boolean")})
            await tasks.until(task_id, "input_required", "completed", "failed")
        done = await tasks.until(task_id)
        assert done["result"]["isError"] is True
        limit = f"in {MAX_INPUT_ROUNDS} rounds without an end"
        assert limit in done["result"]["content"][0]["text"]
    assert runs.handled == []


async def test_answers_larger_than_the_limit_are_refused_with_the_limit_named() -> None:
    async with asking(AskingServer, Runs()) as tasks:
        task_id = (await tasks.call("paint"))["taskId"]
        key = only_key(await waiting(tasks, task_id))
        with pytest.raises(MCPError) as refused:
            await tasks.update(task_id, {key: accept(name="x" * (MAX_ANSWER_CHARS + 1))})
        assert refused.value.code == -32602
        assert str(MAX_ANSWER_CHARS) in refused.value.message
        assert only_key(await tasks.get(task_id)) == key  # nothing was kept


async def test_the_limit_counts_every_answer_the_round_holds_not_one_update() -> None:
    """Two updates each under the limit, together over it: the second is refused, keeps
    nothing, and the question stays open for a smaller answer."""
    runs = Runs()
    big = MAX_ANSWER_CHARS * 3 // 4
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("either"))["taskId"]
        questions = (await waiting(tasks, task_id))["inputRequests"]
        (name,) = [k for k, q in questions.items() if "name" in q["params"]["message"]]
        (other,) = set(questions) - {name}
        await tasks.update(task_id, {name: accept(name="x" * big)})
        with pytest.raises(MCPError) as refused:
            await tasks.update(task_id, {other: accept(confirm=True, note="y" * big)})
        assert refused.value.code == -32602
        assert refused.value.error.data == {
            "limit": "max_answer_chars",
            "value": MAX_ANSWER_CHARS,
        }
        assert list((await tasks.get(task_id))["inputRequests"]) == [other]  # nothing kept
        await tasks.update(task_id, {other: accept(confirm=True)})
        assert text_of(await tasks.until(task_id)) == "x" * big + ": True"
    assert runs.handled == ["either"]


async def test_a_handler_that_asks_mid_flow_gets_its_answer_in_the_next_round() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("asks"))["taskId"]
        assert only_key(await waiting(tasks, task_id)) == "sure"
        await tasks.update(task_id, {"sure": accept(confirm=True)})
        assert text_of(await tasks.until(task_id)) == "sure: True"
    assert runs.handled == ["asks", "asks"]  # as inline: the handler runs again with it


async def test_an_authorize_that_takes_answers_asks_inline_before_the_task_starts() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        first = await tasks.call("greets")
        assert first["resultType"] == "input_required"
        assert "taskId" not in first
        (key,) = first["inputRequests"]
        retried = await tasks.request(
            "tools/call",
            name="greets",
            arguments={},
            inputResponses={key: accept(name="Alice")},
            requestState=first["requestState"],
        )
        assert retried["resultType"] == "task"
        assert "requestState" not in retried
        assert "inputRequests" not in retried
        # the body's resolver asks the very question answered inline: never asked again
        assert text_of(await tasks.until(retried["taskId"])) == "Hello, Alice!"
        again = await tasks.call("greets")  # a state is good for one retry: ask afresh
        with pytest.raises(MCPError) as refused:  # refused by authorize: no task starts
            await tasks.request(
                "tools/call",
                name="greets",
                arguments={},
                inputResponses={key: accept(name=" ")},
                requestState=again["requestState"],
            )
        assert refused.value.message == "Not authorized to use tool greets"
    assert runs.handled == ["greets"]


async def test_a_task_waiting_past_its_ttl_is_gone_and_never_runs() -> None:
    runs = Runs()
    async with asking(ShortServer, runs) as tasks:
        created = await tasks.call("delete", {"filename": "late"})
        task_id = created["taskId"]
        key = only_key(await waiting(tasks, task_id))
        created_at = datetime.fromisoformat(created["createdAt"].replace("Z", "+00:00"))
        expiry = created_at + timedelta(milliseconds=created["ttlMs"])
        await anyio.sleep((expiry - datetime.now(UTC)).total_seconds() + 0.05)
        for call in (
            tasks.get(task_id),
            tasks.update(task_id, {key: accept(confirm=True)}),
            tasks.cancel(task_id),
        ):
            with pytest.raises(MCPError) as gone:
                await call
            assert (gone.value.code, gone.value.message) == (-32602, "Unknown task")
    assert runs.handled == []
    assert (runs.built, runs.finalized) == (0, 0)


async def test_a_waiting_task_keeps_its_place_until_cancelled_or_expired() -> None:
    runs = Runs()
    async with asking(ShortServer, runs) as tasks:  # one task per identity
        first = (await tasks.call("delete", {"filename": "1"}))["taskId"]
        only_key(await waiting(tasks, first))
        with pytest.raises(MCPError) as full:
            await tasks.call("delete", {"filename": "2"})
        assert full.value.code == -32004
        assert "max_running_per_identity is 1" in full.value.message
        await tasks.cancel(first)
        second = await tasks.call("delete", {"filename": "2"})
        only_key(await waiting(tasks, second["taskId"]))
        created_at = datetime.fromisoformat(second["createdAt"].replace("Z", "+00:00"))
        expiry = created_at + timedelta(milliseconds=second["ttlMs"])
        await anyio.sleep((expiry - datetime.now(UTC)).total_seconds() + 0.05)
        third = await tasks.call("delete", {"filename": "3"})  # the expired one gave it back
        assert third["resultType"] == "task"
    assert runs.handled == []


@pytest.fixture
def served() -> Iterator[tuple[str, Runs]]:
    runs = Runs()
    app = http_app(AskingServer, container_with(runs), auth=BearerAuth(StaticVerifier()))
    with serve_app(app) as url:
        yield f"{url}/mcp", runs


async def test_another_identity_cannot_see_answer_or_cancel_a_waiting_task(
    served: tuple[str, Runs],
) -> None:
    url, runs = served
    async with (
        over_http(url, "reader-token", elicitation_callback=never) as reader,
        over_http(url, "admin-token", elicitation_callback=never) as admin,
    ):
        task_id = (await reader.call("delete", {"filename": "mine"}))["taskId"]
        key = only_key(await waiting(reader, task_id))
        with pytest.raises(MCPError) as absent:
            await admin.get("no-such-task-" + "x" * 30)
        expected = (absent.value.code, absent.value.message)
        assert expected == (-32602, "Unknown task")
        for probe in (
            admin.get(task_id),
            admin.update(task_id, {key: accept(confirm=True)}),
            admin.cancel(task_id),
        ):
            with pytest.raises(MCPError) as refused:
                await probe
            assert (refused.value.code, refused.value.message) == expected
        assert only_key(await reader.get(task_id)) == key  # untouched by the attacker
        await reader.update(task_id, {key: accept(confirm=False)})
        assert text_of(await reader.until(task_id)) == "kept mine"
    assert runs.handled == ["delete"]


async def test_a_resume_lost_with_the_process_that_took_the_last_answer_is_enqueued_again(
    redis_url: str,
) -> None:
    """Found by the chaos run (docs/reliability.md): ``tasks/update`` keeps the last answer
    (the round's fate becomes ``resume``), then enqueues the next round. A process killed,
    or a Redis stalled past ``Tasks.store_timeout``, between the two left the task
    ``working`` until its TTL, its round never run. Here the answer is kept as that
    update keeps it, and nothing enqueued: the next ``tasks/get`` enqueues the round,
    which runs once."""

    class OnRedis(AskingServer):
        name = "on-redis"
        tasks = Tasks(url=redis_url, max_running_per_identity=8, max_running=16)

    runs = Runs()
    async with asking(OnRedis, runs) as tasks:
        task_id = (await tasks.call("delete", {"filename": "notes.txt"}))["taskId"]
        key = only_key(await waiting(tasks, task_id))
        async with Docket(name="mcp-adapter:on-redis", url=redis_url) as docket:
            execution = await docket.get_execution(task_id)
            assert execution is not None
            requests = asked(await execution.get_result())["requests"]  # type: ignore[index]
            given = {key: accept(confirm=True)}
            assert await Waiting(docket).answer(task_id, 0, requests, given, 600) is not None
        done = await tasks.until(task_id)
        assert text_of(done) == "deleted notes.txt"
        again = await tasks.get(task_id)
    assert again["status"] == "completed"
    assert runs.handled == ["delete"]
