"""FastMCP's virtual environment for the HTTP suite: ``.bench-venvs/http-fastmcp``.

FastMCP (with ``Depends``) is served over HTTP from a venv of its own
(:class:`benchmarks.pinned_venv.PinnedVenv`), with ``mcp``, uvicorn, Starlette
and their neighbours pinned to the versions installed here, so FastMCP runs on
the same SDK and server as the other contenders. Its server is
``python -m benchmarks.http_serve fastmcp`` run by that venv's python, with this
project's root (the ``benchmarks`` package, not ``src/``) on ``PYTHONPATH``.
"""

from __future__ import annotations

import subprocess

from benchmarks.pinned_venv import ROOT, PinnedVenv

VENV_DIR = ".bench-venvs/http-fastmcp"
FASTMCP_PIN = "fastmcp==4.2.3"
SHARED = (
    "mcp",
    "mcp-types",
    "pydantic",
    "pydantic-core",
    "anyio",
    "starlette",
    "uvicorn",
    "h11",
    "sse-starlette",
)
"""Pinned to this environment's versions, so FastMCP runs on the same SDK and server."""
VENV = PinnedVenv(VENV_DIR, (FASTMCP_PIN,), SHARED, install_timeout=900)


def versions() -> str:
    """The versions of FastMCP and what it runs on, as installed in the venv."""
    code = (
        "import importlib.metadata as m, sys;"
        "print(', '.join(f'{n} {m.version(n)}' for n in sys.argv[1:]))"
    )
    done = subprocess.run(
        [str(VENV.python), "-c", code, "fastmcp", "mcp", "uvicorn", "starlette", "pydantic"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def env() -> dict[str, str]:
    """The environment of a server run by the venv's python."""
    return VENV.env([ROOT])  # the benchmarks package; not src/
