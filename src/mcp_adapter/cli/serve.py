"""``mcp-adapter serve``: stdio by default, streamable HTTP with ``--http``."""

from __future__ import annotations

import argparse
import dataclasses
import errno
import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from container import Container
from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.limit_flags import limit_kwargs
from mcp_adapter.cli.loading import (
    load_container,
    load_identity,
    load_instance,
    load_servable,
)
from mcp_adapter.cli.options import ENV_VAR, ServeOptions
from mcp_adapter.cli.parsing import Command
from mcp_adapter.cli.settings import (
    add_serve_arguments,
    forget_secrets,
    options_of,
    request_state_security,
)
from mcp_adapter.cli.task_settings import deployed_tasks
from mcp_adapter.cli.wording import count
from mcp_adapter.compiled.catalog import Catalog, UnknownToolsetError
from mcp_adapter.compiled.lifespan import StartupError
from mcp_adapter.distribution import needs_extra
from mcp_adapter.errors import CompileError
from mcp_adapter.serving import (
    BearerAuth,
    HttpLimits,
    NotServableError,
    catalog_of,
    http_app,
    run_stdio,
)
from mcp_adapter.serving.lifespan import serve_lifespan
from mcp_adapter.serving.signals import HeldSignals
from mcp_adapter.serving.stdio import refuse_http_only

if TYPE_CHECKING:
    from mcp_adapter.stores import SharedRedis

WORKER_APP = "mcp_adapter.cli.asgi:create_app"
WORKER_HEALTHCHECK_TIMEOUT = 30
"""Seconds a ``--workers`` process may take to answer uvicorn's supervisor before it is
killed and started again. uvicorn's default (5) counts from the spawn, imports included:
on a loaded machine no worker ever answered in time and serve started them forever."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``serve``."""
    parser.add_argument("target", metavar="MODULE:ATTR", help="the server to serve")
    add_serve_arguments(parser)


def compile_catalog(target: Any, container: Container, spec: str) -> Catalog:
    """Compile, turning every compile problem into one CLI error with the details."""
    try:
        return catalog_of(target, container)
    except CompileError as exc:
        raise compile_failed(exc, spec) from exc
    except NotServableError as exc:
        raise CliError(str(exc)) from exc


def compile_failed(exc: CompileError, spec: str) -> CliError:
    return CliError(
        f"cannot compile {spec}: {count(len(exc.problems), 'problem')}",
        f"run `mcp-adapter check {spec}` after fixing them",
        details=tuple(problem.render() for problem in exc.problems),
    )


def select(catalog: Catalog, toolsets: tuple[str, ...] | None) -> Catalog:
    if toolsets is None:
        return catalog
    try:
        return catalog.select(toolsets)
    except UnknownToolsetError as exc:
        raise CliError(str(exc), "--toolsets takes names the server's extensions declare") from exc


def load_catalog(options: ServeOptions) -> tuple[Catalog, Container]:
    """The container ``options`` name and the catalog compiled against it (CLI errors)."""
    container = load_container(options.container)
    catalog = select(
        compile_catalog(load_servable(options.target), container, options.target),
        options.toolsets,
    )
    deployed = deployed_tasks(
        catalog,
        options.redis_url,
        options.redis_prefix,
        worker=not options.enqueue_only,
        processes=options.workers if options.http else 1,
    )
    return deployed, container


def build_app(options: ServeOptions) -> Starlette:
    """The HTTP app ``options`` describe, running its own start-up and shutdown in its
    lifespan (what every ``--workers`` process builds)."""
    catalog, container = load_catalog(options)
    return app_of(options, catalog, container, run_lifespan=True)


