"""The app factory ``uvicorn --workers`` imports in each worker process.

``mcp-adapter serve --http --workers N`` puts its options in the environment
and runs ``uvicorn.run("mcp_adapter.cli.asgi:create_app", factory=True, ...)``.
Each worker starts up in its app's lifespan; a failing start-up is reported in
one line (not Starlette's traceback) and the worker exits (uvicorn's
``STARTUP_FAILURE``).
"""

from __future__ import annotations

import os
import sys
import traceback

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_adapter.cli.options import ENV_VAR, ServeOptions
from mcp_adapter.compiled.lifespan import StartupError


class OneLineStartupFailure:
    """ASGI wrapper: a ``StartupError`` in the lifespan is reported as ``error: ...``, one line.

    Starlette reports a failed start-up with the whole traceback as the
    ``lifespan.startup.failed`` message (which uvicorn logs); this holds that
    message back until the exception arrives and sends the CLI's line instead.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        held: Message | None = None

        async def app_send(message: Message) -> None:
            nonlocal held
            if message["type"] == "lifespan.startup.failed":
                held = message
                return
            await send(message)

        try:
            await self.app(scope, receive, app_send)
        except StartupError as exc:
            if held is not None:
                from mcp_adapter.cli.serve import startup_failed

                line = startup_failed(exc).message
                held = {**held, "message": f"error: worker [{os.getpid()}]: {line}"}
            raise
        finally:
            if held is not None:
                await send(held)


def create_app() -> ASGIApp:
    """Build the HTTP app from ``MCP_ADAPTER_SERVE`` (set by ``mcp-adapter serve``), and
    take that variable out of this worker's environment once read.

    A server that does not build (``--reload`` after an edit that does not compile)
    is reported as the CLI reports it, and the process exits with uvicorn's
    ``STARTUP_FAILURE``: ``--workers`` then stops, ``--reload`` waits for the next change.
    """
    from uvicorn.config import STARTUP_FAILURE

    from mcp_adapter.cli.errors import CliError
    from mcp_adapter.cli.serve import build_app

    options = ServeOptions.from_env(os.environ)
    # it holds the request-state keys: gone before a tool can spawn a child that inherits it
    os.environ.pop(ENV_VAR, None)
    for entry in reversed(options.sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        return OneLineStartupFailure(build_app(options))
    except CliError as exc:
        if options.debug:
            traceback.print_exception(exc)
        for line in exc.lines(debug=options.debug):
            print(line, file=sys.stderr, flush=True)
        raise SystemExit(STARTUP_FAILURE) from exc
