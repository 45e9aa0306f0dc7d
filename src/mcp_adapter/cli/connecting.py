"""Reaching a server for ``call`` and ``inspect``: a URL over streamable HTTP (with a
bearer token), a target compiled in this process, or a target served over stdio by
``mcp-adapter serve`` in a subprocess. Each way gives the SDK's own ``mcp.Client``."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import httpx2
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED

from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.loading import load_container, load_servable
from mcp_adapter.cli.serve import compile_catalog
from mcp_adapter.cli.settings import ALL_SETTINGS, CONTAINER_HELP
from mcp_adapter.cli.sources import Setting, resolve
from mcp_adapter.cli.wording import series
from mcp_adapter.compiled.lifespan import StartupError
from mcp_adapter.serving.lifespan import serve_lifespan
from mcp_adapter.serving.lowlevel import build_sdk_server

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
DEFAULT_TIMEOUT = 60.0
SERVER_LINES = 20
"""The last lines of a stdio server's stderr shown when it stops before answering."""
TOKEN = Setting(
    "token",
    "--token",
    "text",
    "with a URL: send Authorization: Bearer TOKEN",
    "TOKEN",
    secret=True,
    credential=True,
)
"""The bearer token: from ``--token``, ``--token-file PATH`` or their variables, by the
rule of ``serve``'s settings (``cli/sources.py``)."""


@dataclass(frozen=True, slots=True)
class Reach:
    """Where ``call`` and ``inspect`` find the server, and how they talk to it."""

    target: str
    """``http(s)://...`` or ``MODULE:ATTR`` / ``path/to/file.py:ATTR``."""
    container: str | None = None
    stdio: bool = False
    token: str | None = None
    protocol: str | None = None
    """``2026-07-28`` or ``2025-11-25``; ``None`` negotiates (2026-07-28 with this adapter)."""
    timeout: float = DEFAULT_TIMEOUT

    @property
    def is_url(self) -> bool:
        return is_url(self.target)

    @property
    def mode(self) -> str:
        """The ``mcp.Client`` mode for :attr:`protocol`: ``legacy`` for 2025-11-25, else
        ``auto``, which discovers the server (its name and version) before adopting
        2026-07-28; :func:`connected` then checks the era agreed."""
        return "legacy" if self.protocol == LEGACY else "auto"

    def describe(self) -> str:
        """``http://...``, or the target and where it runs (``app:App, over stdio``)."""
        if self.is_url:
            return self.target
        return f"{self.target}, {'over stdio' if self.stdio else 'in process'}"


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def add_reach_arguments(parser: argparse.ArgumentParser) -> None:
    """The target and the flags that say how to reach it (``call`` and ``inspect``)."""
    parser.add_argument(
        "target",
        metavar="URL_OR_TARGET",
        help="a server's URL (http://127.0.0.1:8000/mcp), or MODULE:ATTR / path/to/app.py:ATTR "
        "to run it here (in process, or over stdio with --stdio)",
    )
    parser.add_argument(
        "--container", metavar="MODULE:ATTR", help=f"with a target: {CONTAINER_HELP}"
    )
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="with a target: serve it with `mcp-adapter serve` in a subprocess and talk over stdio",
    )
    TOKEN.add_to(parser)
    parser.add_argument(
        "--protocol",
        choices=(MODERN, LEGACY),
        help=f"the protocol era (default: negotiated, {MODERN} with this adapter)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        default=DEFAULT_TIMEOUT,
        help=f"give up after this long (default {DEFAULT_TIMEOUT:g})",
    )


