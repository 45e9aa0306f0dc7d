"""README's main command, run as written from a copy of the project by a bare Python.

The stand-in for a fresh machine: ``python3`` on ``PATH`` is a virtual environment made
``--without-pip`` (no pip, nothing installed), in a folder with no ``.venv``. The
command runs under ``bash`` exactly as README.md has it, but for ``--port 0``. No
network is used: pip finds ``uv==0.13.9`` in a local folder (a stand-in wheel whose
``uv`` runs the real uv), and uv installs the locked packages from the cache that the
README's set-up filled (``UV_OFFLINE``; ``UV_CACHE_DIR`` is passed on when set). What
is checked is the command's own logic: it makes its virtual environment with the bare
``python3``, installs uv there with that environment's pip, makes the project's
``.venv``, and serves the demo; the system's Python is untouched.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
import venv
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

from tests.packaging.test_wheel import REPO, uv
from tests.serving.clients import connect, tool_names
from tests.serving.harness import URL_LINE
from tests.serving.test_readme_command import UV_PIN, main_command

START_TIMEOUT = 600.0
"""Making two virtual environments and installing the lock from the cache: bounded, generous."""


KEPT = frozenset({"UV_CACHE_DIR"})
"""Kept from this run's environment: the cache the README's set-up filled, wherever it is
(without it the command would read ``~/.cache/uv``, which a fresh machine never filled)."""

SKIPPED = frozenset({".git", ".venv", "build", "dist", "node_modules", "__pycache__"})


def _project_files() -> list[str]:
    """The project's files: git's list in a checkout, else the tree without what is made."""
    if (REPO / ".git").exists():
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=REPO,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout.decode()
        return list(filter(None, listed.split("\0")))
    return [
        str(path.relative_to(REPO))
        for path in REPO.rglob("*")
        if path.is_file()
        and not SKIPPED & set(path.relative_to(REPO).parts)
        and not any(part.startswith(".") for part in path.relative_to(REPO).parts[:-1])
    ]


def _project_copy(into: Path) -> Path:
    project = into / "project"
    for name in _project_files():
        source = REPO / name
        if source.is_file():
            target = project / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return project


def _stand_in_uv_wheel(folder: Path, real_uv: str) -> None:
    """``uv==0.13.9`` for pip to find offline: its ``uv`` command runs the real uv."""
    name, version = UV_PIN.split("==")
    info = f"{name}-{version}.dist-info"
    files = {
        "uv_stand_in.py": "import os, sys\n\n\ndef main():\n"
        f"    os.execv({real_uv!r}, [{real_uv!r}, *sys.argv[1:]])\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": "[console_scripts]\nuv = uv_stand_in:main\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


@contextmanager
def _running(command: str, cwd: Path, env: dict[str, str]) -> Iterator[tuple[str, list[str]]]:
    """``bash -c command`` in a process group of its own (stopped as a whole); yields the
    URL the server announces and its output so far."""
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    output: list[str] = []

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "the command ended before serving:\n" + "".join(output)
            found = URL_LINE.search(line)
            if found:
                break
        yield found.group(1), output
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)


def test_readme_main_command_from_a_bare_python(tmp_path: Path) -> None:
    real_uv = uv()
    bare = tmp_path / "bare-python"
    venv.create(bare, with_pip=False)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _stand_in_uv_wheel(wheels, real_uv)
    project = _project_copy(tmp_path)
    command = re.sub(r"--port \d+", "--port 0", main_command())
    assert command != main_command()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MCP_ADAPTER_", "UV", "VIRTUAL_ENV", "PIP_", "PYTHON"))
        or key in KEPT
    }
    env.update(
        PATH=f"{bare / 'bin'}{os.pathsep}{os.environ['PATH']}",
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        UV_OFFLINE="1",
        UV_LINK_MODE="symlink",
        MCP_DEMO_TOKEN="fresh-machine-token",
    )
    with _running(command, project, env) as (url, output):
        assert url.startswith("http://127.0.0.1:")

        async def check() -> None:
            async with connect(url) as client:
                assert await tool_names(client) == ["greet", "summarize"]
            async with connect(url, token="fresh-machine-token") as client:
                assert "private-message" in await tool_names(client)

        anyio.run(check)
    assert (project / "build" / "uv" / "bin" / "uv").is_file()
    assert (project / ".venv" / "bin" / "mcp-adapter").is_file()
    assert not (bare / "bin" / "uv").exists()
    assert not list((bare / "lib").glob("python3*/site-packages/uv*"))
    assert "error" not in "".join(output).lower(), output
    assert shlex.split(command)[:4] == ["python3", "-m", "venv", "build/uv"]
