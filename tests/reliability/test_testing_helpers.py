"""The helpers shipped to users: ``payloads``, ``from_json_schema``,
``assert_schema_separation`` and the pytest plugin's fixtures.

Each check is also shown failing on a planted defect, so a pass means something.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from mcp.server.auth.provider import AccessToken
from pydantic import BaseModel, ConfigDict, Field

from container import Container
from mcp_adapter import (
    Catalog,
    Identity,
    McpRequest,
    McpResponse,
    Server,
    Tool,
    compile_server,
)
from mcp_adapter.compiled.catalog import CompiledTool
from mcp_adapter.extensions import McpExtension, Platform, tool
from mcp_adapter.testing import (
    McpTestClient,
    SchemaSeparationError,
    assert_schema_separation,
    from_json_schema,
    payloads,
    schema_problems,
)
from mcp_adapter.testing.strategies import UnsupportedSchemaError
from schemas import Contract, Schema
from tests.reliability.conftest import BOUNDED
from tests.serving.harness import REPO
from tests.user_suites import fenced_python, run_pytest

# -- a realistic server -----------------------------------------------------------------------


class Repository:
    def __init__(self) -> None:
        self.closed = False


def repository() -> Iterator[Repository]:
    repo = Repository()
    yield repo
    repo.closed = True


class Address(Schema):
    street: Annotated[str, Field(min_length=1, max_length=40)]
    zip: Annotated[str, Field(pattern=r"^[0-9]{5}$")]


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: Annotated[int, Field(ge=1, le=9)]


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


class OrderInput(Schema):
    customer: str
    when: datetime.datetime
    ref: uuid.UUID
    amount: decimal.Decimal
    quantity: Annotated[int, Field(gt=0, multiple_of=5)]
    tags: Annotated[set[str], Field(max_length=3, default_factory=set)]
    shipping: Address | None = None
    pet: Cat | Dog = Field(discriminator="kind")
    notes: dict[str, float] = Field(default_factory=dict)
    pair: tuple[int, str] | None = None
    public_name: str = Field("x", alias="publicName")


class PlaceOrderTool(Tool[OrderInput]):
    name = "place_order"

    async def handle(
        self, payload: OrderInput, repo: Repository, request: McpRequest
    ) -> McpResponse:
        return McpResponse.text(payload.customer)


class SyncTool(Tool[Address]):
    name = "check_address"

    def handle(self, payload: Address, repo: Repository) -> McpResponse:
        return McpResponse.text(payload.zip)


class NoInputTool(Tool):
    name = "ping"

    async def handle(self, repo: Repository) -> McpResponse:
        return McpResponse.text("pong")


class Shop(Server):
    tools = (PlaceOrderTool, SyncTool, NoInputTool)


class ShopExtension(McpExtension):
    @tool("find_orders")
    async def find(
        self, customer: str, repo: Repository, limit: int = 10, request: McpRequest | None = None
    ) -> list[str]:
        return [customer] * min(limit, 3)


def shop_container() -> Container:
    container = Container()
    container.scoped(Repository, repository)
    return container


# -- payloads ---------------------------------------------------------------------------------


def _one(strategy: st.SearchStrategy[Any]) -> Any:
    """Any one value (``find`` without its shrinking)."""
    return find(strategy, lambda _: True, settings=settings(BOUNDED, phases=[Phase.generate]))


@BOUNDED
@given(payload=payloads(OrderInput))
def test_payloads_are_valid_for_a_rich_contract(payload: dict[str, Any]) -> None:
    OrderInput.model_validate(payload)
    assert "publicName" not in payload or isinstance(payload["publicName"], str)


def test_payloads_accepts_a_compiled_tool_a_catalog_and_a_contract() -> None:
    catalog = compile_server(Shop, shop_container())
    tool_ = catalog.tools["check_address"]
    for strategy in (
        payloads(tool_),
        payloads(catalog, "check_address"),
        payloads(Contract.of(Address)),
        payloads(Address),
    ):
        Address.model_validate(_one(strategy))
    with pytest.raises(KeyError, match="nope"):
        payloads(catalog, "nope")
    with pytest.raises(TypeError):
        payloads(catalog)


def test_a_tool_without_input_gets_empty_payloads() -> None:
    catalog = compile_server(Shop, shop_container())
    assert _one(payloads(catalog, "ping")) == {}


class Odd(Schema):
    """A contract whose JSON Schema uses a keyword the generator does not read."""

    model_config = ConfigDict(json_schema_extra={"not": {"required": ["x"]}})
    value: int


def test_payloads_fall_back_to_the_type_when_the_schema_is_unsupported() -> None:
    with pytest.raises(UnsupportedSchemaError, match="not"):
        from_json_schema(Contract.of(Odd).json_schema)

    @BOUNDED
    @given(payloads(Odd))
    def check(payload: dict[str, Any]) -> None:
        Odd.model_validate(payload)

    check()


@BOUNDED
@given(
    value=from_json_schema(
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "exclusiveMinimum": 2, "maximum": 9, "multipleOf": 3},
                "s": {"type": "string", "format": "date"},
                "u": {"type": ["string", "null"], "maxLength": 2},
                "xs": {"type": "array", "items": {"const": 1}, "minItems": 2, "maxItems": 2},
                "m": {"type": "object", "additionalProperties": {"type": "boolean"}},
            },
            "required": ["n", "s", "u", "xs"],
            "additionalProperties": False,
        }
    )
)
def test_from_json_schema_honours_constraints(value: dict[str, Any]) -> None:
    assert value["n"] in (3, 6, 9)
    datetime.date.fromisoformat(value["s"])
    assert value["u"] is None or len(value["u"]) <= 2
    assert value["xs"] == [1, 1]
    assert set(value) <= {"n", "s", "u", "xs", "m"}
    assert all(isinstance(v, bool) for v in value.get("m", {}).values())


# -- assert_schema_separation --------------------------------------------------------------------


def test_assert_schema_separation_passes_on_a_sound_server() -> None:
    report = assert_schema_separation(Shop, shop_container(), max_examples=10)
    assert report.tools == 3
    assert report.problems == []
    # up to 10 examples per tool and era (fewer when a tool has fewer distinct payloads)
    assert 3 * 2 <= report.valid <= 3 * 2 * 10
    assert report.injected_keys > 0
    assert report.invalid > 0


class NotesInput(Schema):
    notes: dict[str, float]


class NotesTool(Tool[NotesInput]):
    name = "notes"

    async def handle(self, payload: NotesInput) -> McpResponse:
        return McpResponse.text("noted")


class NotesServer(Server):
    tools = (NotesTool,)


def test_a_rejection_naming_the_key_it_rejects_is_no_echo() -> None:
    """A wrong value for a dict field is rejected at ``notes.<key>``: the key is a path."""
    report = assert_schema_separation(NotesServer, Container(), max_examples=60)
    assert report.problems == []
    assert report.invalid > 0


def test_assert_schema_separation_covers_extension_tools() -> None:
    platform = Platform([ShopExtension()])
    report = assert_schema_separation(platform, shop_container(), max_examples=10)
    assert report.tools == 1
    assert report.injected_keys == 2 * report.valid  # every example also tried repo and request


def test_assert_schema_separation_can_run_the_real_handlers() -> None:
    container = shop_container()
    catalog = Platform([ShopExtension()]).compile(container, Shop)
    report = assert_schema_separation(catalog, container, max_examples=5, run_handlers=True)
    assert report.tools == 4
    assert report.injected_keys == 0  # the probe checks need the probe


class GreetInput(Schema):
    name: Annotated[str, Field(min_length=1, max_length=20)]


class MaybeSignedInTool(Tool[GreetInput]):
    """The documented anonymous form: the caller's identity and token, when there is one."""

    name = "maybe-signed-in"

    async def handle(
        self, payload: GreetInput, who: Identity | None, token: AccessToken | None
    ) -> McpResponse:
        return McpResponse.text(who.subject if who else "anonymous")


