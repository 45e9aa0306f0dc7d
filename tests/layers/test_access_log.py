"""``AccessLog``: one record per call with its outcome, never arguments or results."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import anyio
import pytest

from container import Container
from mcp_adapter import Identity, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.declare.middleware import Stage
from mcp_adapter.layers import FIELDS, AccessLog, AccessRecord, RateLimit
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS
from tests.layers.support import SECRET, client

pytestmark = pytest.mark.anyio

ADA = Identity(subject="ada", client_id="client-1")


def access(caplog: pytest.LogCaptureFixture, logger: str = "mcp_adapter.access") -> list[Any]:
    return [record for record in caplog.records if record.name == logger]


def fields(record: logging.LogRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in FIELDS}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("stage", "refused", "error_type"),
    [("request", ("error", None), None), ("call", ("refused", "ToolError"), "RuntimeError")],
)
async def test_each_tool_call_is_one_record_with_its_outcome_and_caller(
    era: str,
    stage: Stage,
    refused: tuple[str, str | None],
    error_type: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At the request stage a handler's ``ToolError`` is the error answer it becomes, and a
    failure is the incident its answer names (its class is in the dispatcher's log); at
    the call stage the layer sees them raised."""
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    async with client(AccessLog(stage=stage), era=era, identity=ADA) as mcp:
        (await mcp.tool("echo", {"text": SECRET})).assertOk()
        (await mcp.tool("echo", {"text": SECRET, "mode": "error"})).assertError("cannot echo")
        (await mcp.tool("echo", {"text": SECRET, "mode": "refuse"})).assertError("echo refused")
        failed = (await mcp.tool("echo", {"text": SECRET, "mode": "fail"})).assertError()
    records = access(caplog)
    assert [(r.method, r.component, r.outcome, r.subject) for r in records] == [
        ("tools/call", "echo", outcome, "ada") for outcome in ("ok", "error", refused[0], "failed")
    ]
    assert records[2].refusal == refused[1]
    assert failed.result is not None
    assert records[3].incident == failed.result["_meta"]["incident"]
    assert records[3].error_type == error_type
    assert [r.incident for r in records[:3]] == [None, None, None]
    assert all(isinstance(r.duration_ms, float) and r.duration_ms >= 0 for r in records)
    assert all(isinstance(r.request_id, int) for r in records)
    assert records[0].getMessage().startswith("tools/call 'echo' ok in ")
    assert records[0].getMessage().endswith(" ms by ada")
    assert (
        records[3]
        .getMessage()
        .endswith(f"(incident {records[3].incident})" + (f" ({error_type})" if error_type else ""))
    )


async def test_access_record_reads_the_attributes_typed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    async with client(AccessLog(), era="2026-07-28", identity=ADA) as mcp:
        failed = (await mcp.tool("echo", {"text": SECRET, "mode": "fail"})).assertError()
        await mcp.tool("nope", {})
    crashed, unknown = (AccessRecord.of(record) for record in access(caplog))
    assert (crashed.method, crashed.component, crashed.outcome) == ("tools/call", "echo", "failed")
    assert crashed.incident == failed.result["_meta"]["incident"]
    assert crashed.subject == "ada"
    assert (unknown.component, unknown.outcome, unknown.error_code) == (None, "refused", -32602)
    assert fields(access(caplog)[0]) == {name: getattr(crashed, name) for name in FIELDS}


def test_access_record_refuses_another_record_and_says_which() -> None:
    other = logging.LogRecord("app", logging.INFO, __file__, 1, "hello %s", ("ada",), None)
    with pytest.raises(
        ValueError, match=r"'app' \('hello ada'\) is not an access record"
    ) as caught:
        AccessRecord.of(other)
    assert "it has no method, component," in str(caught.value)
    assert "hint: read records of the AccessLog layer's logger" in str(caught.value)


