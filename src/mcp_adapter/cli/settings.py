"""What ``serve`` is asked for: its flags, read into :class:`ServeOptions` and checked."""

from __future__ import annotations

import argparse
import os
import secrets
import sys

from mcp.server.request_state import RequestStateSecurity
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.limit_flags import (
    add_limit_flags,
    check_limits,
    limit_flags_given,
    limit_values,
)
from mcp_adapter.cli.options import ServeOptions

KEYS_ENV = "MCP_ADAPTER_REQUEST_STATE_KEYS"


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """``serve``'s flags after its target and ``--container``."""
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000; 0: any)")
    parser.add_argument("--path", default="/mcp", help="HTTP endpoint path (default /mcp)")
    parser.add_argument(
        "--workers", type=int, default=1, help="HTTP worker processes (uvicorn; stateless only)"
    )
    parser.add_argument(
        "--toolsets", metavar="A,B", help="serve only these toolsets (comma-separated)"
    )
    parser.add_argument(
        "--stateful",
        action="store_true",
        help="HTTP sessions (needed for 2025-11-25 elicitation); one worker only",
    )
    parser.add_argument(
        "--json-response", action="store_true", help="answer HTTP POSTs with JSON, not SSE"
    )
    parser.add_argument(
        "--auth",
        metavar="MODULE:ATTR",
        help="a TokenVerifier (or zero-argument factory): require a bearer token",
    )
    parser.add_argument(
        "--scope",
        action="append",
        default=[],
        dest="scopes",
        metavar="SCOPE",
        help="a scope every token must carry (repeatable)",
    )
    parser.add_argument(
        "--anonymous",
        action="store_true",
        help="with --auth: let requests without a token through, with no identity",
    )
    parser.add_argument("--resource-url", help="with --auth: this server's public URL (RFC 9728)")
    parser.add_argument("--issuer-url", help="with --auth: the authorization server's URL")
    parser.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="HOST:PORT",
        help="accepted Host headers (DNS-rebinding protection; repeatable)",
    )
    parser.add_argument(
        "--max-body-size",
        type=int,
        metavar="BYTES",
        help="refuse HTTP request bodies larger than this with 413 "
        f"(default {DEFAULT_MAX_REQUEST_BODY_SIZE}, 4 MiB)",
    )
    parser.add_argument(
        "--request-state-key",
        action="append",
        default=[],
        dest="request_state_keys",
        metavar="KEY",
        help="a secret (32+ bytes) sealing 2026-07-28 requestState, shared by every worker "
        f"and replica; repeatable, newest first, to rotate keys (default: ${KEYS_ENV}, "
        "comma-separated, else a key made at start for this server's processes only)",
    )
    add_limit_flags(parser)


def add_container_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--container",
        metavar="MODULE:ATTR",
        help="a Container instance or zero-argument factory (default: an empty Container)",
    )


def parse_toolsets(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names:
        raise CliError("--toolsets names no toolset", "for example: --toolsets repos,issues")
    return names


def options_of(args: argparse.Namespace) -> ServeOptions:
    options = ServeOptions(
        target=args.target,
        container=args.container,
        http=args.http,
        host=args.host,
        port=args.port,
        path="/" + args.path.strip("/"),
        workers=args.workers,
        toolsets=parse_toolsets(args.toolsets),
        stateful=args.stateful,
        json_response=args.json_response,
        auth=args.auth,
        scopes=tuple(args.scopes),
        anonymous=args.anonymous,
        resource_url=args.resource_url,
        issuer_url=args.issuer_url,
        allowed_hosts=tuple(args.allowed_hosts) if args.allowed_hosts else None,
        max_body_size=args.max_body_size,
        request_state_keys=_request_state_keys(args.request_state_keys, args.workers),
        **limit_values(args),
        sys_path=tuple(sys.path),
    )
    _check(options)
    return options


def _request_state_keys(given: list[str], workers: int) -> tuple[str, ...]:
    """The key ring: the flags, else the environment; several workers share a key made now."""
    keys = tuple(given) or tuple(
        key.strip() for key in os.environ.get(KEYS_ENV, "").split(",") if key.strip()
    )
    if not keys and workers > 1:
        keys = (secrets.token_hex(32),)
    request_state_security(keys)  # refuse a bad key before anything starts
    return keys


def request_state_security(keys: tuple[str, ...]) -> RequestStateSecurity | None:
    """The sealing policy for ``keys``; ``None`` (a key of this process only) without keys."""
    if not keys:
        return None
    try:
        return RequestStateSecurity(keys=list(keys))
    except ValueError as exc:
        message = str(exc).split(". Generate")[0]
        raise CliError(
            f"--request-state-key: {message}",
            'make one with: python -c "import secrets; print(secrets.token_hex(32))"',
        ) from None


def _check(options: ServeOptions) -> None:
    http_only = {
        "--workers": options.workers != 1,
        "--stateful": options.stateful,
        "--json-response": options.json_response,
        "--auth": options.auth is not None,
        "--allowed-host": options.allowed_hosts is not None,
        "--max-body-size": options.max_body_size is not None,
        **limit_flags_given(options),
    }
    if not options.http:
        used = [flag for flag, given in http_only.items() if given]
        if used:
            raise CliError(f"{', '.join(used)} only apply to HTTP", "add --http")
    if options.workers < 1:
        raise CliError("--workers must be at least 1")
    if options.workers > 1 and options.stateful:
        raise CliError(
            "--stateful sessions live in one process and cannot be spread over --workers",
            "drop --stateful (stateless HTTP serves both protocol eras) or use one worker",
        )
    if options.auth is None and (options.scopes or options.anonymous or options.resource_url):
        raise CliError("--scope, --anonymous and --resource-url need --auth MODULE:ATTR")
    if not 0 <= options.port <= 65535:
        raise CliError(f"--port {options.port} is not a TCP port")
    if options.max_body_size is not None and options.max_body_size < 1:
        raise CliError(f"--max-body-size {options.max_body_size} is not a positive size in bytes")
    check_limits(options)
