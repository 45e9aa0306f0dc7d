"""The runnable examples in ``examples/extensions``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from container import Container
from mcp_adapter import Platform
from tests.extensions.support import MODERN, host_call, host_tools

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


@pytest.mark.parametrize("script", ["sandboxes.py", "sandbox_audit.py"])
def test_the_example_runs(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "'sandbox': 'demo'" in done.stdout


async def test_the_audit_extension_extends_launch_sandbox_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from sandbox_audit import SandboxAudit  # type: ignore[import-not-found]
    from sandboxes import Sandboxes  # type: ignore[import-not-found]

    audit = SandboxAudit()
    catalog = Platform([Sandboxes(), audit]).compile(Container())
    [entry] = await host_tools(Container(), catalog, MODERN)
    assert entry["description"].endswith("the prod variant is not available.")
    assert entry["_meta"] == {"audit": {"policy": "no-prod"}}
    assert entry["annotations"]["openWorldHint"] is False
    assert catalog.tools["launch_sandbox"].toolset == "sandboxes"
    ok = await host_call(Container(), catalog, "launch_sandbox", {"sandbox_name": "a"}, MODERN)
    assert ok["structuredContent"]["status"] == "running"
    prod = {"sandbox_name": "b", "variant": "prod"}
    refused = await host_call(Container(), catalog, "launch_sandbox", prod, MODERN)
    assert refused["isError"] is True
    assert audit.log == ["launched a", "refused b"]
