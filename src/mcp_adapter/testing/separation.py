"""``assert_schema_separation``: prove, over a whole server, that injected parameters
stay out of what clients see and send.

For every tool it checks, statically, that the published ``inputSchema`` (both
protocol eras) is the input contract's schema and names no injected parameter
(service, ``McpRequest``, HTTP request); then, through ``McpTestClient`` and
real JSON-RPC serialization, calling each tool as a client that supports every
feature would (``testing.driving``: questions answered, tasks waited for, state
handles minted), that

- generated valid payloads are accepted and reach the handler, with every
  injected parameter filled by the container, never by the payload;
- a payload carrying an injected parameter's name as a key never replaces the
  injected value (the contract rejects the unknown key, or ignores it);
- invalid payloads are answered ``Invalid tool arguments`` without reaching the
  handler, and without echoing the rejected value.

By default the handlers themselves do not run: each is swapped for a probe that
records what it would have received, and visibility hooks are bypassed, so the
check needs no data and has no side effects (services are still built). With
``run_handlers=True`` the real handlers run on the generated payloads, and the
check only asserts that none is rejected as invalid.

Needs ``hypothesis`` (``pip install 'mcp-adapter-di[testing]'``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio.from_thread
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter.compile.server import compile_server
from mcp_adapter.compiled.catalog import Catalog, CompiledTool
from mcp_adapter.compiled.handlers import Slot
from mcp_adapter.declare.components import Server
from mcp_adapter.declare.request import Identity
from mcp_adapter.distribution import needs_extra
from mcp_adapter.testing.client import LEGACY, MODERN, Protocol
from mcp_adapter.testing.driving import Draw, Driver, driving
from mcp_adapter.testing.probe import INJECTED, Probe, check_received, probed
from mcp_adapter.testing.result import McpResult
from mcp_adapter.testing.strategies import accepts, payloads

with needs_extra("testing", __name__):
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

INVALID_ARGUMENTS = "Invalid tool arguments"

_TASKS_ONLY = "it runs only as a task, a 2026-07-28 feature: no client of this era can call it"


class SchemaSeparationError(AssertionError):
    """What ``assert_schema_separation`` found, every problem at once."""

    def __init__(self, server: str, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"- {p}" for p in self.problems)
        super().__init__(f"schema separation of {server}: {len(self.problems)} problem(s)\n{lines}")


@dataclass
class SeparationReport:
    """What a passing check covered."""

    server: str
    tools: int = 0
    calls: int = 0
    """``tools/call`` requests sent, over every era."""
    valid: int = 0
    injected_keys: int = 0
    invalid: int = 0
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Tools no client of an era can call (a task-required tool in 2025-11-25), with why."""


def injected_parameters(tool: CompiledTool) -> dict[str, Slot]:
    """The handler parameters of ``tool`` filled by the server, by name."""
    return {slot.name: slot for slot in tool.handler.slots if slot.source in INJECTED}


def _properties(schema: Mapping[str, Any]) -> set[str]:
    props = schema.get("properties")
    return set(props) if isinstance(props, Mapping) else set()


def _type_name(key: Any) -> str | None:
    return getattr(key, "__name__", None) if isinstance(key, type) else None


def schema_problems(tool: CompiledTool) -> list[str]:
    """Static checks of one tool's published input schema against its handler plan."""
    problems: list[str] = []
    injected = injected_parameters(tool)
    whole_payload = tool.handler.payload is not None and not tool.spread
    own_fields = _properties(tool.input.json_schema) if whole_payload else set()
    for era, entry in (("2026-07-28", tool.modern), ("2025-11-25", tool.legacy)):
        schema = entry.input_schema
        if schema != tool.input.json_schema:
            problems.append(
                f"{tool.name} ({era}): the published inputSchema is not the input contract's schema"
            )
        leaked = sorted((_properties(schema) & set(injected)) - own_fields)
        if leaked:
            problems.append(
                f"{tool.name} ({era}): inputSchema names injected parameter(s) {', '.join(leaked)}"
            )
        defs = schema.get("$defs") or {}
        types = {name for slot in injected.values() if (name := _type_name(slot.key))}
        named = sorted(types & set(defs))
        if named:
            problems.append(
                f"{tool.name} ({era}): inputSchema describes injected type(s) {', '.join(named)}"
            )
    return problems


