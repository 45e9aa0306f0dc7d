"""Servers the serving tests start with ``mcp-adapter serve`` (or in process)."""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import anyio
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter import (
    Catalog,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    PluginManifest,
    Server,
    Tool,
    ToolAnnotations,
    tool,
)
from mcp_adapter.compile.server import compile_server
from schemas import Schema

AUDIT_FILE_ENV = "MCP_ADAPTER_TEST_AUDIT_FILE"
READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)

_ids = itertools.count(1)


class ProcessCounter:
    """A singleton: one per process, shared by every request."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.calls = 0


class AuditLog:
    """A scoped service whose finalizer appends ``closed <n>`` to the audit file."""

    def __init__(self) -> None:
        self.number = next(_ids)
        self.lines = [f"opened {self.number}"]

    def note(self, text: str) -> None:
        self.lines.append(text)


def audit_log() -> Iterator[AuditLog]:
    log = AuditLog()
    try:
        yield log
    finally:
        log.lines.append(f"closed {log.number}")
        path = os.environ.get(AUDIT_FILE_ENV)
        if path:
            with Path(path).open("a", encoding="utf-8") as file:
                file.write(" | ".join(log.lines) + "\n")


class RecordInput(Schema):
    text: str


class RecordTool(Tool[RecordInput]):
    """Note ``text`` in this request's audit log; report which log and which process."""

    name = "record"
    annotations = READ_ONLY

    def __init__(self, counter: ProcessCounter) -> None:
        self.counter = counter

    async def handle(self, payload: RecordInput, log: AuditLog, request: McpRequest) -> McpResponse:
        self.counter.calls += 1
        log.note(f"{payload.text} via {request.transport}")
        return McpResponse.structured(
            {
                "log": log.number,
                "pid": self.counter.pid,
                "calls": self.counter.calls,
                "transport": request.transport,
            }
        )


class WhoAmITool(Tool):
    """The caller's identity as the transport established it."""

    name = "whoami"
    annotations = READ_ONLY

    async def handle(self, request: McpRequest) -> McpResponse:
        identity = request.identity
        return McpResponse.structured(
            {
                "subject": identity.subject if identity else None,
                "scopes": list(identity.scopes) if identity else [],
                "scheme": (request.authentication or {}).get("scheme"),
            }
        )


class AuditServer(Server):
    name = "audit"
    tools = (RecordTool, WhoAmITool)


class ReadStdinTool(Tool):
    """What a handler reading the process's fd 0 gets: over stdio, EOF rather than the wire."""

    name = "read-stdin"
    annotations = READ_ONLY

    def handle(self) -> McpResponse:  # sync: a worker thread, so a blocked read blocks nothing else
        return McpResponse.structured({"read": os.read(0, 4096).decode(errors="replace")})


class StdinServer(Server):
    name = "stdin"
    tools = (ReadStdinTool,)


def build_container() -> Container:
    container = Container()
    container.singleton(ProcessCounter)
    container.scoped(AuditLog, audit_log)
    return container


class Token:
    """Tokens the test verifier knows: ``reader`` (scope read), ``admin`` (read, admin)."""

    SCOPES = MappingProxyType({"reader-token": ("read",), "admin-token": ("read", "admin")})


class StaticVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        scopes = Token.SCOPES.get(token)
        if scopes is None:
            return None
        return AccessToken(
            token=token, client_id="tests", subject=token.removesuffix("-token"), scopes=[*scopes]
        )


def _tool_in(toolset: str, name: str) -> type[Tool]:
    class Named(Tool):
        annotations = READ_ONLY

        async def handle(self) -> McpResponse:
            return McpResponse.text(f"{name} from {toolset}")

    Named.name = name
    Named.__qualname__ = Named.__name__ = f"{name.title().replace('-', '')}Tool"
    return Named


def toolset_catalog() -> Catalog:
    """Tools in three toolsets (as extensions would contribute them), for selection tests."""
    layout = {"repos": ("list-repos", "get-repo"), "issues": ("list-issues",), "users": ("me",)}
    tools = {"list-repos": "repos", "get-repo": "repos", "list-issues": "issues", "me": "users"}

    class Toolsets(Server):
        name = "toolsets"

    Toolsets.tools = tuple(
        _tool_in(toolset, name) for toolset, names in layout.items() for name in names
    )
    catalog = compile_server(Toolsets, Container())
    grouped = {
        name: dataclasses.replace(tool, toolset=tools[name]) for name, tool in catalog.tools.items()
    }
    return dataclasses.replace(catalog, tools=MappingProxyType(grouped))


class Notes(McpExtension):
    """An extension contributing tools in two toolsets."""

    def manifest(self) -> PluginManifest:
        return PluginManifest(name="notes", version="1.0.0")

    @tool(title="Add a note")
    async def add_note(self, text: str, counter: ProcessCounter) -> str:
        """Keep a note; the counter comes from the container, not the payload."""
        counter.calls += 1
        return f"noted: {text} (#{counter.calls})"

    @tool(toolset="notes-admin")
    def purge_notes(self) -> str:
        """Forget every note."""
        return "purged"


def platform() -> Platform:
    """A ``Platform`` (servable through its ``compile(container)``) made by a factory."""
    return Platform([Notes()], name="notes-platform")


class SlowInput(Schema):
    seconds: float


class SlowTool(Tool[SlowInput]):
    """Sleep ``seconds``, then answer; first prints ``slow call started`` (tests wait for it)."""

    name = "slow"
    annotations = READ_ONLY

    async def handle(self, payload: SlowInput) -> McpResponse:
        print("slow call started", flush=True)
        await anyio.sleep(payload.seconds)
        return McpResponse.text(f"slept {payload.seconds}")


class SlowServer(Server):
    name = "slow"
    tools = (SlowTool,)
