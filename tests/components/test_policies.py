"""``Policy``: one reusable rule on every declaration style, and on a whole server or extension.

The same policy object is attached to a class tool, a resource (static and template), a
prompt, an ``@tool`` method, a ``ToolSpec``, a ``Server`` and an ``McpExtension``; each
answers alike: hidden from listings and refused (``-32003``) for an anonymous caller,
served to a signed-in one, unknown when its ``should_register`` says no. Its parameters
are injected like a hook's and planned at compile time. Both eras, real JSON-RPC.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp.server import Server as SdkServer

from container import Container
from mcp_adapter import (
    CompileError,
    Identity,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    Policy,
    Prompt,
    Resource,
    Server,
    Tool,
    ToolSpec,
    compile_server,
    put_on_server,
    tool,
)
from mcp_adapter.errors import AUTHORIZATION_ERROR
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS

pytestmark = pytest.mark.anyio

ADA = Identity("ada", "tests", ("notes:read",))
MALLORY = Identity("mallory", "tests", ())


class Journal:
    """What the rules saw, in order (a singleton)."""

    def __init__(self) -> None:
        self.events: list[str] = []


class Lookup:
    """A scoped service a policy asks; closed when the call's scope ends."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal


def open_lookup(journal: Journal) -> Iterator[Lookup]:
    journal.events.append("open lookup")
    yield Lookup(journal)
    journal.events.append("close lookup")


def may_read(identity: Identity | None, lookup: Lookup) -> bool:
    lookup.journal.events.append(f"may_read {identity.subject if identity else None}")
    return identity is not None and identity.has_scope("notes:read")


READERS = Policy(authorize=may_read)
"""The one rule every declaration below uses."""


class Flags:
    def __init__(self) -> None:
        self.on = True


async def feature_on(flags: Flags) -> bool:
    return flags.on


FEATURE = Policy(should_register=feature_on, name="notes feature")


def container() -> Container:
    made = Container()
    made.instance(Journal, Journal())
    made.scoped(Lookup, open_lookup)
    made.instance(Flags, Flags())
    return made


# -- every declaration style with the one policy --------------------------------------------


class NoteTool(Tool):
    name = "note"
    policies = (READERS,)

    async def handle(self) -> McpResponse:
        return McpResponse.text("note")


class NoteResource(Resource):
    name = "note-file"
    uri = "notes://one"
    policies = (READERS,)

    def handle(self) -> McpResponse:
        return McpResponse.text("one")


class NoteTemplate(Resource):
    name = "note-by-id"
    uri_template = "notes://by-id/{id}"
    policies = (READERS,)

    def handle(self, id: str) -> McpResponse:
        return McpResponse.text(id)


class NotePrompt(Prompt):
    name = "note-prompt"
    policies = (READERS,)

    def handle(self) -> McpResponse:
        return McpResponse.text("write a note")


class PerComponent(Server):
    tools = (NoteTool,)
    resources = (NoteResource, NoteTemplate)
    prompts = (NotePrompt,)


class Open:
    """The same components without a policy of their own (for the server-wide one)."""

    class Tool_(Tool):
        name = "note"

        async def handle(self) -> McpResponse:
            return McpResponse.text("note")

    class File(Resource):
        name = "note-file"
        uri = "notes://one"

        def handle(self) -> McpResponse:
            return McpResponse.text("one")

    class Template(Resource):
        name = "note-by-id"
        uri_template = "notes://by-id/{id}"

        def handle(self, id: str) -> McpResponse:
            return McpResponse.text(id)

    class Prompt_(Prompt):
        name = "note-prompt"

        def handle(self) -> McpResponse:
            return McpResponse.text("write a note")


class ServerWide(Server):
    policies = (READERS,)
    tools = (Open.Tool_,)
    resources = (Open.File, Open.Template)
    prompts = (Open.Prompt_,)


class DecoratedTool(McpExtension):
    @tool(policies=(READERS,))
    def note(self) -> str:
        return "note"


class GovernedExtension(McpExtension):
    policies = (READERS,)

    @tool
    def note(self) -> str:
        return "note"


class BuiltAtRunTime(McpExtension):
    """Specs built by an override of ``tools()``: the extension's policies still apply."""

    policies = (READERS,)

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec("note", lambda: "note")]


def _note() -> str:
    return "note"


SERVABLES: dict[str, Any] = {
    "class components": PerComponent,
    "server-wide": ServerWide,
    "@tool": Platform([DecoratedTool()]),
    "ToolSpec": Platform([McpExtension()]),  # replaced below
    "extension-wide": Platform([GovernedExtension()]),
    "extension-wide, run-time specs": Platform([BuiltAtRunTime()]),
    "server-wide over contributed tools": Platform([McpExtension()], server=ServerWide),
}


