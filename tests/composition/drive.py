"""What one case does as a client would, and what it must see: the outcome each of its
features has alone.

- the call answers its normal result: the ``Reply`` the handler made, as structured
  content and its JSON text (a tool), or as JSON text (a resource, a prompt);
- execution: a task tool called by a 2026-07-28 client is a task that reaches
  ``completed`` with that result;
- input: the question is asked once per call (a form, or the task's ``inputRequests``),
  answered, and the answer reaches the handler;
- state: two calls with one handle share the handle's session (its counter reads 1, 2);
- layers: the request-stage layer's context value reaches the handler (or task body); the
  call-stage layer, ``AccessLog``, ``Timing`` and ``RateLimit`` saw the calls (the
  ``probe`` says); ``ResponseLimit`` refuses an answer past its bytes; with no layer,
  nothing is recorded.

``run`` returns every problem it found, one line each, rather than stopping at the first.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import MCPError

from mcp_adapter.tasks.wire import TERMINAL
from mcp_adapter.testing import TaskClient
from tests.composition.cases import Case
from tests.composition.hosting import Connected
from tests.composition.servers import BIG, STAMP, WORD, question, uri_template

CASE_TIMEOUT = 60.0
ROUNDS = 4
"""Input rounds a task may ask before the case gives up (each component asks once)."""


class Problem(Exception):
    """Something a case saw that its features alone would not give."""


def method_of(case: Case) -> str:
    return {"resource": "resources/read", "prompt": "prompts/get"}.get(case.component, "tools/call")


def component_of(case: Case) -> str:
    """The component as the server names it (a resource: its URI template)."""
    return uri_template(case) if case.component == "resource" else case.name


def expected(case: Case, value: str, count: int) -> dict[str, Any]:
    return {
        "case": case.name,
        "value": value,
        "answer": WORD if case.input != "none" else "",
        "stamp": STAMP if case.layers == "request" else "",
        "count": count if case.state == "handle" else 0,
    }


async def listed(connected: Connected, case: Case) -> bool:
    client = connected.client
    if case.component == "resource":
        templates = (await client.list_resource_templates()).resource_templates
        return uri_template(case) in [t.uri_template for t in templates]
    if case.component == "prompt":
        return case.name in [p.name for p in (await client.list_prompts()).prompts]
    return case.name in [t.name for t in (await client.list_tools()).tools]


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise Problem(f"{where}: not the handler's JSON: {text[:200]!r}") from None


async def _inline_tool(connected: Connected, case: Case, arguments: dict[str, Any]) -> Any:
    result = await connected.client.call_tool(case.name, arguments)
    texts = [getattr(block, "text", None) for block in result.content]
    if result.is_error:
        raise Problem(f"tools/call answered an error: {texts}")
    if len(texts) != 1 or texts[0] is None:
        raise Problem(f"tools/call content is not one text block: {result.content}")
    if _json(texts[0], "tools/call text") != result.structured_content:
        raise Problem(f"text {texts[0]!r} is not the structured content")
    return result.structured_content


async def _task(connected: Connected, case: Case, arguments: dict[str, Any]) -> Any:
    tasks = TaskClient(connected.client)
    created = await tasks.call(case.name, arguments)
    if created.get("resultType") != "task":
        raise Problem(f"tools/call of a task tool did not start a task: {created}")
    task_id = created["taskId"]
    for _ in range(ROUNDS):
        task = await tasks.until(task_id, "input_required", *TERMINAL)
        if task["status"] != "input_required":
            break
        requests = task.get("inputRequests", {})
        for request in requests.values():
            connected.asked.questions.append(request["params"]["message"])
        answer = {"action": "accept", "content": {"word": WORD}}
        await tasks.update(task_id, dict.fromkeys(requests, answer))
        await tasks.until(task_id, "working", *TERMINAL)
    else:
        raise Problem(f"the task still asks after {ROUNDS} rounds")
    if task["status"] != "completed":
        raise Problem(f"the task ended {task['status']}: {task.get('error') or task}")
    result = task["result"]
    texts = [block.get("text") for block in result.get("content", [])]
    if result.get("isError"):
        raise Problem(f"the task's result is an error: {texts}")
    if len(texts) != 1 or _json(texts[0] or "", "task text") != result.get("structuredContent"):
        raise Problem(f"the task's text {texts} is not its structured content")
    return result["structuredContent"]


async def answer(connected: Connected, case: Case, arguments: dict[str, Any]) -> Any:
    """One call of the case's component, as the client sees its answer (JSON)."""
    client = connected.client
    if case.component == "resource":
        read = await client.read_resource(uri_template(case).format(value=arguments["value"]))
        (content,) = read.contents
        return _json(getattr(content, "text", ""), "resources/read")
    if case.component == "prompt":
        got = await client.get_prompt(case.name, {"value": arguments["value"]})
        (message,) = got.messages
        return _json(getattr(message.content, "text", ""), "prompts/get")
    if case.as_task:
        return await _task(connected, case, arguments)
    return await _inline_tool(connected, case, arguments)


