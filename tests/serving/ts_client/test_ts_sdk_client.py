"""The official TypeScript SDK's client (``@modelcontextprotocol/client`` 2.4.0, see
``install.py``) drives ``mcp-adapter serve`` over stdio in both eras: a resolver's
``Sample`` is answered by the client's sampling handler, its ``ListRoots`` by the roots
the client declares, and a ``Notifier`` announcement reaches the client's
``notifications/tools/list_changed`` handler (on 2026-07-28 through the client's
``subscriptions/listen``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from examples.conformance.suite import NPM_MISSING

from tests.serving.harness import CLI, run_command
from tests.serving.ts_client.install import ts_client

ERAS = ("2025-11-25", "2026-07-28")
RUN_TIMEOUT = 120  # seconds: a bound on a stuck client or server, not a speed threshold
SERVER = "tests.serving.ts_client.app:TsClientServer"


@pytest.mark.parametrize("era", ERAS)
def test_the_typescript_client_samples_lists_roots_and_hears_a_change(era: str) -> None:
    client = ts_client()
    command = [str(client.node), str(client.script), era, *CLI, "serve", SERVER]
    done = run_command(command, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["protocolVersion"] == era
    # sampling: the resolver asked, the TypeScript handler answered, the result says so
    assert report["summarize"] == ["summary: Tea is good. (by ts-model)"]
    # roots: the client's declared roots reached the handler
    assert report["roots"] == ["work=file:///srv/ts-work"]
    assert report["asked"] == ["sampling: Summarize tea in one line", "roots"]
    # the Notifier's announcement reached the client's notification handler
    assert report["announce"] == ["announced"]
    assert report["heard"] == "notifications/tools/list_changed"
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("ci", "outcome"), [("", pytest.skip.Exception), ("true", pytest.fail.Exception)]
)
def test_without_npm_the_test_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome) as raised:
        ts_client(cache=tmp_path / "cache")
    assert str(raised.value).startswith(NPM_MISSING)
    assert not (tmp_path / "cache").exists()