def _said(result: McpResult) -> str:
    if result.error is not None:
        return str(result.error.get("message", ""))
    return "\n".join(result.texts)


# -- mutations that make a payload invalid ----------------------------------------------------


def _invalid_variants(
    tool: CompiledTool, payload: dict[str, Any], marker: str
) -> st.SearchStrategy[dict[str, Any]]:
    schema = tool.input.json_schema
    required = [name for name in schema.get("required", ()) if name in payload]
    keys = sorted(payload)
    options: list[st.SearchStrategy[dict[str, Any]]] = [
        st.just({**payload, "not-a-field": marker}),
    ]
    if required:
        options.append(
            st.sampled_from(required).map(lambda k: {n: v for n, v in payload.items() if n != k})
        )
    if keys:
        # The marker is a value, never a key: a rejection may name the key it rejects
        # (``notes.x: Input should be a valid number``), which is a path, not an echo.
        wrong = st.sampled_from([{"x": [marker]}, [marker, {"x": marker}], marker, 1.5, True])
        options.append(
            st.tuples(st.sampled_from(keys), wrong).map(lambda kv: {**payload, kv[0]: kv[1]})
        )
    return st.one_of(options)


# -- the check --------------------------------------------------------------------------------


def _catalog_of(server: Any, container: Container) -> Catalog:
    if isinstance(server, Catalog):
        return server
    if isinstance(server, type) and issubclass(server, Server):
        return compile_server(server, container)
    compile_ = getattr(server, "compile", None)
    if callable(compile_):
        catalog = compile_(container)
        if isinstance(catalog, Catalog):
            return catalog
    raise TypeError(f"cannot check {server!r}: expected a Server class, a Catalog or a Platform")


def _settings(max_examples: int, shrink: bool) -> settings:
    phases = [Phase.explicit, Phase.reuse, Phase.generate, *([Phase.shrink] if shrink else [])]
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        phases=phases,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )


@contextmanager
def _portal() -> Iterator[anyio.from_thread.BlockingPortal]:
    with anyio.from_thread.start_blocking_portal() as portal:
        yield portal


