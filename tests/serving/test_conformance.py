"""The official MCP conformance suite against ``examples/conformance`` over HTTP on 127.0.0.1.

The pinned suite (and the Node 22 it needs) is installed by the test itself
into ``build/conformance/`` on first use; only ``npm`` must exist.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from examples.conformance import suite

from tests.serving.harness import serve_process


@pytest.fixture(scope="module")
def toolchain() -> suite.Toolchain:
    return suite.install()


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with serve_process([sys.executable, "-m", "examples.conformance", "--port", "0"]) as served:
        yield served.url


@pytest.mark.parametrize("which", ["active", "pending"])
def test_suite_passes_with_no_failures(
    toolchain: suite.Toolchain, server_url: str, which: str
) -> None:
    result = suite.run(server_url, which, toolchain)
    assert result.scenarios, result.output
    assert not result.failed, f"failing scenarios: {result.failed}\n{result.output}"
    assert result.returncode == 0, result.output
