"""The composition matrix (issue 29): the dimensions a call varies in, the combinations that
are not valid or answer otherwise (``CONSTRAINTS``), the all-pairs cases, and the known
defects the cases meet today (``KNOWN``).

A new feature adds its dimension (and its values) to ``DIMENSIONS``, its rows to
``CONSTRAINTS`` where a combination is not valid, and what a case of it must see to
``tests/composition/drive.py``; the cases follow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pytest

from tests.composition.pairwise import Assignment, all_pairs

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TASKS = frozenset({"task_optional", "task_required"})
ASKS = frozenset({"resolver", "elicit"})
REQUEST_STAGE = frozenset({"request", "access_log", "timing", "rate_limit", "response_limit"})
"""The layers that stand in the request stage (the built-ins at their default stage)."""

DIMENSIONS: Mapping[str, Sequence[str]] = {
    "component": ("class", "decorator", "spec", "resource", "prompt"),
    "layers": (
        "none",
        "request",
        "call",
        "access_log",
        "timing",
        "rate_limit",
        "response_limit",
    ),
    "execution": ("inline", "task_optional", "task_required"),
    "input": ("none", "resolver", "elicit"),
    "state": ("none", "handle"),
    "transport": ("memory", "stdio", "http_stateless", "http_stateful"),
    "era": (LEGACY, MODERN),
    "store": ("memory", "redis"),
}
SERVER = ("transport", "era", "store", "layers")
"""What one server (and its client connection) is made for: the cases that agree on these
share it."""

Outcome = Literal["inline", "compile-error", "not-offered", "no-back-channel"]


@dataclass(frozen=True)
class Constraint:
    """A combination that is not valid, or that answers otherwise than each feature alone."""

    when: Mapping[str, frozenset[str]]
    reason: str
    outcome: Outcome
    """``compile-error``: the server does not compile, the problem says ``expect``;
    ``not-offered``: the tool is not listed and a call is refused with ``expect`` (a code);
    ``no-back-channel``: the call is refused with ``expect`` (a code);
    ``inline``: it runs inline and answers its normal result."""
    expect: str = ""
    excluded: bool = True
    """Left out of the all-pairs matrix (each value combination of ``when`` is a case of its
    own, asserting the outcome); ``False``: an outcome rule the matrix cases follow."""

    def matches(self, assignment: Assignment) -> bool:
        return all(assignment[name] in values for name, values in self.when.items())


def _when(**values: frozenset[str] | str) -> dict[str, frozenset[str]]:
    return {k: frozenset({v}) if isinstance(v, str) else v for k, v in values.items()}


KINDS_WITHOUT_TASKS = frozenset({"resource", "prompt"})

CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint(
        _when(component=KINDS_WITHOUT_TASKS, execution=TASKS),
        "tasks are a tools/call feature: Resource and Prompt declare no task_support, so a "
        "task_support attribute on one is not the API and the read or get runs inline",
        "inline",
    ),
    Constraint(
        _when(component=KINDS_WITHOUT_TASKS, state="handle"),
        "a StateHandle is a field of a tool's input: a resource or prompt whose handler needs "
        "the handle's session service has no handle to open it",
        "compile-error",
        "its calls carry no handle",
    ),
    Constraint(
        _when(execution=TASKS, state="handle"),
        "a task's body runs later, outside the handle's session",
        "compile-error",
        "cannot take a StateHandle",
    ),
    Constraint(
        _when(execution="task_required", era=LEGACY),
        "a 2025-11-25 client cannot negotiate the tasks extension, and the tool only runs as "
        "a task: it is not listed, and a call answers as for an unknown tool",
        "not-offered",
        "-32602",
    ),
    Constraint(
        _when(input=ASKS, era=LEGACY, transport="http_stateless"),
        "a 2025-11-25 question is a request from the server to the client, which stateless "
        "HTTP cannot carry",
        "no-back-channel",
        "-32600",
    ),
    Constraint(
        _when(execution="task_optional", era=LEGACY),
        "a 2025-11-25 client cannot negotiate the tasks extension: an optional task tool runs "
        "inline",
        "inline",
        excluded=False,
    ),
)


def allowed(assignment: Assignment) -> bool:
    return not any(row.excluded and row.matches(assignment) for row in CONSTRAINTS)


def constraint_of(assignment: Assignment) -> Constraint | None:
    """The excluded row a case stands for, if any (the first that matches)."""
    return next((row for row in CONSTRAINTS if row.excluded and row.matches(assignment)), None)


@dataclass(frozen=True)
class Case:
    number: int
    component: str
    layers: str
    execution: str
    input: str
    state: str
    transport: str
    era: str
    store: str
    constrained: bool = False
    """A case of an excluded ``CONSTRAINTS`` row, not one of the all-pairs matrix."""

    @property
    def values(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in DIMENSIONS}

    @property
    def name(self) -> str:
        """The component's name on its server."""
        return f"{'x' if self.constrained else 'm'}{self.number:02d}_{self.component}"

    @property
    def id(self) -> str:
        return "-".join([self.name, *(self.values[d] for d in DIMENSIONS if d != "component")])

    @property
    def group(self) -> tuple[str, ...]:
        return tuple(self.values[name] for name in SERVER)

    @property
    def is_tool(self) -> bool:
        return self.component not in KINDS_WITHOUT_TASKS

    @property
    def as_task(self) -> bool:
        """Started as a task (the client negotiated the extension: 2026-07-28 only)."""
        return self.is_tool and self.execution in TASKS and self.era == MODERN

    @property
    def constraint(self) -> Constraint | None:
        return constraint_of(self.values)