class MaybeSignedInExtension(McpExtension):
    @tool
    def greet_maybe(self, name: str, who: Identity | None = None) -> str:
        return f"{name} from {who.subject if who else 'anonymous'}"


class MaybeSignedIn(Server):
    tools = (MaybeSignedInTool,)


def test_an_optional_identity_or_token_may_be_none_for_an_anonymous_caller() -> None:
    report = assert_schema_separation(MaybeSignedIn, Container(), max_examples=5)
    assert report.problems == []
    report = assert_schema_separation(
        Platform([MaybeSignedInExtension()]), Container(), max_examples=5
    )
    assert report.problems == []


@pytest.mark.parametrize(
    "caller",
    [
        {"identity": Identity("ada", "cli", ("greet",))},
        {"token": AccessToken(token="t", client_id="cli", scopes=[], subject="ada")},
    ],
)
def test_a_signed_in_caller_is_given_as_for_the_test_client(caller: dict[str, Any]) -> None:
    report = assert_schema_separation(MaybeSignedIn, Container(), max_examples=5, **caller)
    assert report.problems == []
    assert report.valid > 0


def test_a_signed_in_callers_identity_left_none_is_reported() -> None:
    container = Container()
    catalog = compile_server(MaybeSignedIn, container)
    plan = catalog.tools["maybe-signed-in"].handler
    # hand-break the plan: the identity slot no longer reads the scope, it is always None
    services = tuple(
        (name, (lambda scope: None) if name == "who" else build) for name, build in plan.services
    )
    broken = _with_tool(
        catalog, "maybe-signed-in", handler=dataclasses.replace(plan, services=services)
    )
    with pytest.raises(
        SchemaSeparationError, match="received None although the caller is signed in"
    ):
        assert_schema_separation(broken, container, max_examples=3, identity=Identity("ada", "cli"))


def _with_tool(catalog: Catalog, name: str, **changes: Any) -> Catalog:
    tools = dict(catalog.tools)
    tools[name] = dataclasses.replace(tools[name], **changes)
    return dataclasses.replace(catalog, tools=tools)


