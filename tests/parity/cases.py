"""The parity cases: every kind of handler signature and feature, each as one ``Case``.

Families are generated from small tables (arguments, injected parameters, outputs,
errors, visibility hooks, middleware, listing metadata); ``with_sync_variants`` adds
the sync-handler twin of each case whose body can run in a worker thread.
A case that diverges today carries its reason (``divergence``/``listing_divergence``)
and runs as a strict xfail.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from mcp_adapter import Forbidden, McpRequest, McpResponse, NotFound, ToolAnnotations, ToolError
from mcp_adapter.declare.request import Identity
from mcp_adapter.extensions import Call as ToolCall
from mcp_adapter.extensions import Next
from schemas import Schema
from tests.parity.kit import (
    Arg,
    Call,
    Case,
    Expect,
    Features,
    Hook,
    Journal,
    Scoped,
    Single,
    Unit,
    as_text,
    describe,
)

ADA = Identity(subject="ada", client_id="parity", scopes=("parity:use",))


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(Schema):
    street: str
    zip: Annotated[str, Field(pattern=r"^[0-9]{5}$")]


class Summary(Schema):
    """The typed output contract of the output cases."""

    count: int
    names: list[str]


@dataclasses.dataclass
class Size:
    width: int
    height: int


def ok(*arguments: Mapping[str, Any] | None) -> tuple[Call, ...]:
    return tuple(Call(a, "ok") for a in arguments)


def invalid(*arguments: Mapping[str, Any]) -> tuple[Call, ...]:
    return tuple(Call(a, "invalid") for a in arguments)


# -- arguments: the class tool's input Schema vs the function's parameters ----------------

ARGUMENTS = [
    Case(
        "args-required",
        fields=(Arg("name", str),),
        calls=(
            *ok({"name": "Ada"}),
            *invalid({}, {"name": 5}, {"name": "Ada", "extra": 1}, {"name": "a", "b": 1, "c": 2}),
        ),
    ),
    Case(
        "args-optional",
        fields=(Arg("nick", str | None, None),),
        calls=ok({}, {"nick": None}, {"nick": "Ada"}, None) + invalid({"nick": 1}),
    ),
    Case(
        "args-defaulted",
        fields=(Arg("name", str), Arg("count", int, 3), Arg("ratio", float, 0.5)),
        calls=ok({"name": "a"}, {"name": "a", "count": 7, "ratio": 2})
        + invalid({"name": "a", "count": "lots"}, {"count": 1}),
    ),
    Case(
        "args-constrained",
        fields=(
            Arg("repeat", Annotated[int, Field(ge=1, le=3, description="How many times")], 1),
            Arg("mode", Literal["fast", "slow"], "fast"),
        ),
        calls=ok({}, {"repeat": 3, "mode": "slow"}) + invalid({"repeat": 9}, {"mode": "warp"}),
    ),
    Case(
        "args-nested-model",
        fields=(Arg("address", Address), Arg("billing", Address | None, None)),
        calls=ok({"address": {"street": "Main", "zip": "12345"}})
        + invalid(
            {"address": {"street": "Main", "zip": "abc"}},
            {"address": {"street": "Main"}},
            {"address": {"street": "M", "zip": "12345", "floor": 2}},
            {"address": "Main"},
        ),
    ),
    Case(
        "args-enum",
        fields=(Arg("color", Color, Color.RED),),
        calls=ok({}, {"color": "green"}) + invalid({"color": "blue"}),
    ),
    Case(
        "args-lists",
        fields=(Arg("tags", list[str]), Arg("stops", list[Address], [])),
        calls=ok({"tags": []}, {"tags": ["a", "b"], "stops": [{"street": "x", "zip": "00001"}]})
        + invalid({"tags": ["a", 1]}, {"tags": "a"}, {"tags": [], "stops": [{"zip": "1"}]}),
    ),
    Case(
        "args-none",
        calls=ok({}, None) + invalid({"anything": 1}),
    ),
]

# -- injected parameters -------------------------------------------------------------------


INJECTED = [
    Case(
        "inject-scoped",
        fields=(Arg("name", str),),
        inject={"scoped": Scoped, "again": Scoped},
        calls=ok({"name": "a"}, {"name": "b"}),
    ),
    Case(
        "inject-singleton",
        fields=(Arg("name", str),),
        inject={"single": Single},
        calls=ok({"name": "a"}, {"name": "b"}),
    ),
    Case(
        "inject-finalizer",
        fields=(Arg("name", str),),
        inject={"unit": Unit, "scoped": Scoped},
        calls=ok({"name": "a"}, {"name": "b"}) + invalid({}),
    ),
    Case(
        "inject-request",
        fields=(Arg("name", str, "x"),),
        inject={"request": McpRequest},
        calls=ok({}, {"name": "y"}),
    ),
    Case(
        "inject-identity-anonymous",
        fields=(Arg("name", str, "x"),),
        inject={"identity": Identity | None},
        calls=ok({}),
    ),
    Case(
        "inject-identity-signed-in",
        fields=(Arg("name", str, "x"),),
        inject={"identity": Identity | None, "request": McpRequest},
        identity=ADA,
        calls=ok({}),
    ),
    Case(
        "inject-everything",
        fields=(Arg("name", str), Arg("color", Color, Color.GREEN)),
        inject={
            "scoped": Scoped,
            "single": Single,
            "unit": Unit,
            "request": McpRequest,
            "features": Features,
        },
        calls=ok({"name": "a"}, {"name": "b", "color": "red"}),
    ),
    Case(
        "inject-forged",
        fields=(Arg("name", str),),
        inject={"scoped": Scoped, "request": McpRequest},
        calls=invalid({"name": "a", "scoped": "forged"}, {"name": "a", "request": {}}),
    ),
]

# -- outputs -------------------------------------------------------------------------------


def summary(args: Mapping[str, Any], injected: Mapping[str, Any]) -> Any:
    names = list(args.get("names", ["a", "b"]))
    if "bad" in names:
        return {"count": "many"}  # violates the output contract
    if "refuse" in names:
        return McpResponse.error("Refused on purpose.")
    return {"count": len(names), "names": names}


def count(args: Mapping[str, Any], injected: Mapping[str, Any]) -> Any:
    return len(args["names"]) if "bad" not in args["names"] else "many"


NAMES = (Arg("names", list[str]),)


OUTPUTS = [
    Case("out-none-text", fields=(Arg("name", str),), calls=ok({"name": "a"})),
    Case(
        "out-none-response",
        fields=(Arg("name", str),),
        function_wrap="text",
        calls=ok({"name": "a"}),
    ),
    Case(
        "out-schema-structured-dict",
        fields=NAMES,
        body=summary,
        output=Summary,
        calls=ok({"names": ["a", "b"]}, {"names": []}),
    ),
    Case(
        "out-schema-instance",
        fields=NAMES,
        body=summary,
        output=Summary,
        class_wrap="instance",
        function_wrap="instance",
        calls=ok({"names": ["a"]}),
    ),
    Case(
        "out-schema-structured-instance",
        fields=NAMES,
        body=summary,
        output=Summary,
        class_wrap="structured",
        function_wrap="instance",
        calls=ok({"names": ["a"]}),
    ),
    Case(
        "out-schema-violation",
        fields=NAMES,
        body=summary,
        output=Summary,
        calls=(Call({"names": ["bad"]}, "failed"),),
    ),
    Case(
        "out-schema-error-response",
        fields=NAMES,
        body=summary,
        output=Summary,
        calls=(Call({"names": ["refuse"]}, "tool-error"),),
    ),
    Case(
        "out-int",
        fields=NAMES,
        body=count,
        output=int,
        calls=(*ok({"names": ["a", "b"]}), Call({"names": ["bad"]}, "failed")),
    ),
    Case(
        "out-int-bare",
        fields=NAMES,
        body=count,
        output=int,
        class_wrap="bare",
        calls=ok({"names": ["a", "b"]}),
    ),
    Case(
        "out-str",
        fields=(Arg("name", str),),
        body=lambda args, injected: f"Hello, {args['name']}!",
        output=str,
        calls=ok({"name": "Ada"}),
    ),
    Case(
        "out-list",
        fields=NAMES,
        body=lambda args, injected: sorted(args["names"]),
        output=list[str],
        calls=ok({"names": ["b", "a"]}, {"names": []}),
    ),
    Case(
        "out-dataclass",
        fields=(Arg("width", int), Arg("height", int, 1)),
        body=lambda args, injected: Size(args["width"], args["height"]),
        output=Size,
        calls=ok({"width": 3}),
    ),
    Case(
        "out-dict",
        fields=NAMES,
        body=lambda args, injected: {"n": len(args["names"])},
        output=dict[str, int],
        calls=ok({"names": ["a"]}),
    ),
]

# -- errors --------------------------------------------------------------------------------


def refusing(args: Mapping[str, Any], injected: Mapping[str, Any]) -> Any:
    what = args["what"]
    if what == "raise":
        raise RuntimeError("the ledger at 10.0.0.7 timed out (secret)")
    if what == "tool-error":
        raise ToolError("This account is frozen; call the bank.")
    if what == "not-found":
        raise NotFound
    if what == "forbidden":
        raise Forbidden
    if what == "error-response":
        return McpResponse.error("No such account.")
    return as_text(args, injected)


ERRORS = [
    Case(
        f"error-{what}",
        fields=(Arg("what", str),),
        inject={"unit": Unit},
        body=refusing,
        calls=(Call({"what": what}, expect), Call({"what": "fine"}, "ok")),
    )
    for what, expect in [
        ("raise", "failed"),
        ("tool-error", "tool-error"),
        ("not-found", "unknown"),
        ("forbidden", "forbidden"),
        ("error-response", "tool-error"),
    ]
]

# -- visibility hooks ----------------------------------------------------------------------


def flag_on(injected: Mapping[str, Any]) -> bool:
    journal: Journal = injected["journal"]
    journal.events.append(f"should_register {describe(injected['scoped'])}")
    features: Features = injected["features"]
    return "parity" in features.enabled


def flag_off(injected: Mapping[str, Any]) -> bool:
    flag_on(injected)
    return False


def is_ada(injected: Mapping[str, Any]) -> bool:
    request: McpRequest = injected["request"]
    journal: Journal = injected["journal"]
    journal.events.append(f"authorize {describe(injected['scoped'])}")
    return request.identity is not None and request.identity.subject == "ada"


REGISTER_HOOK = {"features": Features, "scoped": Scoped, "journal": Journal}
AUTHORIZE_HOOK = {"request": McpRequest, "scoped": Scoped, "journal": Journal}


def visibility_cases() -> Iterable[Case]:
    outcomes: list[tuple[str, Any, Identity | None, Expect, Expect, bool]] = [
        # (id, should_register, identity, valid call, invalid call, listed)
        ("visible", flag_on, ADA, "ok", "invalid", True),
        ("hidden", flag_off, ADA, "unknown", "unknown", False),
        ("forbidden", flag_on, None, "forbidden", "forbidden", False),
        ("hidden-anonymous", flag_off, None, "unknown", "unknown", False),
    ]
    for label, register, identity, expect, expect_invalid, listed in outcomes:
        for hooks_async in (False, True):
            yield Case(
                f"hooks-{label}-{'async' if hooks_async else 'sync'}",
                fields=(Arg("name", str),),
                inject={"scoped": Scoped, "unit": Unit},
                should_register=Hook(REGISTER_HOOK, register, is_async=hooks_async),
                authorize=Hook(AUTHORIZE_HOOK, is_ada, is_async=hooks_async),
                identity=identity,
                listed=listed,
                # a hidden or refused tool answers the same whatever was sent
                calls=(Call({"name": "a"}, expect), Call({"wrong": 1}, expect_invalid)),
            )


VISIBILITY = list(visibility_cases())

POLICIES = [
    dataclasses.replace(case, id=case.id.replace("hooks-", f"policy-{at}-"), policy_at=at)
    for case in VISIBILITY
    for at in ("component", "owner")
]
"""The same rules as one ``Policy`` object, on the tool or on its server/extension."""

# -- middleware ----------------------------------------------------------------------------


async def passthrough(call: ToolCall, call_next: Next) -> Any:
    return await call_next(call)


async def valid_change(call: ToolCall, call_next: Next) -> Any:
    return await call_next(call.with_arguments(count=2))


async def digits_change(call: ToolCall, call_next: Next) -> Any:
    return await call_next(call.with_arguments(count="2"))


async def invalid_change(call: ToolCall, call_next: Next) -> Any:
    return await call_next(call.with_arguments(count="not a number"))


async def unknown_name(call: ToolCall, call_next: Next) -> Any:
    return await call_next(call.with_arguments(bogus=1))


async def short_circuit(call: ToolCall, call_next: Next) -> Any:
    if call.arguments["name"] == "stop":
        return McpResponse.error("Refused by middleware.")
    return await call_next(call)


async def raising(call: ToolCall, call_next: Next) -> Any:
    raise RuntimeError("middleware broke (secret)")


async def with_scoped(call: ToolCall, call_next: Next, scoped: Scoped, unit: Unit) -> Any:
    scoped.notes.append(f"middleware saw {describe(scoped)} {describe(unit)}")
    return await call_next(call)


async def with_request(call: ToolCall, call_next: Next, request: McpRequest) -> Any:
    if request.identity is None:
        return McpResponse.error("Sign in first.")
    return await call_next(call)


def notes(args: Mapping[str, Any], injected: Mapping[str, Any]) -> str:
    scoped: Scoped = injected["scoped"]
    return f"{as_text(args, injected)} notes={scoped.notes}"


MW_FIELDS = (Arg("name", str), Arg("count", int, 1))

MIDDLEWARE = [
    Case("mw-passthrough", fields=MW_FIELDS, middleware=(passthrough,), calls=ok({"name": "a"})),
    Case(
        "mw-valid-change",
        fields=MW_FIELDS,
        middleware=(valid_change,),
        calls=ok({"name": "a"}, {"name": "a", "count": 9}),
    ),
    Case(
        "mw-digits-change",
        fields=MW_FIELDS,
        middleware=(digits_change,),
        calls=ok({"name": "a"}),
    ),
    Case(
        "mw-invalid-change",
        fields=MW_FIELDS,
        middleware=(invalid_change,),
        calls=(Call({"name": "a"}, "failed"),),
    ),
    Case(
        "mw-unknown-name",
        fields=MW_FIELDS,
        middleware=(unknown_name,),
        calls=(Call({"name": "a"}, "failed"),),
    ),
    Case(
        "mw-short-circuit",
        fields=MW_FIELDS,
        inject={"unit": Unit},
        middleware=(short_circuit,),
        calls=(Call({"name": "stop"}, "tool-error"), *ok({"name": "go"})),
        handler_calls=1,  # the handler's scoped unit is built only when the chain reaches it
    ),
    Case(
        "mw-raises",
        fields=MW_FIELDS,
        inject={"unit": Unit},
        middleware=(raising,),
        calls=(Call({"name": "a"}, "failed"),),
        handler_calls=0,
    ),
    Case(
        "mw-injected-scoped",
        fields=MW_FIELDS,
        inject={"scoped": Scoped, "unit": Unit},
        body=notes,
        middleware=(with_scoped,),
        calls=ok({"name": "a"}, {"name": "b"}) + invalid({"name": "a", "scoped": 1}),
    ),
    Case(
        "mw-injected-request",
        fields=MW_FIELDS,
        middleware=(with_request,),
        calls=(Call({"name": "a"}, "tool-error"),),
    ),
    Case(
        "mw-chain",
        fields=MW_FIELDS,
        inject={"scoped": Scoped, "unit": Unit},
        body=notes,
        middleware=(with_scoped, valid_change, with_scoped),
        calls=ok({"name": "a"}),
    ),
    Case(
        "mw-typed-output",
        fields=NAMES,
        body=summary,
        output=Summary,
        middleware=(passthrough,),
        calls=(*ok({"names": ["a"]}), Call({"names": ["bad"]}, "failed")),
    ),
    Case(
        "mw-non-object-output",
        fields=NAMES,
        body=count,
        output=int,
        middleware=(passthrough,),
        calls=ok({"names": ["a"]}),
    ),
]

# -- listing metadata ----------------------------------------------------------------------

LISTING = [
    Case(
        "list-metadata",
        fields=(Arg("name", str),),
        doc="Find a ticket by its number.\n\n    More lines of the docstring.",
        title="Find a ticket",
        annotations=ToolAnnotations(read_only=True, idempotent=True, open_world=False),
        meta={"com.example/team": "support"},
        calls=ok({"name": "a"}),
    ),
    Case(
        "list-no-docstring",
        fields=(Arg("name", str),),
        doc=None,
        calls=ok({"name": "a"}),
    ),
    Case(
        "list-destructive",
        annotations=ToolAnnotations(destructive=True),
        calls=ok({}),
    ),
]


def with_sync_variants(cases: Iterable[Case]) -> list[Case]:
    """Every case with an ``async def`` handler, then its ``def`` twin."""
    found: list[Case] = []
    for case in cases:
        found.append(case)
        found.append(dataclasses.replace(case, id=f"{case.id}-sync", is_async=False))
    return found


CASES: list[Case] = [
    *with_sync_variants([*ARGUMENTS, *INJECTED, *OUTPUTS, *ERRORS]),
    *VISIBILITY,
    *POLICIES,
    *with_sync_variants(MIDDLEWARE),
    *LISTING,
]

assert len({case.id for case in CASES}) == len(CASES), "case ids must be unique"