def _case(number: int, values: Mapping[str, str], *, constrained: bool = False) -> Case:
    return Case(number, **values, constrained=constrained)


PLAIN: Mapping[str, str] = {name: values[0] for name, values in DIMENSIONS.items()} | {
    "component": "class",
    "era": MODERN,
}
"""Every other dimension of a constraint's own cases."""


def _constrained() -> list[Case]:
    cases: list[Case] = []
    for row in CONSTRAINTS:
        if not row.excluded:
            continue
        names = list(row.when)
        combos: list[dict[str, str]] = [{}]
        for name in names:
            combos = [
                {**combo, name: value}
                for combo in combos
                for value in DIMENSIONS[name]
                if value in row.when[name]
            ]
        for combo in combos:
            cases.append(_case(len(cases) + 1, {**PLAIN, **combo}, constrained=True))
    return cases


MATRIX: tuple[Case, ...] = tuple(
    _case(number, values)
    for number, values in enumerate(all_pairs(DIMENSIONS, allowed, SERVER), start=1)
)
CONSTRAINED: tuple[Case, ...] = tuple(_constrained())
SERVED: tuple[Case, ...] = (
    *MATRIX,
    *(case for case in CONSTRAINED if getattr(case.constraint, "outcome", "") != "compile-error"),
)
"""Every case that runs on a server: the matrix, and the constraints' cases that compile."""

# -- known defects: one table, keyed by the combination --------------------------------------


@dataclass(frozen=True)
class Known:
    """A defect a combination meets today: its cases run as strict xfails with ``reason``, so
    that they XPASS (and the row is removed) once it is fixed."""

    when: Mapping[str, frozenset[str]]
    reason: str
    part: Literal["call", "separation"] = "call"
    """``call``: the case's calls; ``separation``: ``assert_schema_separation`` of its server."""

    def matches(self, case: Case) -> bool:
        return all(case.values[name] in values for name, values in self.when.items())


KNOWN: tuple[Known, ...] = (
    Known(
        _when(layers="response_limit", execution=TASKS, era=MODERN),
        "found by the matrix: ResponseLimit does not bound a task's result: tasks/get "
        "answers a result past max_bytes, though the limit bounds 'every answer of the "
        "server' (docs/layers.md); the tasks extension's methods do not pass the request stage",
    ),
)


def marks(case: Case, part: Literal["call", "separation"] = "call") -> list[pytest.MarkDecorator]:
    reasons = list(dict.fromkeys(r.reason for r in KNOWN if r.part == part and r.matches(case)))
    return [pytest.mark.xfail(strict=True, reason="; ".join(reasons))] if reasons else []


def params(cases: Sequence[Case], part: Literal["call", "separation"] = "call") -> list[object]:
    """The cases as ``pytest.param``s, in server order (a server starts once), marked."""
    ordered = sorted(cases, key=lambda case: (case.group, case.constrained, case.number))
    return [pytest.param(case, id=case.id, marks=marks(case, part)) for case in ordered]