def test_a_schema_naming_an_injected_parameter_is_reported() -> None:
    container = shop_container()
    catalog = compile_server(Shop, container)
    leaky = catalog.tools["check_address"]
    schema = dict(leaky.modern.input_schema)
    schema["properties"] = {**schema["properties"], "repo": {"type": "object"}}
    broken = _with_tool(
        catalog, "check_address", modern=leaky.modern.model_copy(update={"input_schema": schema})
    )
    problems = [p for t in broken.tools.values() for p in schema_problems(t)]
    assert any("names injected parameter(s) repo" in p for p in problems)
    assert any("is not the input contract's schema" in p for p in problems)
    with pytest.raises(SchemaSeparationError, match="repo"):
        assert_schema_separation(broken, container, max_examples=3, shrink=False)


class Permissive(BaseModel):
    """A non-Schema contract that keeps unknown keys (``extra="allow"``)."""

    model_config = ConfigDict(extra="allow")
    street: str = ""


class _LeakyTool(CompiledTool):
    """A compiled tool whose payload's ``repo`` key, when sent, replaces the service."""

    def arguments(self, payload: Any) -> dict[str, Any]:
        return {"repo": getattr(payload, "repo", Repository())}


def test_a_service_filled_from_the_payload_is_reported() -> None:
    """Plant the bug the check exists for: ``repo`` taken from the payload, not the container."""
    container = shop_container()
    catalog = compile_server(Shop, container)
    honest = catalog.tools["check_address"]
    broken_plan = dataclasses.replace(honest.handler, services=())
    fields = {f.name: getattr(honest, f.name) for f in dataclasses.fields(honest) if f.init}
    fields.update(handler=broken_plan, input=Contract.of(Permissive), spread=("repo",))
    broken = dataclasses.replace(catalog, tools={"check_address": _LeakyTool(**fields)})
    with pytest.raises(SchemaSeparationError, match="'repo'") as caught:
        assert_schema_separation(
            broken, container, max_examples=5, protocols=("2026-07-28",), shrink=False
        )
    assert any("sent under its name" in p for p in caught.value.problems)


def test_an_invalid_payload_reaching_the_handler_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plant a server that skips validation: ``Contract.check_wire`` accepts anything."""
    container = shop_container()
    catalog = compile_server(Shop, container)
    monkeypatch.setattr(Contract, "check_wire", lambda self, value: (value, ()))
    with pytest.raises(SchemaSeparationError) as caught:
        assert_schema_separation(catalog, container, max_examples=10, shrink=False)
    assert len(caught.value.problems) == 3 * 2  # every tool, in both eras


def test_assert_schema_separation_refuses_what_it_cannot_check() -> None:
    with pytest.raises(TypeError, match="cannot check"):
        assert_schema_separation(object(), Container())


# -- the pytest plugin ----------------------------------------------------------------------------


def test_the_plugin_is_registered_through_its_entry_point(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("mcp_adapter")


class EchoInput(Schema):
    text: str


class EchoTool(Tool[EchoInput]):
    name = "echo"

    async def handle(self, payload: EchoInput, request: McpRequest) -> McpResponse:
        return McpResponse.text(f"{payload.text} ({request.protocol_version})")


class EchoServer(Server):
    tools = (EchoTool,)


@pytest.mark.anyio
@pytest.mark.mcp_protocols
async def test_the_plugin_fixtures_serve_each_protocol_era(
    mcp_client: Any, mcp_protocol: str, mcp_container: Container
) -> None:
    assert isinstance(mcp_container, Container)
    client = mcp_client(EchoServer)
    assert isinstance(client, McpTestClient)
    assert client.protocol == mcp_protocol
    (await client.tool("echo", {"text": "hi"})).assertOk().assertTextContains(
        f"hi ({mcp_protocol})"
    )


def test_mcp_container_closes_singletons_after_the_test(tmp_path: Path) -> None:
    """In a separate pytest run, where only the entry point loads the plugin."""
    (tmp_path / "test_plugin_use.py").write_text(
        textwrap.dedent(
            """
            CLOSED = []

            class Pool:
                pass

            def pool():
                yield Pool()
                CLOSED.append(True)

            def test_uses(mcp_container):
                mcp_container.singleton(Pool, pool)
                assert isinstance(mcp_container.get(Pool), Pool)

            def test_closed():
                assert CLOSED == [True]
            """
        )
    )
    run = run_pytest(tmp_path, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


def test_the_pytest_example_of_docs_testing_md_passes(tmp_path: Path) -> None:
    """The page's plugin example, as a user's suite: ``shop.py`` is the page's server."""
    blocks = fenced_python((REPO / "docs" / "testing.md").read_text(encoding="utf-8"))
    (tmp_path / "shop.py").write_text(blocks[0] + blocks[1])
    (tmp_path / "test_shop.py").write_text(
        next(block for block in blocks if block.startswith("# tests/test_shop.py\n"))
    )
    run = run_pytest(tmp_path, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout  # two eras of one test, plus the separation check
