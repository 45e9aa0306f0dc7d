"""``Timing``: each call's duration, to a callback or the DEBUG log, the last few kept."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_adapter.declare.middleware import Call
from mcp_adapter.layers import Timing
from tests.components.support import ERAS
from tests.layers.support import client

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("era", ERAS)
async def test_every_kind_of_call_is_timed_under_its_method_and_component(era: str) -> None:
    seen: list[tuple[str, str | None, float]] = []
    timing = Timing(lambda call, ms: seen.append((call.method, call.component, ms)), keep=2)
    async with client(timing, era=era) as mcp:
        for text in ("a", "b", "c"):
            (await mcp.tool("echo", {"text": text})).assertOk()
        (await mcp.tool("echo", {"text": "x", "mode": "fail"})).assertError()
        (await mcp.tool("repeat", {"times": 3})).assertOk()
        (await mcp.read_resource("notes://1")).assertOk()
        (await mcp.prompt("greeting", {"who": "ada"})).assertOk()
        (await mcp.list_prompts()).assertOk()
    assert [(method, name) for method, name, _ in seen] == [
        *[("tools/call", "echo")] * 4,
        ("tools/call", "repeat"),
        ("resources/read", "notes://{number}"),
        ("prompts/get", "greeting"),
        ("prompts/list", ""),
    ]
    # the last two of echo: the third ok call and the failed one
    assert timing.durations("tools/call", "echo") == (seen[2][2], seen[3][2])
    assert timing.durations("prompts/list") == (seen[-1][2],)
    assert timing.durations("tools/call", "never called") == ()
    assert all(ms >= 0 for *_, ms in seen)
    assert timing.timed() == [
        ("tools/call", "echo"),
        ("tools/call", "repeat"),
        ("resources/read", "notes://{number}"),
        ("prompts/get", "greeting"),
        ("prompts/list", ""),
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_names_the_client_makes_up_never_become_keys(era: str) -> None:
    """At the request stage every call is timed, and the keys are the server's: 500 made-up
    tool names and 500 URIs of one template leave one key each, and no real key is evicted."""
    timing = Timing(max_keys=3)
    async with client(timing, era=era) as mcp:
        (await mcp.tool("echo", {"text": "a"})).assertOk()
        for number in range(500):
            assert (await mcp.tool(f"made-up-{number}")).error is not None
            (await mcp.read_resource(f"notes://{number % 3}")).assertOk()
        assert (await mcp.read_resource("nowhere://x")).error is not None
    assert len(timing.durations("tools/call", None)) == 100  # keep: the last 100 of 500
    assert sorted(timing.timed(), key=str) == sorted(
        [("resources/read", None), ("resources/read", "notes://{number}"), ("tools/call", None)],
        key=str,
    )
    assert ("tools/call", "echo") not in timing.timed()  # the least recent, with max_keys=3


@pytest.mark.parametrize("era", ERAS)
async def test_at_the_call_stage_it_times_only_calls_that_reach_the_handler(era: str) -> None:
    timing = Timing(stage="call")
    async with client(timing, era=era) as mcp:
        (await mcp.tool("echo", {"text": "a"})).assertOk()
        assert (await mcp.tool("made-up")).error is not None
        (await mcp.tool("echo", {"text": 5})).assertError("Invalid tool arguments")
    assert timing.timed() == [("tools/call", "echo")]
    assert len(timing.durations("tools/call", "echo")) == 1


async def test_without_a_callback_durations_are_logged_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_adapter.timing")
    async with client(Timing(), era=ERAS[1]) as mcp:
        (await mcp.tool("echo", {"text": "a"})).assertOk()
    (record,) = [r for r in caplog.records if r.name == "mcp_adapter.timing"]
    assert record.levelno == logging.DEBUG
    assert record.getMessage().startswith("tools/call 'echo' took ")


async def test_a_failing_callback_is_logged_and_the_call_still_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(call: Call, ms: float) -> None:
        raise ValueError("metrics backend down")

    async with client(Timing(broken), era=ERAS[0]) as mcp:
        (await mcp.tool("echo", {"text": "a"})).assertOk().assertTextContains("a")
    (record,) = [r for r in caplog.records if r.name == "mcp_adapter.timing"]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert "metrics backend down" in str(record.exc_info[1])


def test_memory_stays_bounded_in_keys_and_in_durations_per_key() -> None:
    timing = Timing(keep=3, max_keys=50)
    for number in range(10_000):
        timing.record(Call(f"notes://{number}", method="resources/read"), 1.0)
    for ms in range(10):
        timing.record(Call("echo"), float(ms))
    keys = timing.timed()
    assert len(keys) == 50  # (Call.component is the name, as a call-stage layer sees it)
    assert keys[-1] == ("tools/call", "echo")
    assert keys[0] == ("resources/read", "notes://9951")  # the least recent went first
    assert timing.durations("tools/call", "echo") == (7.0, 8.0, 9.0)
    assert timing.durations("resources/read", "notes://0") == ()
    timing.record(Call("notes://9951", method="resources/read"), 2.0)  # now the most recent
    timing.record(Call("new"), 1.0)
    assert ("resources/read", "notes://9951") in timing.timed()
    assert ("resources/read", "notes://9952") not in timing.timed()
    timing.clear()
    assert timing.timed() == []


@pytest.mark.parametrize("options", [{"keep": 0}, {"max_keys": 0}])
def test_it_keeps_at_least_one(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="at least one"):
        Timing(**options)


def test_the_stage_is_request_or_call() -> None:
    assert Timing().stage == "request"
    with pytest.raises(ValueError, match="stage= is 'request' or 'call'"):
        Timing(stage="handler")  # type: ignore[arg-type]
