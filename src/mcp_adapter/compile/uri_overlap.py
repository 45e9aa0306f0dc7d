"""Whether two URI templates can match one URI (which would make reads ambiguous).

Each template is turned into the regular language of the URIs its pattern allows:
literals, and for every variable the characters the SDK's matcher
(``mcp.shared.uri_template``) lets it take (its operator's stop characters
excluded). Two templates overlap when the two languages intersect, decided by a
search of the product of their automata, which also yields a shortest shared URI.

The language is exact for each construct and may be a little larger than what
the SDK's matcher accepts (its scan, which never backtracks, anchors a variable
on the first or the last occurrence of the literal next to it), never smaller.
So a pair this check passes can never match one URI; a pair it refuses usually
can, and the shared URI is then checked with the SDK's own ``UriTemplate.match``
so the compile error can say which case it is.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from mcp.shared.uri_template import Operator, UriTemplate, Variable

_EXPRESSION = re.compile(r"(\{[^}]*\})")

_STOPS = {
    "": "/?#&,",
    "+": "?#",
    "#": "",
    ".": "./?#",
    "/": "/?#",
    ";": ";/?#",
    "?": "&#",
    "&": "&#",
}
"""What each operator's value may not contain: the SDK matcher's own table (private
there, so copied; the property test in tests/components/test_resources.py holds this
module to the SDK's ``UriTemplate.match``)."""
_PREFIX = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&"}
_SEPARATOR = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}
_UNNAMED_BOUNDED = frozenset({"", "+", "#", ".", "/"})
_READABLE = "xyzqjkw0123456789"


def non_empty_variables(template: UriTemplate) -> frozenset[str]:
    """Variables an empty value may not fill: ``books://{isbn}`` does not serve ``books://``.

    Named operators (``{;x}``, ``{?x}``, ``{&x}``) spell an empty value (``;x``, ``?x=``)
    and an exploded variable may be an empty list: those the template allows to be empty.
    """
    allowed_empty = template.query_variable_names
    return frozenset(
        variable.name
        for variable in template.variables
        if not variable.explode
        and variable.operator in _UNNAMED_BOUNDED
        and variable.name not in allowed_empty
    )


@dataclass(frozen=True, slots=True)
class _AnyBut:
    """A character class: every character except ``excluded``."""

    excluded: frozenset[str]


_Label = str | _AnyBut | None
"""One character, a class, or ``None`` for an empty (epsilon) move."""


class _Automaton:
    """A nondeterministic automaton: state 0 starts, ``accept`` ends."""

    def __init__(self) -> None:
        self.edges: list[list[tuple[_Label, int]]] = [[]]
        self.accept = 0

    def state(self) -> int:
        self.edges.append([])
        return len(self.edges) - 1

    def edge(self, source: int, label: _Label, target: int) -> None:
        self.edges[source].append((label, target))

    def literal(self, at: int, text: str) -> int:
        for char in text:
            nxt = self.state()
            self.edge(at, char, nxt)
            at = nxt
        return at

    def run(self, at: int, excluded: Iterable[str], *, at_least_one: bool = False) -> int:
        """Any number of characters outside ``excluded`` (one at least, if asked)."""
        chars = _AnyBut(frozenset(excluded))
        if at_least_one:
            first = self.state()
            self.edge(at, chars, first)
            at = first
        loop = self.state()
        self.edge(at, None, loop)
        self.edge(loop, chars, loop)
        return loop

    def optional(self, start: int, end: int) -> int:
        """Make the path ``start`` .. ``end`` optional; returns the state after it."""
        after = self.state()  # ``end`` may loop: skipping must not enter the loop
        self.edge(start, None, after)
        self.edge(end, None, after)
        return after

    def chars(self) -> set[str]:
        found: set[str] = set()
        for edges in self.edges:
            for label, _ in edges:
                if isinstance(label, str):
                    found.add(label)
                elif isinstance(label, _AnyBut):
                    found |= label.excluded
        return found


def _variable(
    machine: _Automaton, at: int, variable: Variable, lead: str, extra: str, non_empty: bool
) -> int:
    """The URI text one variable of an expression can produce (``lead`` included)."""
    operator = variable.operator
    stops = _STOPS[operator] + extra
    if variable.explode and operator == ";":
        # "" or ;a=x;a;a=y: each segment is the name, with or without a value
        begin = machine.state()
        machine.edge(at, None, begin)
        segment = machine.literal(begin, ";" + variable.name)
        value = machine.run(machine.literal(segment, "="), stops)
        end = machine.optional(segment, value)
        machine.edge(end, None, begin)
        return machine.optional(at, end)
    if variable.explode:
        # "" or a run starting with the separator: {/a*} -> /x/y, {.a*} -> .x.y
        start = at
        at = machine.literal(at, _SEPARATOR[operator])
        at = machine.run(at, set(stops) - {_SEPARATOR[operator]})
        return machine.optional(start, at)
    if operator == ";":
        at = machine.literal(at, lead + variable.name)
        start = at
        at = machine.run(machine.literal(at, "="), stops)
        return machine.optional(start, at)
    if operator in ("?", "&"):
        at = machine.literal(at, f"{lead}{variable.name}=")
        return machine.run(at, stops)
    return machine.run(machine.literal(at, lead), stops, at_least_one=non_empty)