@pytest.mark.parametrize("era", ERAS)
async def test_no_record_carries_an_argument_value_or_a_result(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    async with client(AccessLog(), era=era) as mcp:
        for mode in ("ok", "error", "refuse", "fail"):
            await mcp.tool("echo", {"text": SECRET, "mode": mode})
        await mcp.prompt("greeting", {"who": SECRET})
        await mcp.read_resource("notes://3")
    records = access(caplog)
    assert len(records) == 6
    for record in records:
        assert SECRET not in record.getMessage()
        assert SECRET not in repr(fields(record))
        assert "note note" not in repr(vars(record))
        assert record.subject is None  # anonymous
    # the dispatcher's own incident log has the traceback; the access record does not
    assert all(record.exc_info is None for record in records)


@pytest.mark.parametrize("era", ERAS)
async def test_resources_prompts_listings_and_completion_are_logged_too(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    async with client(AccessLog(), era=era, identity=ADA) as mcp:
        (await mcp.read_resource("notes://2")).assertOk()
        broken = await mcp.read_resource("notes://-1")
        (await mcp.prompt("greeting", {"who": "bob"})).assertOk()
        (await mcp.list_tools()).assertOk()
        (await mcp.list_resource_templates()).assertOk()
        completed = await mcp.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "notes://{number}"},
                "argument": {"name": "number", "value": "4"},
            },
        )
        assert completed.result is not None
    assert broken.error is not None
    records = access(caplog)
    assert [(r.method, r.component, r.outcome) for r in records] == [
        ("resources/read", "notes://{number}", "ok"),
        ("resources/read", "notes://{number}", "failed"),
        ("prompts/get", "greeting", "ok"),
        ("tools/list", "", "ok"),
        ("resources/templates/list", "", "ok"),
        ("completion/complete", "note", "ok"),
    ]
    # the client's error names the incident the access record has
    assert broken.error["message"] == f"Resource read failed (incident {records[1].incident})"
    assert records[3].getMessage().startswith("tools/list ok in ")


