"""The documentation site builds with ``mkdocs build --strict``: every page in the
navigation, every link and anchor found, every API reference resolved. And the strict
build does fail on a broken link, a missing anchor and an unknown reference."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "mkdocs.yml"
BUILD_TIMEOUT = 600  # seconds: a bound on a stuck build, not a speed threshold


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)]
    return subprocess.run(
        [*command, "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = build(CONFIG, site)
    assert done.returncode == 0, done.stderr
    pages = {page.relative_to(site).as_posix() for page in site.rglob("*.html")}
    assert {"index.html", "getting-started/index.html", "coming-from-fastmcp/index.html"} <= pages
    serving = (site / "reference" / "serving" / "index.html").read_text()
    assert "JwtVerifier" in serving
    assert "IntrospectionVerifier" in serving


def test_every_page_is_in_the_navigation() -> None:
    def pages(node: Any) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [page for item in node for page in pages(item)]
        return [page for value in node.values() for page in pages(value)]

    nav = set(pages(yaml.safe_load(CONFIG.read_text())["nav"]))
    docs = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert docs == nav


def small_site(tmp_path: Path, page: str) -> Path:
    """A one-page site with the project's own settings (validation, plugins)."""
    config = yaml.safe_load(CONFIG.read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(page)
    (docs / "other.md").write_text("# Other\n\n## Known heading\n")
    config.update(docs_dir=str(docs), nav=["index.md", "other.md"])
    python = config["plugins"][1]["mkdocstrings"]["handlers"]["python"]
    python["paths"] = [str(ROOT / "src")]
    python["options"]["extensions"] = [
        f"{ROOT / 'docs' / 'griffe_docstrings.py'}:MarkdownDocstrings"
    ]
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_broken_link_or_anchor_fails_the_build(tmp_path: Path) -> None:
    page = "# Home\n\n[gone](missing.md), [nowhere](other.md#no-such-heading)\n"
    done = build(small_site(tmp_path, page), tmp_path / "site")
    assert done.returncode != 0
    assert "missing.md" in done.stderr
    assert "no-such-heading" in done.stderr


def test_an_unknown_reference_fails_the_build(tmp_path: Path) -> None:
    page = "# Home\n\n[other](other.md#known-heading)\n\n::: mcp_adapter.NoSuchName\n"
    done = build(small_site(tmp_path, page), tmp_path / "site")
    assert done.returncode != 0
    assert "NoSuchName" in done.stderr


def test_the_small_site_builds_when_nothing_is_broken(tmp_path: Path) -> None:
    page = "# Home\n\n[other](other.md#known-heading)\n\n::: mcp_adapter.serving.JwtVerifier\n"
    done = build(small_site(tmp_path, page), tmp_path / "site")
    assert done.returncode == 0, done.stderr