class SpecExtension(McpExtension):
    def tools(self) -> list[ToolSpec]:
        return [ToolSpec("note", _note, policies=(READERS,))]


SERVABLES["ToolSpec"] = Platform([SpecExtension()])


async def _outcomes(servable: Any, era: str, identity: Identity | None) -> dict[str, Any]:
    client = McpTestClient(container(), servable, protocol=era, identity=identity)  # type: ignore[arg-type]
    seen: dict[str, Any] = {}
    seen["tools"] = [t["name"] for t in (await client.list_tools()).result["tools"]]
    call = await client.tool("note")
    seen["call"] = call.error["code"] if call.error else call.texts
    catalog = client.catalog
    if catalog.resources:
        listed = (await client.list_resources()).result["resources"]
        seen["resources"] = [r["name"] for r in listed]
        templates = (await client.list_resource_templates()).result["resourceTemplates"]
        seen["templates"] = [t["name"] for t in templates]
        for uri in ("notes://one", "notes://by-id/7"):
            read = await client.read_resource(uri)
            seen[uri] = read.error["code"] if read.error else read.texts
        prompts = (await client.list_prompts()).result["prompts"]
        seen["prompts"] = [p["name"] for p in prompts]
        got = await client.prompt("note-prompt")
        seen["prompt"] = got.error["code"] if got.error else got.texts
    return seen


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("where", list(SERVABLES))
async def test_one_policy_object_on_every_declaration_style(where: str, era: str) -> None:
    servable = SERVABLES[where]
    refused = await _outcomes(servable, era, MALLORY)
    anonymous = await _outcomes(servable, era, None)
    served = await _outcomes(servable, era, ADA)
    assert refused == anonymous
    assert refused["tools"] == []
    assert refused["call"] == AUTHORIZATION_ERROR
    assert served["tools"] == ["note"]
    assert served["call"] == ["note"]
    if "resources" in served:
        for seen in (refused,):
            assert seen["resources"] == seen["templates"] == seen["prompts"] == []
            assert seen["notes://one"] == seen["notes://by-id/7"] == AUTHORIZATION_ERROR
            assert seen["prompt"] == AUTHORIZATION_ERROR
        assert served["resources"] == ["note-file"]
        assert served["templates"] == ["note-by-id"]
        assert served["notes://one"] == ["one"]
        assert served["notes://by-id/7"] == ["7"]
        assert served["prompts"] == ["note-prompt"]
        assert served["prompt"] == ["write a note"]


# -- should_register, order, injection, scopes -----------------------------------------------


class Ordered(Tool):
    """Its own hooks after the server's and its own policies."""

    name = "ordered"

    def shouldRegister(self, journal: Journal) -> bool:
        journal.events.append("own shouldRegister")
        return True

    def authorize(self, journal: Journal) -> bool:
        journal.events.append("own authorize")
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("ordered")


def _logged(label: str, answer: bool = True) -> Policy:
    def register(journal: Journal) -> bool:
        journal.events.append(f"{label} should_register")
        return answer

    async def authorize(journal: Journal) -> bool:
        journal.events.append(f"{label} authorize")
        return True

    return Policy(should_register=register, authorize=authorize, name=label)