def app_of(
    options: ServeOptions, catalog: Catalog, container: Container, *, run_lifespan: bool
) -> Starlette:
    """``http_app`` for ``options``; with ``run_lifespan`` it also closes the container."""
    verifier = None
    if options.auth is not None:
        verifier = load_instance(options.auth, "token verifier", "verify_token")
    try:
        return http_app(
            catalog,
            container,
            path=options.path,
            stateless=not options.stateful,
            json_response=options.json_response,
            auth=None
            if verifier is None
            else BearerAuth(
                verifier,
                required_scopes=options.scopes,
                anonymous=options.anonymous,
                resource_server_url=options.resource_url,
                issuer_url=options.issuer_url,
            ),
            host=options.host,
            transport_security=None
            if options.allowed_hosts is None
            else TransportSecuritySettings(allowed_hosts=list(options.allowed_hosts)),
            limits=limits_of(options),
            request_state_security=request_state_security(options.request_state_keys),
            redis=redis_of(options),
            close_container=run_lifespan,
            run_lifespan=run_lifespan,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def redis_of(options: ServeOptions) -> SharedRedis | None:
    """The Redis ``--redis`` names, under ``--redis-prefix``, its answered rounds held by
    ``--redis-wait-replicas`` replicas (None without ``--redis``)."""
    if options.redis_url is None:
        return None
    from mcp_adapter.stores.shared import DEFAULT_PREFIX, SharedRedis, client_from_url

    return SharedRedis(
        client_from_url(options.redis_url),
        prefix=options.redis_prefix or DEFAULT_PREFIX,
        owns_client=True,
        wait_replicas=options.redis_wait_replicas or 0,
    )


def check_redis(options: ServeOptions) -> None:
    """Refuse to start, in one line, when ``--redis`` names a Redis that does not answer."""
    if options.redis_url is None:
        return
    import asyncio

    with needs_extra("redis", "--redis"):
        from redis.exceptions import RedisError

    from mcp_adapter.stores.shared import redacted

    async def ping() -> None:
        shared = redis_of(options)
        assert shared is not None
        try:
            await shared.client.ping()
        finally:
            await shared.aclose()

    try:
        asyncio.run(ping())
    except (RedisError, OSError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CliError(
            f"cannot reach Redis at {redacted(options.redis_url)}: {reason}",
            "start Redis there, or serve without --redis (state then stays in this process)",
            status=1,
        ) from exc


def limits_of(options: ServeOptions) -> HttpLimits:
    """The HTTP limits ``options`` set; ``HttpLimits``' defaults for the others."""
    body = {} if options.max_body_size is None else {"max_body_size": options.max_body_size}
    try:
        return HttpLimits(**limit_kwargs(options), **body)
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def startup_failed(exc: StartupError) -> CliError:
    """The one-line CLI error for a failed start-up (the traceback with ``--debug``)."""
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    return CliError(
        f"start-up failed: {lines[0]}",
        "fix what start-up needs (eager singletons, Server.lifespan)",
        status=1,
        traceback=True,
    )


Banner = Callable[[ServeOptions], list[str]]
"""Lines a command adds to the banner (``dev``: how to open the MCP Inspector)."""


def run(args: argparse.Namespace, banner: Banner | None = None) -> int:
    options = options_of(args)
    forget_secrets()
    check_redis(options)
    try:
        if not options.http:
            return _serve_stdio(options)
        if options.reload:
            return _serve_reload(options, banner or (lambda _: []))
        if options.workers > 1:
            return _serve_workers(options)
        return _serve_http(options)
    except StartupError as exc:
        raise startup_failed(exc) from exc


def status(line: str) -> None:
    """A human-readable status line: always on stderr (stdout is the protocol's on stdio,
    and nobody's on HTTP)."""
    print(line, file=sys.stderr, flush=True)


def _announce(options: ServeOptions, name: str, more: Sequence[str] = ()) -> None:
    mode = "stateful" if options.stateful else "stateless"
    workers = f", {count(options.workers, 'worker')}" if options.workers > 1 else ""
    status(f"MCP server {name!r} at {options.url} (streamable HTTP, {mode}{workers})")
    if options.auth is not None:
        need = "optional" if options.anonymous else "required"
        status(f"  bearer token {need} (Authorization: Bearer ...)")
    for line in more:
        status(line)


def _serve_stdio(options: ServeOptions) -> int:
    catalog, container = load_catalog(options)
    try:
        refuse_http_only(catalog, "stdio")
    except CompileError as exc:
        raise compile_failed(exc, options.target) from exc
    caller = None if options.identity is None else load_identity(options.identity)
    who = "" if caller is None else f" as {caller.subject!r}"
    timeout = HttpLimits().shutdown_timeout
    if options.shutdown_timeout is not None:
        timeout = options.shutdown_timeout
    run_stdio(
        catalog,
        container,
        close_container=True,
        identity=caller,
        shutdown_timeout=timeout,
        request_state_security=request_state_security(options.request_state_keys),
        redis=redis_of(options),
        on_ready=lambda served: status(f"MCP server {served.name!r} on stdio{who}"),
    )
    return 0


def bind_hint(exc: OSError, port: int) -> str:
    """What to do about a failed bind: the port is taken, the host is not this
    machine's, or the port needs privileges.

    >>> import errno
    >>> bind_hint(OSError(errno.EADDRINUSE, "in use"), 8000)
    'choose another --port (0 picks a free one) or stop what is using port 8000'
    """
    if exc.errno == errno.EADDRINUSE:
        return f"choose another --port (0 picks a free one) or stop what is using port {port}"
    if exc.errno == errno.EACCES and 0 < port < 1024:
        return "ports below 1024 need privileges: choose a --port of 1024 or above"
    if isinstance(exc, socket.gaierror):
        return "--host must be an address of this machine, or a name that resolves to one"
    return (
        "--host must be an address of this machine (127.0.0.1 for this machine only, "
        "0.0.0.0 or :: for every interface)"
    )


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so;
    # without it every keep-alive response waits for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CliError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", bind_hint(exc, port)
        ) from exc
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _serve_http(options: ServeOptions) -> int:
    """Start up, then bind and serve, in one event loop: a failing start-up never binds."""
    import asyncio

    import uvicorn

    from mcp_adapter.serving.uvicorn_config import uvicorn_config

    catalog, container = load_catalog(options)
    app = app_of(options, catalog, container, run_lifespan=False)
    config = uvicorn_config(
        app,
        forwarded_allow_ips=options.forwarded_allow_ips,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    held = HeldSignals(app.state.mcp_http_limits.shutdown_timeout)

    async def main() -> None:
        with held:  # re-raises a stop signal only once the shutdown below is done
            async with serve_lifespan(catalog, container):
                held.install(lambda sig: server.handle_exit(sig, None))
                sock = _bind(options.host, options.port)
                try:
                    bound = dataclasses.replace(options, port=sock.getsockname()[1])
                    _announce(bound, catalog.name)
                    await server.serve(sockets=[sock])
                finally:
                    sock.close()
                held.shutting_down()

    with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
        runner.run(main())
    return 0


def _serve_workers(options: ServeOptions) -> int:
    """The parent compiles once and binds; each worker starts up in its app's lifespan.

    A worker whose start-up fails exits with uvicorn's ``STARTUP_FAILURE`` status,
    which makes uvicorn's supervisor stop every worker instead of restarting it;
    ``serve`` then fails too.
    """
    from uvicorn.config import STARTUP_FAILURE
    from uvicorn.supervisors import Multiprocess

    from mcp_adapter.serving.uvicorn_config import uvicorn_config

    catalog, container = load_catalog(options)  # fail here, once, rather than in every worker
    app = app_of(options, catalog, container, run_lifespan=False)
    sock = _bind(options.host, options.port)
    options = dataclasses.replace(options, port=sock.getsockname()[1])
    os.environ[ENV_VAR] = options.to_env()
    config = uvicorn_config(
        WORKER_APP,
        limits=app.state.mcp_http_limits,
        forwarded_allow_ips=options.forwarded_allow_ips,
        factory=True,
        host=options.host,
        port=options.port,
        workers=options.workers,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_TIMEOUT,
        log_level="warning",
        lifespan="on",
    )
    _announce(options, catalog.name)
    supervisor = Multiprocess(config, sockets=[sock])
    try:
        supervisor.run()
    finally:
        sock.close()
    if any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes):
        raise CliError(
            "a worker failed to start up (its error is above); every worker was stopped",
            "fix what start-up needs (eager singletons, Server.lifespan)",
            status=1,
        )
    return 0


def _serve_reload(options: ServeOptions, banner: Banner) -> int:
    """Compile once here (a broken server stops before anything listens), bind, then let
    the reloader run the app in a child process, started again after each change.

    Each child rebuilds the app from ``MCP_ADAPTER_SERVE`` as a ``--workers`` process
    does, with its own container and start-up; a child that cannot start (an edit
    that does not compile) prints its error and the reloader waits for the next change.
    """
    import uvicorn

    from mcp_adapter.cli.reload import ProjectReload
    from mcp_adapter.serving.uvicorn_config import uvicorn_config

    catalog, _ = load_catalog(options)
    watched = os.getcwd()
    sock = _bind(options.host, options.port)
    options = dataclasses.replace(options, port=sock.getsockname()[1])
    os.environ[ENV_VAR] = options.to_env()
    config = uvicorn_config(
        WORKER_APP,
        limits=limits_of(options),
        factory=True,
        host=options.host,
        port=options.port,
        reload=True,
        reload_dirs=[watched],
        log_level="warning",
        lifespan="on",
    )
    _announce(
        options,
        catalog.name,
        [f"  restarting when a .py file under {watched} changes (--reload)", *banner(options)],
    )
    ProjectReload(config, target=uvicorn.Server(config).run, sockets=[sock]).run()
    return 0


COMMAND = Command(
    "serve",
    help="serve a server over stdio (default) or streamable HTTP",
    description="Serve MODULE:ATTR or path/to/app.py:ATTR (a Server class, a Catalog, or "
    "an object with compile(container)) over stdio, or over streamable HTTP with --http.",
    arguments=add_arguments,
    run=run,
)
