"""What ``serve`` is asked for: its settings, from flags or ``MCP_ADAPTER_*`` variables,
read into :class:`ServeOptions` and checked (the rule is in ``cli/sources.py``)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import secrets
import sys
from collections.abc import Mapping, MutableMapping

from mcp.server.request_state import RequestStateSecurity
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.limit_flags import LIMIT_SETTINGS, check_limits, limits_given
from mcp_adapter.cli.options import ServeOptions
from mcp_adapter.cli.sources import Resolved, Setting, resolve
from mcp_adapter.cli.wording import series, verb

CONTAINER_HELP = "a Container instance or zero-argument factory (default: an empty Container)"

SETTINGS = (
    Setting("container", "--container", "text", CONTAINER_HELP, "MODULE:ATTR"),
    Setting("http", "--http", "switch", "serve streamable HTTP, not stdio"),
    Setting(
        "identity",
        "--identity",
        "text",
        "stdio: the caller of every request: os-user (the user running the server) or "
        "an Identity, or a zero-argument function returning one (default: anonymous)",
        "os-user|MODULE:ATTR",
    ),
    Setting("host", "--host", "text", "HTTP host (default 127.0.0.1)"),
    Setting("port", "--port", "int", "HTTP port (default 8000; 0: any)"),
    Setting("path", "--path", "text", "HTTP endpoint path (default /mcp)"),
    Setting("workers", "--workers", "int", "HTTP worker processes (uvicorn; stateless only)"),
    Setting(
        "reload",
        "--reload",
        "switch",
        "restart when a .py file under the current folder changes (development; HTTP, one process)",
    ),
    Setting("toolsets", "--toolsets", "text", "serve only these toolsets (comma-separated)", "A,B"),
    Setting(
        "stateful",
        "--stateful",
        "switch",
        "HTTP sessions (needed for 2025-11-25 elicitation); one worker only",
    ),
    Setting("json_response", "--json-response", "switch", "answer HTTP POSTs with JSON, not SSE"),
    Setting(
        "auth",
        "--auth",
        "text",
        "a TokenVerifier (or zero-argument factory): require a bearer token",
        "MODULE:ATTR",
    ),
    Setting("scopes", "--scope", "list", "a scope every token must carry (repeatable)", "SCOPE"),
    Setting(
        "anonymous",
        "--anonymous",
        "switch",
        "with --auth: let requests without a token through, with no identity",
    ),
    Setting(
        "resource_url", "--resource-url", "text", "with --auth: this server's public URL (RFC 9728)"
    ),
    Setting("issuer_url", "--issuer-url", "text", "with --auth: the authorization server's URL"),
    Setting(
        "allowed_hosts",
        "--allowed-host",
        "list",
        "accepted Host headers (DNS-rebinding protection; repeatable)",
        "HOST:PORT",
    ),
    Setting(
        "forwarded_allow_ips",
        "--forwarded-allow-ips",
        "text",
        "trust X-Forwarded-For/-Proto from these proxy addresses or networks only "
        "(comma-separated; default: from none, loopback included)",
        "IPS",
    ),
    Setting(
        "max_body_size",
        "--max-body-size",
        "int",
        "refuse HTTP request bodies larger than this with 413 "
        f"(default {DEFAULT_MAX_REQUEST_BODY_SIZE}, 4 MiB)",
        "BYTES",
    ),
    Setting(
        "request_state_keys",
        "--request-state-key",
        "list",
        "a secret (32+ bytes) sealing 2026-07-28 requestState, shared by every worker "
        "and replica; repeatable, newest first, to rotate keys (default: a key made at "
        "start for this server's processes only)",
        "KEY",
        secret=True,
        credential=True,
    ),
    Setting(
        "redis_url",
        "--redis",
        "text",
        "the Redis that replicas share (change notifications, resumable streams' events, "
        "tasks, state handles); redis+sentinel://SENTINEL:PORT,.../SERVICE/DB follows the "
        "primary Redis Sentinel names; default: none, everything stays in this process",
        "redis://HOST:PORT/DB",
        secret=True,
    ),
    Setting(
        "redis_prefix",
        "--redis-prefix",
        "text",
        "with --redis: the start of every key, before the server's name (default mcp_adapter)",
        "PREFIX",
    ),
    Setting(
        "redis_wait_replicas",
        "--redis-wait-replicas",
        "int",
        "with --redis: an answered input round is taken only once this many Redis replicas "
        "hold it (WAIT), else refused, so a failover cannot lose it (default 0: the "
        "primary's word is enough)",
        "N",
    ),
    Setting(
        "enqueue_only",
        "--enqueue-only",
        "switch",
        "with --redis: enqueue tasks but run none here; `mcp-adapter worker` processes "
        "on the same Redis run them",
    ),
)
"""Every ``serve`` setting but the limits (``LIMIT_SETTINGS``), in ``--help`` order."""
ALL_SETTINGS = (*SETTINGS, *LIMIT_SETTINGS)
KEYS_ENV = next(s.env for s in SETTINGS if s.name == "request_state_keys")


def add_serve_arguments(
    parser: argparse.ArgumentParser, fixed: frozenset[str] = frozenset()
) -> None:
    """``serve``'s flags after its target: one per setting but the ``fixed`` ones (``dev``
    fixes ``http`` and ``reload``: its parser sets them)."""
    for setting in SETTINGS:
        if setting.name not in fixed:
            setting.add_to(parser)
    group = parser.add_argument_group(
        "limits (HTTP, unless a flag says stdio too; docs/serving.md)"
    )
    for setting in LIMIT_SETTINGS:
        setting.add_to(group)


def add_container_option(parser: argparse.ArgumentParser) -> None:
    """``--container`` for ``list`` and ``check`` (flag only: the variables are ``serve``'s)."""
    parser.add_argument("--container", metavar="MODULE:ATTR", help=CONTAINER_HELP)


def parse_toolsets(value: str | None, label: str = "--toolsets") -> tuple[str, ...] | None:
    if value is None:
        return None
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names:
        raise CliError(f"{label} names no toolset", "for example: --toolsets repos,issues")
    return names


def options_of(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> ServeOptions:
    """The options ``serve`` was given: each flag, else its variable in ``environ``."""
    given = resolve(ALL_SETTINGS, args, environ)
    values = dict(given.values)
    for name in ("scopes", "allowed_hosts"):
        if name in values:
            values[name] = tuple(values[name])
    if "path" in values:
        values["path"] = "/" + values["path"].strip("/")
    if "forwarded_allow_ips" in values:
        values["forwarded_allow_ips"] = _proxies(
            values["forwarded_allow_ips"], given.label("forwarded_allow_ips")
        )
    if "toolsets" in values:
        values["toolsets"] = parse_toolsets(values["toolsets"], given.label("toolsets"))
    keys = tuple(values.pop("request_state_keys", ()))
    options = ServeOptions(
        target=args.target,
        **values,
        sys_path=tuple(sys.path),
        debug=bool(getattr(args, "debug", False)),
    )
    _check(options, given)
    ring = _request_state_keys(
        keys, options.workers, given.label("request_state_keys"), reload=options.reload
    )
    return dataclasses.replace(options, request_state_keys=ring)


def forget_secrets(environ: MutableMapping[str, str] = os.environ) -> None:
    """Take the secret settings' variables (``MCP_ADAPTER_REQUEST_STATE_KEYS``, and the
    ``_FILE`` one naming a file that holds them) out of ``environ`` once read, so no child
    process a tool spawns inherits them."""
    for setting in ALL_SETTINGS:
        if setting.secret:
            for name in setting.variables:
                environ.pop(name, None)


def _proxies(value: str, label: str) -> tuple[str, ...]:
    """The trusted proxies ``value`` lists (comma-separated), each checked."""
    from mcp_adapter.serving.uvicorn_config import trusted_proxies

    try:
        return trusted_proxies([item for item in value.split(",") if item.strip()])
    except ValueError as exc:
        raise CliError(
            f"{label}: {exc}", "for example: --forwarded-allow-ips 10.0.0.5,10.1.0.0/16"
        ) from None


def _request_state_keys(
    keys: tuple[str, ...], workers: int, label: str, *, reload: bool = False
) -> tuple[str, ...]:
    """The key ring given; several workers, or the processes ``--reload`` starts one after
    another, share a key made now when none is given."""
    if not keys and (workers > 1 or reload):
        keys = (secrets.token_hex(32),)
    request_state_security(keys, label)  # refuse a bad key before anything starts
    return keys


def request_state_security(
    keys: tuple[str, ...], label: str = "--request-state-key"
) -> RequestStateSecurity | None:
    """The sealing policy for ``keys``; ``None`` (a key of this process only) without keys."""
    if not keys:
        return None
    try:
        return RequestStateSecurity(keys=list(keys))
    except ValueError as exc:
        message = str(exc).split(". Generate")[0]
        raise CliError(
            f"{label}: {message}",
            'make one with: python -c "import secrets; print(secrets.token_hex(32))"',
        ) from None


def _check(options: ServeOptions, given: Resolved) -> None:
    http_only = {
        **{name: name in given.values for name in ("host", "port", "path")},
        "workers": options.workers != 1,
        "reload": options.reload,
        "stateful": options.stateful,
        "json_response": options.json_response,
        "auth": options.auth is not None,
        "allowed_hosts": options.allowed_hosts is not None,
        "forwarded_allow_ips": options.forwarded_allow_ips is not None,
        "max_body_size": options.max_body_size is not None,
        **dict.fromkeys(limits_given(options), True),
    }
    if options.http and options.identity is not None:
        raise CliError(
            f"{given.label('identity')} only applies to stdio",
            "over HTTP the caller is the bearer token's: use --auth",
        )
    if not options.http:
        used = [given.label(name) for name, set_ in http_only.items() if set_]
        if used:
            applies = verb(len(used), "applies", "apply")
            raise CliError(f"{series(used)} only {applies} to HTTP", "add --http")
    workers = given.label("workers")
    if options.workers < 1:
        raise CliError(f"{workers} must be at least 1")
    if options.workers > 1 and options.reload:
        raise CliError(
            f"{given.label('reload')} restarts one process and cannot watch {workers}",
            "drop --workers while developing, or --reload in production",
        )
    if options.workers > 1 and options.stateful:
        raise CliError(
            f"{given.label('stateful')} sessions live in one process and cannot be spread "
            f"over {workers}",
            "drop --stateful (stateless HTTP serves both protocol eras) or use one worker",
        )
    needs_auth = [
        given.label(name)
        for name, set_ in (
            ("scopes", bool(options.scopes)),
            ("anonymous", options.anonymous),
            ("resource_url", options.resource_url is not None),
        )
        if set_
    ]
    if options.auth is None and needs_auth:
        needs = verb(len(needs_auth), "needs", "need")
        raise CliError(f"{series(needs_auth)} {needs} --auth MODULE:ATTR")
    for name in ("redis_prefix", "redis_wait_replicas"):
        if getattr(options, name) is not None and options.redis_url is None:
            raise CliError(f"{given.label(name)} needs --redis redis://HOST:PORT/DB")
    if options.redis_wait_replicas is not None and options.redis_wait_replicas < 0:
        wait = given.said("redis_wait_replicas", options.redis_wait_replicas)
        raise CliError(f"{wait} is not a number of replicas (0 or more)")
    if options.redis_url is not None:
        from mcp_adapter.stores.shared import check_url

        try:
            check_url(options.redis_url)
        except ValueError as exc:
            raise CliError(
                f"{given.label('redis_url')}: {exc}", "for example: redis://127.0.0.1:6379/0"
            ) from None
    if not 0 <= options.port <= 65535:
        raise CliError(f"{given.said('port', options.port)} is not a TCP port")
    if options.max_body_size is not None and options.max_body_size < 1:
        size = given.said("max_body_size", options.max_body_size)
        raise CliError(f"{size} is not a positive size in bytes")
    check_limits(options, given)