@pytest.mark.parametrize("era", ERAS)
async def test_every_should_register_first_then_every_authorize_server_first(era: str) -> None:
    own = type("OrderedTool", (Ordered,), {"policies": (_logged("tool"),)})
    served = type("OrderedServer", (Server,), {"policies": (_logged("server"),), "tools": (own,)})
    made = container()
    client = McpTestClient(made, served, protocol=era)  # type: ignore[arg-type]
    assert (await client.tool("ordered")).texts == ["ordered"]
    assert made.get(Journal).events == [
        "server should_register",
        "tool should_register",
        "own shouldRegister",
        "server authorize",
        "tool authorize",
        "own authorize",
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_a_should_register_policy_makes_every_kind_unknown(era: str) -> None:
    hidden = type("Hidden", (PerComponent,), {"policies": (FEATURE,)})
    made = container()
    made.get(Flags).on = False
    client = McpTestClient(made, hidden, protocol=era, identity=ADA)  # type: ignore[arg-type]
    assert (await client.list_tools()).result["tools"] == []
    assert (await client.tool("note")).error == {"code": -32602, "message": "Unknown tool: note"}
    assert (await client.prompt("note-prompt")).error["code"] == -32602
    gone = await client.read_resource("notes://one")
    assert gone.error["message"] == "Resource not found"
    assert made.get(Journal).events == []  # authorize was never asked
    made.get(Flags).on = True
    assert (await client.tool("note")).texts == ["note"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_policy_shares_the_calls_scope(era: str) -> None:
    made = container()
    client = McpTestClient(made, PerComponent, protocol=era, identity=ADA)  # type: ignore[arg-type]
    await client.tool("note")
    assert made.get(Journal).events == ["open lookup", "may_read ada", "close lookup"]


class Counted(Tool):
    """Counts its constructions: a policy alone does not need the instance."""

    name = "counted"
    policies = (READERS,)
    built = 0

    def __init__(self) -> None:
        type(self).built += 1

    async def handle(self) -> McpResponse:
        return McpResponse.text("counted")


async def test_a_component_with_only_policies_is_not_built_to_be_listed() -> None:
    Counted.built = 0
    served = type("CountedServer", (Server,), {"tools": (Counted,)})
    client = McpTestClient(container(), served, identity=ADA)
    assert [t["name"] for t in (await client.list_tools()).result["tools"]] == ["counted"]
    assert Counted.built == 0
    assert (await client.tool("counted")).texts == ["counted"]
    assert Counted.built == 1


class Missing:
    """Bound nowhere, with a parameter the container cannot fill."""

    def __init__(self, secret: str) -> None:
        self.secret = secret


def needs_missing(missing: Missing) -> bool:
    return True


BROKEN = Policy(authorize=needs_missing, name="broken rule")


def test_a_missing_binding_is_a_compile_problem_naming_the_policy_and_the_component() -> None:
    bad_tool = type("BadTool", (NoteTool,), {"policies": (BROKEN,)})
    bad_server = type("BadServer", (Server,), {"tools": (bad_tool,), "policies": (BROKEN,)})
    with pytest.raises(CompileError) as caught:
        compile_server(bad_server, container())
    paths = [problem.path for problem in caught.value.problems]
    assert paths[0][:2] == ("policy 'broken rule' of server BadServer", "needs_missing(missing)")
    assert ("policy 'broken rule' of tool 'bad'", "needs_missing(missing)") in [
        path[:2] for path in paths
    ]
    assert len(paths) == 2  # the server's rule is planned once, not once per component


class BadExtension(McpExtension):
    policies = (BROKEN,)

    @tool
    def one(self) -> str:
        return "1"

    @tool
    def two(self) -> str:
        return "2"


def test_a_missing_binding_in_an_extension_policy_is_reported_once_for_the_extension() -> None:
    with pytest.raises(CompileError) as caught:
        Platform([BadExtension()]).compile(container())
    wheres = [problem.path[0] for problem in caught.value.problems]
    assert wheres == ["policy 'broken rule' of extension bad"]


@pytest.mark.parametrize(
    ("policies", "said"),
    [
        (READERS, "must be a sequence of Policy"),
        ("signed_in", "must be a sequence of Policy"),
        ((may_read,), "is not a Policy"),
    ],
)
def test_policies_that_are_not_policies_are_compile_problems(policies: Any, said: str) -> None:
    bad = type("Bad", (Server,), {"tools": (type("T", (NoteTool,), {"policies": policies}),)})
    with pytest.raises(CompileError, match=said):
        compile_server(bad, container())
    extension = type("BadPolicies", (McpExtension,), {"policies": policies})
    with pytest.raises(CompileError, match=said):
        Platform([extension()]).compile(container())


def test_a_policy_needs_a_rule() -> None:
    with pytest.raises(TypeError, match="needs authorize="):
        Policy()
    with pytest.raises(TypeError, match="must be callable"):
        Policy(authorize=True)  # type: ignore[arg-type]


async def test_the_extensions_policies_ride_its_specs_onto_another_server() -> None:
    sdk = SdkServer("host")
    catalog = put_on_server(sdk, GovernedExtension().tools(), container())
    assert catalog.tools["note"].hooks.authorize  # the extension's rule came along


async def test_a_replacement_cannot_drop_the_original_policies() -> None:
    from mcp_adapter.extensions import ToolExtension

    class Replacing(McpExtension):
        def tool_extensions(self) -> list[ToolExtension]:
            return [ToolExtension("note", replace=ToolSpec("note", lambda: "replaced"))]

    platform = Platform([GovernedExtension(), Replacing()])
    client = McpTestClient(container(), platform, identity=MALLORY)
    assert (await client.tool("note")).error["code"] == AUTHORIZATION_ERROR
    signed = McpTestClient(container(), platform, identity=ADA)
    assert (await signed.tool("note")).texts == ["replaced"]


async def test_a_request_parameter_and_an_async_policy_on_a_sync_component() -> None:
    async def from_tests(request: McpRequest) -> bool:
        return request.identity is not None and request.identity.client_id == "tests"

    class SyncTool(Tool):
        name = "sync"
        policies = (Policy(authorize=from_tests),)

        def handle(self) -> McpResponse:
            return McpResponse.text("sync")

    served = type("SyncServer", (Server,), {"tools": (SyncTool,)})
    assert (await McpTestClient(container(), served, identity=ADA).tool("sync")).texts == ["sync"]
    refused = await McpTestClient(container(), served).tool("sync")
    assert refused.error["code"] == AUTHORIZATION_ERROR