async def _check(problems: list[str], step: str, coroutine: Any) -> Any:
    try:
        return await coroutine
    except Problem as problem:
        problems.append(f"{step}: {problem}")
    except MCPError as error:
        problems.append(f"{step}: protocol error {error.error.code} {error.error.message!r}")
    return None


async def run(connected: Connected, case: Case) -> list[str]:
    """The case's calls and every problem they show (none when it composes)."""
    with anyio.fail_after(CASE_TIMEOUT):
        return await _run(connected, case)


async def _run(connected: Connected, case: Case) -> list[str]:
    problems: list[str] = []
    client = connected.client
    if client.protocol_version != case.era:
        problems.append(f"the client speaks {client.protocol_version}, not {case.era}")
    constraint = case.constraint
    if constraint is not None and constraint.outcome in ("not-offered", "no-back-channel"):
        return await _refused(connected, case, constraint.outcome, constraint.expect, problems)
    if not await listed(connected, case):
        problems.append(f"{component_of(case)} is not listed")
    value = f"v-{case.name}"
    arguments: dict[str, Any] = {"value": value}
    if case.state == "handle":
        opened = await client.call_tool("open_handle", {})
        arguments["handle"] = getattr(opened.content[0], "text", "")
    calls = 2 if case.state == "handle" else 1
    for number in range(1, calls + 1):
        before = connected.asked.questions.count(question(case))
        got = await _check(problems, f"call {number}", answer(connected, case, arguments))
        if got is not None and got != expected(case, value, number):
            problems.append(f"call {number} answered {got}, not {expected(case, value, number)}")
        asked = connected.asked.questions.count(question(case)) - before
        if asked != (case.input != "none"):
            problems.append(f"call {number}: the question was asked {asked} time(s)")
    problems += await _layers(connected, case, calls)
    return problems


async def _refused(
    connected: Connected, case: Case, outcome: str, code: str, problems: list[str]
) -> list[str]:
    if outcome == "not-offered" and await listed(connected, case):
        problems.append(f"{case.name} is listed to a client that cannot call it")
    try:
        result = await connected.client.call_tool(case.name, {"value": "v"})
    except MCPError as error:
        if str(error.error.code) != code:
            problems.append(f"refused with {error.error.code} {error.error.message!r}, not {code}")
    else:
        problems.append(f"the call was not refused with {code}: {result}")
    return problems


async def _layers(connected: Connected, case: Case, calls: int) -> list[str]:
    problems: list[str] = []
    layers = case.layers
    if layers == "response_limit":
        await _too_large(connected, case, problems)
        return problems
    probe = await connected.client.call_tool(
        "probe", {"method": method_of(case), "component": component_of(case)}
    )
    seen = probe.structured_content or {}
    # AccessLog's outcome for the call that starts a task is "task" (the fix of issue 29 (a)
    # names it so; the task's life after that is not logged)
    outcome = "task" if case.as_task else "ok"
    observed = {
        "call": seen.get("journal", 0),
        "access_log": seen.get("access", []).count(outcome),
        "timing": seen.get("durations", 0),
        "rate_limit": seen.get("hits", 0),
    }
    if layers in observed and observed[layers] < calls:
        problems.append(f"{layers} saw {observed[layers]} of {calls} call(s): {seen}")
    if layers == "access_log" and set(seen.get("access", [])) != {outcome}:
        problems.append(f"access_log logged outcomes {seen.get('access')}, not only {outcome}")
    if layers in ("none", "request") and any(observed.values()):
        problems.append(f"no layer records, yet the probe saw {seen}")
    return problems


async def _too_large(connected: Connected, case: Case, problems: list[str]) -> None:
    arguments: dict[str, Any] = {"value": BIG}
    if case.state == "handle":
        opened = await connected.client.call_tool("open_handle", {})
        arguments["handle"] = getattr(opened.content[0], "text", "")
    try:
        got = await answer(connected, case, arguments)
    except Problem as problem:
        if "Response too large" not in str(problem):
            problems.append(f"a too-large answer was refused otherwise: {problem}")
    except MCPError as error:
        if "Response too large" not in error.error.message:
            problems.append(f"a too-large answer: protocol error {error.error.message!r}")
    else:
        problems.append(f"an answer of {len(json.dumps(got))} bytes passed ResponseLimit")