class _ToolCheck:
    """The dynamic checks of one tool in one protocol era."""

    def __init__(
        self,
        tool: CompiledTool,
        driver: Driver,
        probe: Probe | None,
        report: SeparationReport,
        era: str,
    ) -> None:
        self.signed_in = driver.client.caller is not None
        self.tool = tool
        self.driver = driver
        self.probe = probe
        self.report = report
        self.era = era
        self.marker = f"mcp-adapter-probe-{secrets.token_hex(4)}"
        self.draw: Draw = _no_draw

    def _send(self, payload: dict[str, Any]) -> McpResult:
        if self.probe is not None:
            self.probe.calls.clear()
        self.report.calls += 1
        return self.driver.send(self.tool.name, payload, self.draw)

    def with_handle(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` carrying a handle the caller holds in its ``StateHandle`` field (a
        generated string is no handle this server minted)."""
        field = self.tool.handle
        if field is None or not isinstance(payload.get(field.wire), str):
            return payload
        return {**payload, field.wire: self.driver.handle()}

    def _fail(self, why: str, payload: Any, result: McpResult | None = None) -> None:
        said = f"; server said {_said(result)!r}" if result is not None else ""
        raise AssertionError(f"{self.tool.name} ({self.era}): {why}; payload {payload!r}{said}")

    def valid(self, payload: dict[str, Any]) -> None:
        self.report.valid += 1
        result = self._send(payload)
        if INVALID_ARGUMENTS in _said(result):
            self._fail("a valid payload was rejected as invalid", payload, result)
        if self.probe is None:
            return
        if result.is_error or len(self.probe.calls) != 1:
            self._fail("a valid payload did not reach the handler", payload, result)
        problems = check_received(
            self.tool, payload, self.probe.calls[0], self.marker, self.signed_in
        )
        if problems:
            self._fail("; ".join(problems), payload)

    def injected_key(self, payload: dict[str, Any], name: str) -> None:
        assert self.probe is not None
        self.report.injected_keys += 1
        sent = self.with_handle({**payload, name: self.marker})  # a handle stays a handle
        result = self._send(sent)
        if not accepts(self.tool.input, sent):
            if INVALID_ARGUMENTS not in _said(result) or self.probe.calls:
                self._fail(
                    f"a payload key named like injected parameter {name!r} was not rejected",
                    sent,
                    result,
                )
            return
        if len(self.probe.calls) != 1:
            self._fail("the payload did not reach the handler", sent, result)
        problems = check_received(self.tool, sent, self.probe.calls[0], self.marker, self.signed_in)
        if problems:
            self._fail("; ".join(problems), sent)

    def invalid(self, payload: dict[str, Any]) -> None:
        assert self.probe is not None
        self.report.invalid += 1
        result = self._send(payload)
        said = _said(result)
        if INVALID_ARGUMENTS not in said or self.probe.calls:
            self._fail("an invalid payload was not rejected before the handler", payload, result)
        if self.marker in said:
            self._fail("the rejection echoes the rejected value", payload, result)

    def run(self, max_examples: int, shrink: bool) -> None:
        tool = self.tool
        names = sorted(injected_parameters(tool))
        probing = self.probe is not None

        @_settings(max_examples, shrink)
        @given(data=st.data())
        def body(data: st.DataObject) -> None:
            self.draw = data.draw
            payload = self.with_handle(data.draw(payloads(tool), label="payload"))
            self.valid(payload)
            if not probing:
                return
            for name in names:  # each of them, every example: none is left to chance
                self.injected_key(payload, name)
            bad = data.draw(_invalid_variants(tool, payload, self.marker), label="invalid")
            if not accepts(tool.input, bad):  # a permissive contract may accept a variant
                self.invalid(bad)

        body()


def _no_draw(strategy: st.SearchStrategy[Any]) -> Any:
    raise AssertionError("a question was asked outside a generated example")


def _messages(error: BaseException) -> list[str]:
    """One line per failure (hypothesis groups distinct failures of one test)."""
    if isinstance(error, BaseExceptionGroup):
        return [line for inner in error.exceptions for line in _messages(inner)]
    text = str(error).strip()
    return [text.splitlines()[0] if text else repr(error)]


def assert_schema_separation(
    server: type[Server] | Catalog | Any,
    container: Container,
    *,
    max_examples: int = 20,
    protocols: Sequence[Protocol] = (MODERN, LEGACY),
    run_handlers: bool = False,
    shrink: bool = True,
    identity: Identity | None = None,
    token: AccessToken | None = None,
) -> SeparationReport:
    """Check every tool of ``server``; raise ``SchemaSeparationError`` listing every problem.

    ``server`` is a ``Server`` class, a compiled ``Catalog`` or anything with
    ``compile(container)`` (an extensions ``Platform``). ``max_examples``
    payloads are generated per tool and protocol era; a failing payload is
    shrunk to a minimal one unless ``shrink=False``. Call it from a plain
    (synchronous) test: it runs its own event loop in a worker thread.

    The calls are anonymous unless ``identity`` or ``token`` signs them in, as
    for ``McpTestClient``: a parameter annotated ``Identity | None`` or
    ``AccessToken | None`` then holds ``None`` (allowed), or the caller's.
    """
    catalog = _catalog_of(server, container)
    report = SeparationReport(server=catalog.name, tools=len(catalog.tools))
    for tool in catalog.tools.values():
        report.problems.extend(schema_problems(tool))
    served, probes = (catalog, {}) if run_handlers else probed(catalog)
    with _portal() as portal:
        for era in protocols:
            era_client = Driver(container, served, era, portal, identity=identity, token=token)
            with driving(era_client) as driver:
                for name, tool in catalog.tools.items():
                    if tool.task_support == "required" and era != MODERN:
                        report.skipped.append(f"{name} ({era}): {_TASKS_ONLY}")
                        continue
                    check = _ToolCheck(tool, driver, probes.get(name), report, era)
                    try:
                        check.run(max_examples, shrink)
                    except Exception as exc:  # noqa: BLE001 - every tool is reported
                        report.problems.extend(_messages(exc))
    if report.problems:
        raise SchemaSeparationError(catalog.name, report.problems)
    return report


__all__ = [
    "INJECTED",
    "SchemaSeparationError",
    "SeparationReport",
    "assert_schema_separation",
    "injected_parameters",
    "schema_problems",
]
