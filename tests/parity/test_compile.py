"""Compile-time parity: the same problem in a class tool and in a function tool is reported
with the same kind, wording, path and hint (modulo the names of the two declarations:
``XTool.handle`` / ``XExtension.x``, ``XTool.shouldRegister`` / ``XExtension.should_register``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

import pytest

from container import Container, Problem
from mcp_adapter import CompileError, Platform, compile_server
from tests.parity.cases import passthrough
from tests.parity.kit import (
    Arg,
    Call,
    Case,
    Hook,
    Scoped,
    class_name,
    class_tool_server,
    extension_name,
    function_servable,
    middleware_extension,
    new_container,
)


class Clock(Protocol):
    """An abstract service that no container of these tests binds."""

    def now(self) -> float: ...


class Formatter:
    """Autowirable, but it needs a ``Clock``."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock


async def needs_clock(call: Any, call_next: Any, clock: Clock) -> Any:
    return await call_next(call)


def never(injected: Any) -> bool:
    raise AssertionError("a server that does not compile runs no hook")


def broken(case_id: str, **changes: Any) -> Case:
    return Case(case_id, fields=(Arg("name", str),), calls=(Call({"name": "a"}, "ok"),), **changes)


HOOK_PATH = (
    "missing binding in a visibility hook: same kind, message and hint, but the function "
    "tool's path has a leading \"should_register of tool 'x'\" / \"authorize of tool 'x'\" "
    "that the class tool's ('X.shouldRegister(clock)' / 'X.authorize(clock)') has not"
)
HANDLER_AND_MIDDLEWARE = (
    "missing bindings in both the handler and middleware: the class tool reports only the "
    "handler's problem (its middleware is not planned once the class tool failed); the "
    "function tool reports the middleware's ('middleware of tool ...', 'needs_clock(clock)') "
    "and then the handler's, in the function wording of a missing binding"
)

CASES: list[tuple[Case, str]] = [
    (broken("missing-binding", inject={"clock": Clock}), ""),
    (broken("missing-nested-binding", inject={"formatter": Formatter}), ""),
    (broken("missing-binding-beside-a-service", inject={"scoped": Scoped, "clock": Clock}), ""),
    (
        broken("missing-in-should-register", should_register=Hook({"clock": Clock}, never)),
        HOOK_PATH,
    ),
    (broken("missing-in-authorize", authorize=Hook({"clock": Clock}, never, True)), HOOK_PATH),
    (
        broken(
            "missing-in-a-policy-on-the-tool",
            should_register=Hook({"clock": Clock}, never),
            policy_at="component",
        ),
        "",
    ),
    (
        broken(
            "missing-in-a-policy-on-the-owner",
            authorize=Hook({"clock": Clock}, never, True),
            policy_at="owner",
        ),
        "",
    ),
    (broken("missing-in-middleware", middleware=(needs_clock,)), ""),
    (
        broken(
            "missing-in-middleware-and-handler",
            inject={"clock": Clock},
            middleware=(passthrough, needs_clock),
        ),
        HANDLER_AND_MIDDLEWARE,
    ),
]


def names(case: Case) -> list[tuple[str, str]]:
    """The two declarations' own names, and what both become."""
    tool, cls, ext = case.tool, class_name(case), extension_name(case)
    return [
        (f"{cls}.handle", "<handler>"),
        (f"{ext}.{tool}", "<handler>"),
        (f"{cls}.shouldRegister", "<should_register>"),
        (f"{ext}.should_register", "<should_register>"),
        (f"{cls}.authorize", "<authorize>"),
        (f"{ext}.authorize", "<authorize>"),
        (f"of server {tool}Server", "of <owner>"),
        ("of extension functions", "of <owner>"),
    ]


def normalised(problems: list[Problem], case: Case) -> list[dict[str, Any]]:
    def plain(text: str) -> str:
        for name, neutral in names(case):
            text = text.replace(name, neutral)
        return re.sub(r"<class '[\w.]+\.(\w+)'>", r"\1", text)

    return [
        {
            "kind": problem.kind.value,
            "path": [plain(step) for step in problem.path],
            "message": plain(problem.message),
            "hint": plain(problem.hint),
        }
        for problem in problems
    ]


def problems_of(compile_it: Callable[[Container], Any]) -> list[Problem]:
    with pytest.raises(CompileError) as raised:
        compile_it(new_container())
    return list(raised.value.problems)


def class_side(case: Case) -> list[Problem]:
    server = class_tool_server(case)
    if case.middleware:
        platform = Platform([middleware_extension(case)], server=server)
        return problems_of(platform.compile)
    return problems_of(lambda container: compile_server(server, container))


def function_side(case: Case) -> list[Problem]:
    return problems_of(function_servable(case).compile)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            case, id=case.id, marks=[pytest.mark.xfail(strict=True, reason=why)] if why else []
        )
        for case, why in CASES
    ],
)
def test_compile_problems_match(case: Case) -> None:
    classes = normalised(class_side(case), case)
    functions = normalised(function_side(case), case)
    assert classes, "the class tool compiled"
    assert all("Clock" in p["message"] for p in classes), classes
    assert classes == functions, (
        f"{case.id}: the class tool's problems\n  {classes}\nand the function tool's\n  {functions}"
    )
