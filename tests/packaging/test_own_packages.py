"""``container`` and ``schemas`` must be this distribution's: a project's own ``schemas.py``
or ``container.py`` gets an error naming the file and the fix, in real processes run from
the project's folder, as its user would run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import container
import mcp_adapter
import schemas
from mcp_adapter.distribution import DISTRIBUTION, ShadowedPackageError, own_folder, version
from tests.serving.harness import cli_env, run_cli

GREETER = """\
from mcp_adapter import McpResponse, Server, Tool, ToolAnnotations
from schemas import User


class Greet(Tool[User]):
    name = "greet"
    description = "Greet a user."
    input = User
    annotations = ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )

    async def handle(self, payload: User) -> McpResponse:
        return McpResponse.text(f"Hello, {payload.name}!")


class Greeter(Server):
    name = "greeter"
    tools = (Greet,)


if __name__ == "__main__":
    print("served")
"""
USER_SCHEMAS = """\
from pydantic import BaseModel


class User(BaseModel):
    name: str
"""


def run_python(code_or_file: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """This interpreter on ``code_or_file`` (``["-c", code]`` or a file), from ``cwd``."""
    return subprocess.run(
        [sys.executable, *code_or_file],
        cwd=cwd,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def fastapi_style(tmp_path: Path) -> Path:
    """A project with its own ``schemas.py`` beside the module that serves."""
    (tmp_path / "schemas.py").write_text(USER_SCHEMAS)
    (tmp_path / "greeter.py").write_text(GREETER)
    return tmp_path


def test_each_package_has_the_distributions_version() -> None:
    assert DISTRIBUTION == "mcp-adapter-di"
    assert mcp_adapter.__version__ == container.__version__ == schemas.__version__ == version()
    assert version() == _pyproject_version()
    assert container.__distribution__ == schemas.__distribution__ == DISTRIBUTION


def _pyproject_version() -> str:
    import tomllib

    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    project = tomllib.loads(text)["project"]
    assert project["name"] == DISTRIBUTION
    return str(project["version"])


def test_a_projects_own_schemas_module_is_named_with_the_fix(fastapi_style: Path) -> None:
    done = run_python(["greeter.py"], fastapi_style)
    assert done.returncode == 1
    mine = fastapi_style.resolve() / "schemas.py"
    assert done.stderr.splitlines()[-2:] == [
        f"mcp_adapter.distribution.ShadowedPackageError: import 'schemas' finds {mine}, not "
        f"{DISTRIBUTION}'s package 'schemas' ({own_folder('schemas')}): a module of yours "
        "named 'schemas' shadows it",
        f"  hint: rename {mine} (for example to app_schemas.py) and the imports of it: "
        f"{DISTRIBUTION} needs the top-level name 'schemas'",
    ]
    assert "circular import" not in done.stderr
    assert "cannot import name 'Contract'" not in done.stderr


def test_imported_first_it_is_still_named(fastapi_style: Path) -> None:
    """The project imported its ``schemas`` before ``mcp_adapter``: the module in
    ``sys.modules`` is checked, not the path."""
    done = run_python(["-c", "import schemas, mcp_adapter"], fastapi_style)
    assert done.returncode == 1
    assert "ShadowedPackageError: import 'schemas' finds" in done.stderr
    assert f"{fastapi_style.resolve() / 'schemas.py'}" in done.stderr


def test_a_container_package_of_the_project_is_named(tmp_path: Path) -> None:
    (tmp_path / "container").mkdir()
    (tmp_path / "container" / "__init__.py").write_text("from mcp_adapter import Tool\n")
    done = run_python(["-c", "import mcp_adapter"], tmp_path)
    assert done.returncode == 1
    folder = tmp_path.resolve() / "container"
    assert f"ShadowedPackageError: import 'container' finds {folder / '__init__.py'}" in done.stderr
    assert f"hint: rename {folder} (for example to app_container) and the imports of it" in (
        done.stderr
    )


def test_a_folder_of_that_name_that_is_no_package_hides_nothing(tmp_path: Path) -> None:
    """A ``container/`` folder of Dockerfiles (no ``__init__.py``) is a namespace portion,
    which never wins over a regular package."""
    (tmp_path / "container").mkdir()
    (tmp_path / "container" / "Dockerfile").write_text("FROM scratch\n")
    done = run_python(
        ["-c", "import mcp_adapter, container; print(container.__distribution__)"], tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{DISTRIBUTION}\n"


def test_the_command_names_the_file_in_the_cli_style(fastapi_style: Path) -> None:
    """The installed command imports this distribution's packages first; the project's
    module then fails to import its own ``schemas``: the CLI says why, in two lines."""
    done = run_cli(["check", "greeter:Greeter"], cwd=fastapi_style)
    assert done.returncode == 2
    mine = fastapi_style.resolve() / "schemas.py"
    lines = done.stderr.splitlines()
    assert lines[0].startswith(
        f"error: importing 'greeter' failed: it imports 'schemas' meaning {mine}, but 'schemas' "
        f"is {DISTRIBUTION}'s package: ImportError: cannot import name 'User' from 'schemas'"
    )
    assert lines[1:] == [
        f"hint: rename {mine} (for example to app_schemas.py) and the imports of it"
    ]


def test_after_renaming_it_works(fastapi_style: Path) -> None:
    (fastapi_style / "schemas.py").rename(fastapi_style / "app_schemas.py")
    greeter = fastapi_style / "greeter.py"
    greeter.write_text(
        greeter.read_text().replace("from schemas import", "from app_schemas import")
    )
    assert run_python(["greeter.py"], fastapi_style).stdout == "served\n"
    done = run_cli(["check", "greeter:Greeter"], cwd=fastapi_style)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "greeter:Greeter: ok (1 tool, 0 resources, 0 prompts)\n"


def test_the_error_is_an_import_error_with_the_file() -> None:
    exc = ShadowedPackageError("m", name="schemas", path="/p/schemas.py", hint="h")
    assert isinstance(exc, ImportError)
    assert (exc.name, exc.path, str(exc)) == ("schemas", "/p/schemas.py", "m\n  hint: h")
