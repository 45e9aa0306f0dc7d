"""``mcp-adapter --version`` answers from the installed distributions' metadata: the
command's entry point imports neither ``mcp_adapter`` nor the ``mcp`` SDK for it (together
more than a second), and prints the line a bug report needs."""

from __future__ import annotations

import json
import platform
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

from tests.packaging.test_own_packages import run_python
from tests.serving.harness import REPO, run_cli

HEAVY = frozenset({"mcp", "mcp_adapter", "mcp_types", "pydantic", "container", "schemas"})


def entry_point() -> tuple[str, str]:
    """The module and function ``[project.scripts]`` names for ``mcp-adapter``."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["mcp-adapter"].partition(":")
    return module, function


def _as_the_script(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """What an installed console script runs, then the names of every module imported."""
    module, function = entry_point()
    code = (
        f"import json, sys\nfrom {module} import {function}\nsys.argv[1:] = {args!r}\n"
        f"status = {function}()\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
        "sys.exit(status)\n"
    )
    return run_python(["-c", code], cwd)


def test_version_imports_neither_the_package_nor_the_sdk(tmp_path: Path) -> None:
    done = _as_the_script(["--version"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"mcp-adapter-di {version('mcp-adapter-di')} (mcp 2.3.0, "
        f"Python {platform.python_version()})\n"
    )
    imported = {name.partition(".")[0] for name in json.loads(done.stderr)}
    assert imported & HEAVY == set()


def test_every_other_command_line_runs_the_whole_cli(tmp_path: Path) -> None:
    done = _as_the_script(["list", "no_such_module:Server"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert "mcp_adapter.cli" in done.stderr.splitlines()[-1]


def test_version_among_other_options_prints_the_same_line() -> None:
    alone, with_debug = run_cli(["--version"]), run_cli(["--debug", "--version"])
    assert alone.returncode == with_debug.returncode == 0
    assert alone.stdout == with_debug.stdout
    assert alone.stdout.startswith("mcp-adapter-di 0.1.0 (mcp 2.3.0, Python ")