def _automaton(template: UriTemplate, *, empty_values: bool) -> _Automaton:
    """The URIs ``template``'s pattern allows (a superset of what the SDK matches)."""
    machine = _Automaton()
    lenient = template.query_variable_names
    non_empty = frozenset() if empty_values else non_empty_variables(template)
    extra = "?#" if lenient else ""  # lenient matching scans only the part before ? and #
    at = 0
    for part in _EXPRESSION.split(template.template):
        if not part:
            continue
        if not part.startswith("{"):
            at = machine.literal(at, part)
            continue
        body = part[1:-1]
        operator = cast(Operator, body[0] if body[0] in "+#./;?&" else "")
        names = body[len(operator) :].split(",")
        if lenient and names[0].rstrip("*") in lenient:
            break  # the trailing query expressions, matched leniently below
        for index, spec in enumerate(names):
            variable = Variable(spec.rstrip("*"), operator, spec.endswith("*"))
            lead = _PREFIX[operator] if index == 0 else _SEPARATOR[operator]
            at = _variable(machine, at, variable, lead, extra, variable.name in non_empty)
    if lenient:
        query = machine.run(machine.literal(at, "?"), "#")
        at = machine.optional(at, query)
        fragment = machine.run(machine.literal(at, "#"), "")
        at = machine.optional(at, fragment)
    machine.accept = at
    return machine


def _closure(machine: _Automaton, state: int) -> set[int]:
    seen = {state}
    todo = [state]
    while todo:
        for label, target in machine.edges[todo.pop()]:
            if label is None and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _accepts(label: _Label, char: str) -> bool:
    if isinstance(label, _AnyBut):
        return char not in label.excluded
    return label == char


def _step(machine: _Automaton, states: set[int], char: str) -> set[int]:
    return {
        target
        for state in states
        for label, target in machine.edges[state]
        if label is not None and _accepts(label, char)
    }


def _alphabet(*machines: _Automaton) -> list[str]:
    """One character per class of characters no automaton tells apart."""
    known: set[str] = set()
    for machine in machines:
        known |= machine.chars()
    other = next((c for c in _READABLE if c not in known), None)
    if other is None:
        other = next(chr(c) for c in range(0x100, 0x10000) if chr(c) not in known)
    return [other, *sorted(known)]


def _intersection(first: _Automaton, second: _Automaton) -> str | None:
    """A shortest text both automata accept, or ``None``."""
    alphabet = _alphabet(first, second)
    closures: tuple[dict[int, set[int]], dict[int, set[int]]] = ({}, {})

    def closure(side: int, state: int) -> set[int]:
        machine = first if side == 0 else second
        if state not in closures[side]:
            closures[side][state] = _closure(machine, state)
        return closures[side][state]

    start = (0, 0)
    came_from: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    queue = deque([start])
    while queue:
        pair = queue.popleft()
        left, right = closure(0, pair[0]), closure(1, pair[1])
        if first.accept in left and second.accept in right:
            text: list[str] = []
            step = came_from[pair]
            while step is not None:
                pair, char = step
                text.append(char)
                step = came_from[pair]
            return "".join(reversed(text))
        for char in alphabet:
            for a in _step(first, left, char):
                for b in _step(second, right, char):
                    if (a, b) not in came_from:
                        came_from[(a, b)] = (pair, char)
                        queue.append((a, b))
    return None


@dataclass(frozen=True, slots=True)
class SharedUri:
    """A URI two templates' patterns both allow."""

    uri: str
    matched_by_both: bool
    """Whether the SDK's matcher really matches it with both (else only the patterns do)."""


def shared_uri(first: str, second: str) -> SharedUri | None:
    """A URI that both templates can match, or ``None`` when none can.

    >>> shared_uri("demo://{a}/x", "demo://y/{b}")
    SharedUri(uri='demo://y/x', matched_by_both=True)
    >>> shared_uri("demo://{id}.json", "demo://{id}.txt") is None
    True
    """
    parsed = UriTemplate.parse(first), UriTemplate.parse(second)
    found: str | None = None
    for empty_values in (False, True):  # a witness without empty values reads better
        found = _intersection(
            _automaton(parsed[0], empty_values=empty_values),
            _automaton(parsed[1], empty_values=empty_values),
        )
        if found is not None:
            break
    if found is None:
        return None
    return SharedUri(found, all(t.match(found) is not None for t in parsed))
