"""The wheel as the index would get it, built by ``uv build`` from this tree, installed into a
fresh virtual environment with the locked dependencies (``uv sync --frozen``: from uv's
cache when the README's set-up filled it, else from the lock's URLs).

It is named ``mcp-adapter-di``, carries the license, the project's links, classifiers
and keywords, and a README whose every link works on the index (absolute). Installed
beside it, another distribution's ``schemas`` that writes over this one's files is
named by ``import mcp_adapter``, with the fix.
"""

from __future__ import annotations

import email.parser
import fnmatch
import os
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import pytest

from mcp_adapter.distribution import DISTRIBUTION
from tests import needs

REPO = Path(__file__).resolve().parents[2]
REPOSITORY = "https://github.com/mcp-adapter-di/mcp-adapter-di"
TIMEOUT = 300


def uv() -> str:
    """uv itself: ``UV`` inside ``uv run``, else on ``PATH``."""
    found = os.environ.get("UV")
    if found and Path(found).is_file():
        return found
    return needs.command("uv", "install uv (README's commands install it in build/uv)")


def _run(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


@dataclass(frozen=True)
class Built:
    wheel: Path
    metadata: Message
    names: list[str]
    sdist_names: list[str]
    """The source distribution's files, without the folder they are all in."""

    @property
    def readme(self) -> str:
        payload = self.metadata.get_payload()
        assert isinstance(payload, str)
        return payload


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The source distribution, and the wheel built from it (``uv build`` does both, as a
    release would): what the wheel needs must be in the sdist."""
    out = tmp_path_factory.mktemp("dist")
    _run([uv(), "build", "--quiet", "--out-dir", str(out), str(REPO)])
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
    with tarfile.open(sdist) as archive:
        sdist_names = [
            member.name.split("/", 1)[1] for member in archive.getmembers() if member.isfile()
        ]
    return Built(wheel, metadata, names, sdist_names)


def test_the_sdist_holds_the_source_and_what_its_users_read(built: Built) -> None:
    """The package's source (every file git tracks under ``src/``), the project's
    metadata, README, license and changelog; not the lock, the tests, the docs, the
    examples nor the benchmarks (and their images), which need the repository."""
    source = sorted(name for name in built.sdist_names if name.startswith("src/"))
    assert source == _tracked("src")
    assert set(built.sdist_names) - set(source) == {
        "PKG-INFO",
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        ".gitignore",
    }


def _tracked(folder: str) -> list[str]:
    """The project's files under ``folder``: git's list in a checkout, else the folder's
    files but Python's caches."""
    if not (REPO / ".git").exists():
        return sorted(
            path.relative_to(REPO).as_posix()
            for path in (REPO / folder).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts
        )
    listed = subprocess.run(
        ["git", "ls-files", "-z", folder], cwd=REPO, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    return sorted(filter(None, listed.split("\0")))


def test_the_wheel_is_named_mcp_adapter_di(built: Built) -> None:
    assert built.wheel.name.startswith("mcp_adapter_di-")
    assert built.metadata["Name"] == DISTRIBUTION
    assert built.metadata["License-Expression"] == "MIT"
    assert "mcp_adapter_di-0.1.0.dist-info/licenses/LICENSE" in built.names
    tops = {name.split("/")[0] for name in built.names if "dist-info" not in name}
    assert tops == {"container", "schemas", "mcp_adapter", "_mcp_adapter_di.py"}
    assert "mcp_adapter/templates/tool.tmpl" in built.names
    for package in ("container", "schemas", "mcp_adapter"):
        assert f"{package}/py.typed" in built.names


def test_the_index_page_has_links_classifiers_and_keywords(built: Built) -> None:
    urls = dict(value.split(", ", 1) for value in built.metadata.get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert all(url.startswith(REPOSITORY) for url in urls.values())
    classifiers = built.metadata.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert {"mcp", "dependency injection"} <= set(built.metadata["Keywords"].split(","))
    assert built.metadata["Description-Content-Type"] == "text/markdown"


def test_the_readme_on_the_index_has_no_relative_link(built: Built) -> None:
    """The index shows README.md with no repository around it: a relative link is dead."""
    readme = built.readme
    assert readme.startswith("# mcp-adapter-di\n")
    assert "pip install mcp-adapter-di" in readme
    links = re.findall(r"\]\(([^)]+)\)", readme)
    assert links, "README.md has no links to check"
    relative = [link for link in links if not link.startswith(("https://", "#"))]
    assert relative == []
    for link in links:
        if link.startswith(f"{REPOSITORY}/blob/main/"):
            assert (REPO / link.removeprefix(f"{REPOSITORY}/blob/main/")).exists(), link


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_until_a_release_the_pages_say_how_to_install_from_a_checkout(
    built: Built, page: str
) -> None:
    """``pip install mcp-adapter-di`` needs a release on the index: meanwhile the pages
    install the clone's folder, or the wheel ``uv build`` writes (the name matches it)."""
    text = (REPO / page).read_text(encoding="utf-8")
    assert f"git clone {REPOSITORY}\n" in text
    folder = REPOSITORY.rsplit("/", 1)[1]
    assert f"pip install './{folder}[testing]'" in text
    assert "\nbuild/uv/bin/uv build --wheel " in text
    wheels = re.findall(rf"^pip install (/\S+/{folder}/dist/\S+)$", text, re.M)
    assert wheels
    assert all(fnmatch.fnmatch(built.wheel.name, Path(wheel).name) for wheel in wheels)


@pytest.fixture(scope="module")
def installed(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment (no pip) with the locked dependencies and the wheel.

    ``uv sync --frozen`` installs the lock's packages from the lock's own URLs: from the
    cache when the README's set-up put them there, else downloaded. (``uv pip install
    --offline -r`` would need the index pages, which ``uv sync`` never stores: it failed
    on every machine whose cache only the README's commands had filled.)"""
    home = tmp_path_factory.mktemp("venv")
    venv.create(home, with_pip=False)
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["UV_PROJECT_ENVIRONMENT"] = str(home)
    _run(
        [uv(), "sync", "--frozen", "--no-dev", "--no-install-project", "--quiet"],
        cwd=REPO,
        env=env,
    )
    _run([uv(), "pip", "install", "--no-deps", "--quiet", "--python", str(home / "bin" / "python"),
          str(built.wheel)])  # fmt: skip
    return home


def _in(
    home: Path, *command: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **{key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "UV")},
        **(env or {}),
    }
    env["VIRTUAL_ENV"] = str(home)
    return subprocess.run(
        [str(home / "bin" / command[0]), *command[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_installed_it_runs_from_its_own_files(installed: Path, tmp_path: Path) -> None:
    done = _in(
        installed, "mcp-adapter", "--version", cwd=tmp_path, env={"PYTHONPROFILEIMPORTTIME": "1"}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{DISTRIBUTION} 0.1.0 (mcp 2.3.0, Python ")
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()}
    assert "_mcp_adapter_di" in imported
    assert not {"mcp", "mcp_adapter", "pydantic"} & imported, "--version imports the package"
    code = (
        "import mcp_adapter, schemas, container; print(mcp_adapter.__file__, schemas.__version__)"
    )
    done = _in(installed, "python", "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    where, version = done.stdout.split()
    assert Path(where).is_relative_to(installed)
    assert version == "0.1.0"
    assert sys.prefix != str(installed)


def test_another_distribution_writing_over_schemas_is_named(
    installed: Path, tmp_path: Path
) -> None:
    """The index's ``schemas`` (a package of the Python 2 era) installed after this one
    writes its ``schemas/__init__.py`` over this one's."""
    foreign = _foreign_schemas_wheel(tmp_path)
    _run([uv(), "pip", "install", "--no-deps", "--quiet", "--python",
          str(installed / "bin" / "python"), str(foreign)])  # fmt: skip
    site = next((installed / "lib").glob("python3*/site-packages"))
    done = _in(installed, "python", "-c", "import mcp_adapter", cwd=tmp_path)
    assert done.returncode == 1
    last = done.stderr.splitlines()[-2:]
    assert last[0].startswith(
        f"mcp_adapter.distribution.ShadowedPackageError: {site / 'schemas' / '__init__.py'} is "
        f"not {DISTRIBUTION}'s package 'schemas': the distribution 'schemas' wrote over it "
        "(importing it fails: SyntaxError: "
    )
    assert last[1] == (
        f"  hint: pip uninstall schemas && pip install --force-reinstall {DISTRIBUTION} "
        "(or install the two in separate virtual environments)"
    )


def _foreign_schemas_wheel(folder: Path) -> Path:
    wheel = folder / "schemas-0.0.6-py3-none-any.whl"
    info = "schemas-0.0.6.dist-info"
    files = {
        "schemas/__init__.py": 'print "a schemas package of the Python 2 era"\n',
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: schemas\nVersion: 0.0.6\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in {**files, f"{info}/RECORD": record}.items():
            archive.writestr(name, text)
    return wheel