def reach_of(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> Reach:
    """The reach the flags (and the token's variables) describe; a flag that does not apply
    to the target is refused."""
    given = resolve((TOKEN,), args, environ)
    reach = Reach(
        target=args.target,
        container=args.container,
        stdio=args.stdio,
        token=given.values.get("token"),
        protocol=args.protocol,
        timeout=args.timeout,
    )
    if reach.is_url:
        local = [
            flag for flag, on in (("--container", reach.container), ("--stdio", reach.stdio)) if on
        ]
        if local:
            raise CliError(
                f"{series(local)} only {'applies' if len(local) == 1 else 'apply'} to a target "
                f"(MODULE:ATTR), not to a URL",
                "the server at a URL is already running with its own container",
            )
    elif reach.token is not None:
        raise CliError(
            f"{given.label('token')} only applies to a URL (streamable HTTP)",
            "a target runs here, in process or over stdio, where no bearer token is sent",
        )
    if not reach.timeout > 0:
        raise CliError(f"--timeout {reach.timeout:g} is not positive")
    return reach


@asynccontextmanager
async def connected(reach: Reach) -> AsyncIterator[Client]:
    """An ``mcp.Client`` connected to the server ``reach`` names, inside ``reach.timeout``.

    Failures to reach it are :class:`CliError` s (status 1): refused connection,
    an HTTP error status (the SDK reports it as a protocol error; the status is
    what the user needs), a stdio server that stopped (with the end of its stderr).
    """
    refused: list[httpx2.Response] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            with anyio.fail_after(reach.timeout):
                async with AsyncExitStack() as stack:
                    client = await stack.enter_async_context(_client(reach, errlog, refused))
                    if reach.protocol is not None and client.protocol_version != reach.protocol:
                        raise CliError(
                            f"{reach.describe()} speaks protocol {client.protocol_version}, "
                            f"not {reach.protocol}",
                            "leave out --protocol to take the era the server speaks",
                            status=1,
                        )
                    yield client
        except TimeoutError as exc:
            raise CliError(
                f"{reach.describe()} did not answer within {reach.timeout:g} s",
                "--timeout SECONDS waits longer",
                status=1,
            ) from exc
        except Exception as exc:
            inner = innermost(exc)
            if refused and isinstance(inner, MCPError | httpx2.HTTPError):
                raise _http_refused(reach, refused[-1]) from exc
            if reach.stdio and isinstance(inner, MCPError) and inner.code == CONNECTION_CLOSED:
                raise _unreachable(reach, inner, errlog) from exc
            if inner is exc and isinstance(exc, CliError | MCPError | StartupError):
                raise
            if isinstance(inner, CliError | MCPError | StartupError):
                raise inner from exc  # out of the task group that wrapped it
            raise _unreachable(reach, inner, errlog) from exc


@asynccontextmanager
async def _client(
    reach: Reach, errlog: TextIO, refused: list[httpx2.Response]
) -> AsyncIterator[Client]:
    if reach.is_url:

        async def note(response: httpx2.Response) -> None:
            # 400 carries the protocol's own error (unknown tool, bad params): not a refusal
            if response.status_code > 400:
                refused.append(response)

        headers = {} if reach.token is None else {"Authorization": f"Bearer {reach.token}"}
        async with httpx2.AsyncClient(
            headers=headers, timeout=reach.timeout, event_hooks={"response": [note]}
        ) as http:
            transport = streamable_http_client(reach.target, http_client=http)
            async with Client(transport, mode=reach.mode) as client:
                yield client
        return
    if reach.stdio:
        transport = stdio_client(_serve_command(reach), errlog=errlog)
        async with Client(transport, mode=reach.mode) as client:
            yield client
        return
    container = load_container(reach.container)
    catalog = compile_catalog(load_servable(reach.target), container, reach.target)
    async with (
        serve_lifespan(catalog, container),
        Client(build_sdk_server(catalog, container), mode=reach.mode) as client,
    ):
        yield client


def _http_refused(reach: Reach, response: httpx2.Response) -> CliError:
    status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    if response.status_code == 401:
        hint = (
            f"pass a token in {TOKEN.env} or {TOKEN.file_flag} PATH (sent as "
            "Authorization: Bearer TOKEN)"
            if reach.token is None
            else "the token was refused: check it (and, on 403, its scopes)"
        )
    elif response.status_code == 403:
        hint = "the token lacks a scope the server requires, or the Host is not allowed"
    elif response.status_code == 404:
        hint = "check the URL's path (mcp-adapter serve answers at /mcp unless --path)"
    else:
        hint = ""
    return CliError(f"{reach.target} answered {status}", hint, status=1)


def _serve_command(reach: Reach) -> StdioServerParameters:
    """``mcp-adapter serve TARGET`` in this interpreter, from this folder, with this
    environment but ``serve``'s own ``MCP_ADAPTER_*`` settings (``MCP_ADAPTER_PORT``
    set for HTTP servers must not reach a stdio one); ``-P``: the folder is put on
    ``sys.path`` by ``serve`` itself, after the packages, as the installed command
    does (a project's own ``schemas.py`` then cannot hide this distribution's)."""
    args = ["-P", "-m", "mcp_adapter.cli", "serve", reach.target]
    if reach.container is not None:
        args += ["--container", reach.container]
    # it serves what `call` names only
    settings = {name for setting in ALL_SETTINGS for name in setting.variables}
    env = {key: value for key, value in os.environ.items() if key not in settings}
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=os.getcwd())


def _unreachable(reach: Reach, exc: BaseException, errlog: TextIO) -> CliError:
    reason = _reason(exc)
    if reach.stdio:
        errlog.seek(0)
        said = [line.rstrip() for line in errlog.read().splitlines() if line.strip()]
        return CliError(
            f"the stdio server for {reach.target} stopped: {reason}",
            f"the lines above are its own stderr; `mcp-adapter check {reach.target}` checks it "
            "without serving it",
            status=1,
            details=tuple(said[-SERVER_LINES:]),
        )
    if reach.is_url:
        return CliError(
            f"cannot reach {reach.target}: {reason}",
            "is the server running? `mcp-adapter serve TARGET --http` starts one",
            status=1,
        )
    return CliError(f"{reach.describe()} failed: {reason}", status=1, traceback=True)


def innermost(exc: BaseException) -> BaseException:
    """``exc``, or the one exception a task group's ``ExceptionGroup`` wraps (at any depth)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _reason(exc: BaseException) -> str:
    """What went wrong, in one line."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(innermost(inner)) for inner in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, OSError | httpx2.HTTPError) else f"{type(exc).__name__}: {text}"


def plain(value: Any) -> Any:
    """A protocol model as the JSON a client receives (aliases, no unset fields)."""
    return value.model_dump(by_alias=True, exclude_none=True, mode="json")