@pytest.mark.parametrize("era", ERAS)
async def test_an_inner_layers_refusal_is_logged_refused(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    async with client(AccessLog(), RateLimit(1, 60), era=era) as mcp:
        (await mcp.tool("echo", {"text": "a"})).assertOk()
        (await mcp.tool("echo", {"text": "a"})).assertError("Rate limit exceeded")
        (await mcp.list_tools()).assertError("Rate limit exceeded")
    assert [(r.method, r.outcome, r.refusal) for r in access(caplog)] == [
        ("tools/call", "ok", None),
        ("tools/call", "refused", "ToolError"),
        ("tools/list", "refused", "ToolError"),
    ]


class Sleepy(Tool):
    """Never finishes within its timeout."""

    timeout = 0.05

    async def handle(self) -> McpResponse:
        await anyio.sleep(30)
        return McpResponse.text("never")


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_cut_at_its_timeout_is_its_incident_or_cancelled_around_the_handler(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Timed(Server):
        name = "timed"
        tools = (Sleepy,)
        middleware: ClassVar = (AccessLog(), AccessLog("audit.inner", stage="call"))

    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    caplog.set_level(logging.INFO, logger="audit.inner")
    async with McpTestClient(Container(), Timed, protocol=era) as mcp:
        answer = (await mcp.tool("sleepy")).assertError("Tool timed out")
    assert answer.result is not None
    ((record),) = access(caplog)
    assert (record.method, record.outcome) == ("tools/call", "failed")
    assert record.incident == answer.result["_meta"]["incident"]
    assert record.duration_ms >= 40
    ((inner),) = access(caplog, "audit.inner")
    assert (inner.outcome, inner.incident) == ("cancelled", None)


async def test_the_logger_and_level_are_the_callers_and_a_disabled_one_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    quiet = AccessLog(logger="audit.mcp", level=logging.DEBUG)
    async with client(quiet, AccessLog(logger=logging.getLogger("audit.loud")), era=ERAS[0]) as mcp:
        (await mcp.tool("echo", {"text": "a"})).assertOk()
        caplog.set_level(logging.DEBUG, logger="audit.mcp")
        (await mcp.tool("echo", {"text": "b"})).assertOk()
    assert [r.levelno for r in access(caplog, "audit.mcp")] == [logging.DEBUG]
    assert [r.levelno for r in access(caplog, "audit.loud")] == [logging.INFO] * 2
    assert access(caplog) == []


class Audited(Tool):
    """A tool with an access log of its own."""

    middleware: ClassVar = (AccessLog(logger="audit.audited", stage="call"),)

    async def handle(self) -> McpResponse:
        return McpResponse.text("done")


async def test_on_a_component_it_logs_that_component_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Mixed(Server):
        name = "mixed"
        tools = (Audited, Sleepy)

    caplog.set_level(logging.INFO, logger="audit.audited")
    async with McpTestClient(Container(), Mixed, identity=ADA) as mcp:
        (await mcp.tool("audited")).assertOk()
        (await mcp.list_tools()).assertOk()
    assert [(r.method, r.component, r.subject) for r in access(caplog, "audit.audited")] == [
        ("tools/call", "audited", "ada")
    ]


# -- what the request stage sees --------------------------------------------------------

API_KEY = "sk-live-4f9a1c2b7d"
"""A secret a client puts in a URI (the template's variable): no record may carry it."""


class Balance(Resource):
    uri_template = "accounts://{key}/balance"

    async def handle(self, key: str) -> McpResponse:
        return McpResponse.text("12.50")


class Hidden(Tool):
    """Hidden from every caller."""

    def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return McpResponse.text("never")


class Staff(Tool):
    """Refused to every caller."""

    def authorize(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return McpResponse.text("never")


class CountInput(Schema):
    count: int


class Counted(Tool[CountInput]):
    """Takes a number."""

    async def handle(self, payload: CountInput) -> McpResponse:
        return McpResponse.text(str(payload.count))


class Hello(Prompt):
    async def handle(self) -> McpResponse:
        return McpResponse.text("hello")


def logged_server(*layers: Any) -> type[Server]:
    class Logged(Server):
        name = "logged"
        tools = (Hidden, Staff, Counted)
        resources = (Balance,)
        prompts = (Hello,)
        middleware: ClassVar = layers

    return Logged


@pytest.mark.parametrize("era", ERAS)
async def test_unknown_hidden_refused_and_invalid_calls_are_logged_without_their_names(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    mcp = McpTestClient(Container(), logged_server(AccessLog()), protocol=era, identity=ADA)
    assert (await mcp.tool(f"made-up-{SECRET}")).error is not None
    assert (await mcp.tool("hidden")).error is not None
    assert (await mcp.tool("staff")).error is not None
    (await mcp.tool("counted", {"count": SECRET})).assertError("Invalid tool arguments")
    assert (await mcp.read_resource(f"nowhere://{SECRET}")).error is not None
    assert (await mcp.prompt(f"made-up-{SECRET}")).error is not None
    records = access(caplog)
    assert [(r.method, r.component, r.outcome, r.refusal, r.error_code) for r in records] == [
        ("tools/call", None, "refused", "MCPError", -32602),
        ("tools/call", "hidden", "refused", "MCPError", -32602),
        ("tools/call", "staff", "refused", "MCPError", -32003),
        ("tools/call", "counted", "error", None, None),
        ("resources/read", None, "refused", "MCPError", -32602 if era == ERAS[0] else -32002),
        ("prompts/get", None, "refused", "MCPError", -32602),
    ]
    assert records[0].getMessage().startswith("tools/call (unknown) refused in ")
    assert records[0].getMessage().endswith(" by ada (MCPError -32602)")
    for record in records:
        assert SECRET not in record.getMessage()
        assert SECRET not in repr(fields(record))


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("stage", ["request", "call"])
async def test_a_resource_is_logged_by_its_template_never_by_the_uri_read(
    era: str, stage: Stage, caplog: pytest.LogCaptureFixture
) -> None:
    """The variables of a URI are the call's arguments (here an API key)."""
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    layer = AccessLog(stage=stage)
    mcp = McpTestClient(Container(), logged_server(layer), protocol=era)
    (await mcp.read_resource(f"accounts://{API_KEY}/balance")).assertOk()
    ((record),) = access(caplog)
    assert (record.method, record.component, record.outcome) == (
        "resources/read",
        "accounts://{key}/balance",
        "ok",
    )
    assert record.getMessage().startswith("resources/read 'accounts://{key}/balance' ok in ")
    assert API_KEY not in record.getMessage()
    assert API_KEY not in repr(vars(record))


class CountOutput(Schema):
    count: int


class Broken(Tool[CountInput, CountOutput]):
    """Returns what its output contract refuses."""

    async def handle(self, payload: CountInput) -> McpResponse:
        return McpResponse.structured({"count": "not a number"})


@pytest.mark.parametrize("era", ERAS)
async def test_a_result_the_dispatcher_fails_to_build_is_logged_with_its_incident(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Contracted(Server):
        name = "contracted"
        tools = (Broken,)
        middleware: ClassVar = (AccessLog(), AccessLog("audit.inner", stage="call"))

    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    caplog.set_level(logging.INFO, logger="audit.inner")
    answer = await McpTestClient(Container(), Contracted, protocol=era).tool("broken", {"count": 1})
    answer.assertError("Tool execution failed")
    assert answer.result is not None
    ((record),) = access(caplog)
    assert (record.outcome, record.incident) == ("failed", answer.result["_meta"]["incident"])
    ((inner),) = access(caplog, "audit.inner")
    assert inner.outcome == "ok"  # around the handler, it saw a value, not the result
