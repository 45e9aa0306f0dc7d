"""Servers for the trust-boundary tests run by ``mcp-adapter serve`` subprocesses:
who the peer is (forwarded headers), what a tool's child process inherits, who the
caller is over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from container import Container
from mcp_adapter import Identity, McpRequest, McpResponse, Server, Tool
from mcp_adapter.layers import RateLimit


class PeerTool(Tool):
    """The peer address the server counts this call under, and the scheme it saw."""

    name = "peer"

    async def handle(self, request: McpRequest) -> McpResponse:
        http = request.http_request
        client = getattr(http, "client", None)
        return McpResponse.structured(
            {
                "host": client.host if client is not None else None,
                "scheme": http.url.scheme if http is not None else None,
            }
        )


class LimitedTool(Tool):
    """One call per client per hour."""

    name = "limited"
    middleware = (RateLimit(1, 3600, per="client", namespace="trust-tests", stage="call"),)

    async def handle(self) -> McpResponse:
        return McpResponse.text("ok")


class PeerServer(Server):
    name = "peer"
    tools = (PeerTool, LimitedTool)


NEEDLE = "TRUST_TEST_NEEDLE"
"""The variable a test puts its secret in too, to tell where else it shows up."""


def _holding(environ: dict[str, str], needle: str) -> list[str]:
    return sorted(key for key, value in environ.items() if needle in value and key != NEEDLE)


class ChildEnvTool(Tool):
    """What this process and a child it spawns see of ``serve``'s variables: the
    ``MCP_ADAPTER_*`` names, and the variables holding the test's secret."""

    name = "child-env"

    def handle(self) -> McpResponse:
        printed = subprocess.run(
            [sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        child: dict[str, str] = json.loads(printed)
        needle = os.environ.get(NEEDLE) or "\0"
        return McpResponse.structured(
            {
                "pid": os.getpid(),
                "own": sorted(key for key in os.environ if key.startswith("MCP_ADAPTER_")),
                "child": sorted(key for key in child if key.startswith("MCP_ADAPTER_")),
                "own_holding": _holding(dict(os.environ), needle),
                "child_holding": _holding(child, needle),
            }
        )


class EnvServer(Server):
    name = "env"
    tools = (ChildEnvTool,)


class Workspace:
    """A per-caller service: the caller's own workspace, built from its identity."""

    def __init__(self, identity: Identity) -> None:
        self.owner = identity.subject


class WorkspaceTool(Tool):
    """Whose workspace this call reaches, and the caller's identity."""

    name = "workspace"

    async def handle(self, workspace: Workspace, request: McpRequest) -> McpResponse:
        identity = request.identity
        return McpResponse.structured(
            {
                "owner": workspace.owner,
                "subject": identity.subject if identity else None,
                "client_id": identity.client_id if identity else None,
                "scopes": list(identity.scopes) if identity else [],
                "scheme": (request.authentication or {}).get("scheme"),
            }
        )


class WhoTool(Tool):
    """The caller as the request carries it (anonymous: nulls)."""

    name = "who"

    async def handle(self, request: McpRequest) -> McpResponse:
        identity = request.identity
        return McpResponse.structured(
            {
                "subject": identity.subject if identity else None,
                "scheme": (request.authentication or {}).get("scheme"),
            }
        )


class WorkspaceServer(Server):
    name = "workspace"
    tools = (WorkspaceTool, WhoTool)


def workspace_container() -> Container:
    container = Container()
    container.scoped(Workspace)
    return container


def deploy_bot() -> Identity:
    """An identity provider named by a dotted path: a fixed service account."""
    return Identity(subject="deploy-bot", client_id="ci", scopes=("deploy",))


def not_an_identity() -> str:
    return "nobody"
