"""Hostile input for the request surface, as JSON-RPC text, and the checks every answer must pass.

``requests(era)`` makes well-formed JSON-RPC requests (an integer id) whose
method and params are wrong in every way: wrong types at every level, unknown
methods and names, huge strings, deep nesting, broken 2026-07-28 envelopes.
``malformed()`` makes text that is not one JSON-RPC request at all (invalid
JSON, non-objects, bad ``jsonrpc``/``id``/``method``, batches); transports
answer those themselves.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from mcp.types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    INVALID_REQUEST,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
)

from tests.reliability.servers import PROMPT_NAMES, TOOL_NAMES, URIS, leaks

MODERN = "2026-07-28"
LEGACY = "2025-11-25"

HUGE = "x" * 1_000_000
"""1 MB: over the echo tool's 100,000-character limit, far under the HTTP body limit."""


@dataclass(frozen=True)
class Sent:
    """One request as sent: its text, and the id an answer must carry."""

    text: str
    id: Any
    kind: str

    def __repr__(self) -> str:
        shown = self.text if len(self.text) < 300 else self.text[:300] + "..."
        return f"Sent({self.kind}, {shown!r})"


TEXT = st.text(st.characters(codec="utf-8"), max_size=24)
WRONG: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
    st.lists(st.integers(), max_size=3),
    st.dictionaries(TEXT, st.integers(), max_size=3),
)
"""A value of some other type than the one expected."""


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"n": value}
    return value


def deep_json(depth: int) -> str:
    """JSON text nested ``depth`` levels (beyond what ``json.dumps`` can write)."""
    return "[" * depth + "]" * depth


def maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually ``valid``, sometimes a value of the wrong type."""
    return st.one_of(valid, valid, valid, valid, WRONG)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)

_ECHO_LIKE = st.fixed_dictionaries(
    {"text": maybe(TEXT)},
    optional={"count": maybe(st.integers(-5, 5)), "tags": maybe(st.lists(TEXT, max_size=3))},
)
ARGUMENTS: st.SearchStrategy[Any] = st.one_of(
    _ECHO_LIKE,
    _ECHO_LIKE,
    _ECHO_LIKE,
    st.dictionaries(TEXT, JSON, max_size=4),
    st.builds(lambda d: {"text": nested(d)}, st.integers(1, 150)),
    st.sampled_from([{"text": HUGE}, {"text": HUGE[:100_000]}, {"tags": [HUGE[:50_000]] * 3}]),
)

TOOL_NAME = st.sampled_from([*TOOL_NAMES * 3, "", "ECHO", "echo ", HUGE[:10_000]]) | TEXT
PROMPT_NAME = st.one_of(st.sampled_from(PROMPT_NAMES), TEXT)
URI = st.one_of(st.sampled_from(URIS), TEXT, st.builds(lambda s: f"fuzz://items/{s}", TEXT))
CURSOR = st.one_of(TEXT, st.integers(-2, 10**20).map(str))

REF = st.one_of(
    st.fixed_dictionaries({"type": st.just("ref/prompt"), "name": maybe(PROMPT_NAME)}),
    st.fixed_dictionaries(
        {"type": st.just("ref/resource"), "uri": maybe(st.just("fuzz://items/{id}") | URI)}
    ),
    st.fixed_dictionaries({"type": TEXT}),
)

PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "tools/call": st.fixed_dictionaries(
        {"name": maybe(TOOL_NAME)}, optional={"arguments": maybe(ARGUMENTS)}
    ),
    "tools/list": st.fixed_dictionaries({}, optional={"cursor": maybe(CURSOR)}),
    "resources/read": st.fixed_dictionaries({"uri": maybe(URI)}),
    "resources/list": st.fixed_dictionaries({}, optional={"cursor": maybe(CURSOR)}),
    "resources/templates/list": st.fixed_dictionaries({}, optional={"cursor": maybe(CURSOR)}),
    "prompts/get": st.fixed_dictionaries(
        {"name": maybe(PROMPT_NAME)},
        optional={"arguments": maybe(st.dictionaries(TEXT, maybe(TEXT), max_size=3))},
    ),
    "prompts/list": st.fixed_dictionaries({}, optional={"cursor": maybe(CURSOR)}),
    "completion/complete": st.fixed_dictionaries(
        {
            "ref": maybe(REF),
            "argument": maybe(
                st.fixed_dictionaries(
                    {"name": maybe(TEXT), "value": maybe(st.sampled_from(["A", "boom", ""]) | TEXT)}
                )
            ),
        },
        optional={"context": maybe(st.fixed_dictionaries({"arguments": maybe(JSON)}))},
    ),
    "ping": st.just({}),
    "logging/setLevel": st.fixed_dictionaries({"level": maybe(TEXT)}),
    "resources/subscribe": st.fixed_dictionaries({"uri": maybe(URI)}),
    "initialize": st.dictionaries(TEXT, JSON, max_size=3),
}

_WEIGHTED = [
    *["tools/call"] * 8,
    *["resources/read", "prompts/get", "completion/complete"] * 3,
    *sorted(PARAMS),
    *[None] * 3,
]
METHOD = st.sampled_from(_WEIGHTED).flatmap(lambda m: TEXT if m is None else st.just(m))
"""Mostly the methods the adapter serves, tools/call most of all; sometimes any text."""


def envelope(meta: Any = None) -> dict[str, Any]:
    """The per-request ``_meta`` a 2026-07-28 client sends."""
    values = {
        PROTOCOL_VERSION_META_KEY: MODERN,
        CLIENT_INFO_META_KEY: {"name": "fuzzer", "version": "0"},
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    return {**values, **(meta or {})}


@st.composite
def _meta(draw: st.DrawFn, era: str) -> Any:
    if era == LEGACY:
        return draw(st.one_of(st.just(None), st.just(None), WRONG))
    choice = draw(st.sampled_from(["ok"] * 9 + ["wrong", "missing-key", "bad-version"]))
    if choice == "wrong":
        return draw(WRONG)
    meta = envelope()
    if choice == "missing-key":
        meta.pop(draw(st.sampled_from(sorted(meta))))
    elif choice == "bad-version":
        meta[PROTOCOL_VERSION_META_KEY] = draw(WRONG | st.just(LEGACY))
    return meta


_ids = iter(range(10**9))


def requests(era: str) -> st.SearchStrategy[Sent]:
    """A JSON-RPC request with an integer id whose method and params are hostile, or a
    well-formed call of a served tool with hostile arguments."""
    return st.one_of(hostile_requests(era), tool_calls(era))


@st.composite
def tool_calls(draw: st.DrawFn, era: str) -> Sent:
    """``tools/call`` of a served tool, envelope intact, arguments hostile."""
    params: dict[str, Any] = {"name": draw(st.sampled_from(TOOL_NAMES))}
    if draw(st.booleans()):
        params["arguments"] = draw(ARGUMENTS)
    if era == MODERN:
        params["_meta"] = envelope()
    request_id = next(_ids)
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return Sent(json.dumps(body), request_id, "tools/call (served tool)")


@st.composite
def hostile_requests(draw: st.DrawFn, era: str) -> Sent:
    """A JSON-RPC request with an integer id whose method and params are hostile."""
    method = draw(METHOD)
    params: Any = draw(PARAMS.get(method, st.dictionaries(TEXT, JSON, max_size=3)))
    if isinstance(params, dict):
        params.update(draw(st.dictionaries(TEXT, JSON, max_size=2)))
        meta = draw(_meta(era))
        if meta is not None:
            params["_meta"] = meta
    request_id = next(_ids)
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if draw(st.integers(0, 9)) != 7:  # sometimes no params at all
        body["params"] = params
    kind = method if method in PARAMS else "unknown method"
    return Sent(json.dumps(body), request_id, kind)


def _object_with(field: str, value: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    body[field] = value
    return body


@st.composite
def malformed(draw: st.DrawFn) -> Sent:
    """Text that is not a single well-formed JSON-RPC request (params of the wrong type
    included: the SDK's message models refuse them before any method is looked up)."""
    kind = draw(
        st.sampled_from(
            [
                "not json",
                "truncated",
                "not an object",
                "bad jsonrpc",
                "bad id",
                "bad method",
                "bad params",
                "batch",
            ]
        )
    )
    text: str
    if kind == "not json":
        text = draw(TEXT.filter(lambda t: _not_json(t)))
    elif kind == "truncated":
        whole = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        text = whole[: draw(st.integers(1, len(whole) - 1))]
    elif kind == "not an object":
        text = json.dumps(draw(st.one_of(WRONG.filter(lambda v: not isinstance(v, dict)), JSON)))
    elif kind == "bad jsonrpc":
        text = json.dumps(_object_with("jsonrpc", draw(WRONG | st.just("1.0"))))
    elif kind == "bad id":  # (a JSON-RPC id is a string, a number or null)
        value = draw(st.one_of(st.booleans(), st.lists(st.integers()), st.just({"n": 1})))
        text = json.dumps(_object_with("id", value))
    elif kind == "bad params":  # (the SDK reads ``null`` params as absent)
        value = draw(WRONG.filter(lambda v: v is not None and not isinstance(v, dict)))
        text = json.dumps(_object_with("params", value))
    elif kind == "bad method":
        text = json.dumps(
            _object_with("method", draw(WRONG.filter(lambda v: not isinstance(v, str))))
        )
    else:
        text = json.dumps([_object_with("id", n) for n in range(draw(st.integers(0, 3)))])
    if text.strip() in ("", "[]") or "\n" in text or "\r" in text:
        text = "[]" if kind == "batch" else "{not json"
    return Sent(text, None, kind)


def _not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return bool(text.strip()) and "\n" not in text and "\r" not in text
    return False


STATS: Counter[str] = Counter()
"""Answers checked by the fuzz tests, by transport, request kind and outcome (the
reliability suite prints them at the end of a run with ``-s``)."""


def check_answer(sent: Sent, message: Any, via: str = "in process") -> None:
    """Every answer: one JSON-RPC response to this id, result xor error, nothing leaked."""
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0", message
    assert ("result" in message) != ("error" in message), message
    if message.get("id") is None:  # allowed only when the id could not be trusted
        assert message.get("error", {}).get("code") in (PARSE_ERROR, INVALID_REQUEST), message
    elif sent.id is not None:
        assert message.get("id") == sent.id, message
    text = json.dumps(message)
    assert not leaks(text, sent.text), (leaks(text, sent.text), message)
    if "error" in message:
        error = message["error"]
        assert isinstance(error.get("code"), int), message
        assert isinstance(error.get("message"), str), message
        STATS[f"{via} | {sent.kind}: error {error['code']}"] += 1
    else:
        result = message["result"]
        outcome = "isError" if isinstance(result, dict) and result.get("isError") else "ok"
        STATS[f"{via} | {sent.kind}: result {outcome}"] += 1
