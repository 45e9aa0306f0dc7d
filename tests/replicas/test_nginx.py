"""The nginx configuration docs/deployment.md shows, run as written: three
``mcp-adapter serve --redis`` replicas behind ``nginx`` (its default round-robin),
driven through it by the SDK's own client, 2026-07-28.

Only the addresses change: the documented ``upstream`` and ``server`` blocks are read
from the page, their ports replaced by the free ones the test picked, and wrapped in
the few top-level lines an nginx running from a temporary folder needs. Skipped with
the reason when ``nginx`` is missing, failed instead with ``CI=true``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.shared.subscriptions import ResourceUpdated

from tests.notifications.support import next_event
from tests.replicas.cluster import Cluster, Replica, binary, cluster
from tests.replicas.test_replicas import ADA, BOB, TIMEOUT, connect, text

pytestmark = pytest.mark.anyio

DOCS = Path(__file__).parents[2] / "docs" / "deployment.md"

# What the documented blocks leave to the main configuration file: one process in the
# foreground (no privilege drop, so the temporary folder stays readable), its files in
# that folder, errors on stderr.
MAIN = """\
daemon off;
master_process off;
pid {folder}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
{documented}
}}
"""


def documented_configuration() -> str:
    """The ```text block of docs/deployment.md's nginx section."""
    page = DOCS.read_text()
    section = page.split("\n## nginx\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```text\n(.*?)```", section, re.DOTALL)
    assert match is not None, "docs/deployment.md's nginx section has no configuration"
    return match.group(1)


def configuration(folder: Path, port: int, replicas: list[Replica]) -> str:
    documented = documented_configuration()
    servers = re.findall(r"^ *server 127\.0\.0\.1:\d+;\n", documented, re.MULTILINE)
    assert len(servers) == len(replicas), servers
    for line, replica in zip(servers, replicas, strict=True):
        documented = documented.replace(line, f"    server 127.0.0.1:{replica.port};\n", 1)
    documented, listens = re.subn(r"listen \d+;", f"listen 127.0.0.1:{port};", documented)
    assert listens == 1
    return MAIN.format(folder=folder, documented=documented)


def nginx(folder: Path, deployment: Cluster) -> list[str]:
    config = folder / "nginx.conf"
    config.write_text(configuration(folder, deployment.port, deployment.replicas))
    return [binary("nginx", "nginx-light"), "-p", str(folder), "-c", str(config), "-e", "stderr"]


@pytest.fixture(scope="module")
def behind_nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("nginx"), balancer=nginx) as running:
        yield running


def test_the_configuration_run_is_the_documented_one(tmp_path: Path) -> None:
    replicas = [Replica(f"r{n}", 9000 + n) for n in range(3)]
    written = configuration(tmp_path, 8999, replicas)
    for line in documented_configuration().splitlines():
        if line.strip() and not line.strip().startswith(("listen", "server 127")):
            assert line in written, line


async def test_nginx_spreads_calls_over_every_replica(behind_nginx: Cluster) -> None:
    async with connect(behind_nginx.url, ADA) as ada:
        answered = {text(await ada.call_tool("where", {})) for _ in range(6)}
    assert answered == {"r1", "r2", "r3"}


async def test_a_multi_round_elicitation_crosses_replicas_through_nginx(
    behind_nginx: Cluster,
) -> None:
    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(TIMEOUT):
        async with connect(behind_nginx.url, ADA, elicitation_callback=answer) as ada:
            result = text(await ada.call_tool("ask-twice", {}))
    action, rounds = result.split(" ")
    assert action == "accept"
    assert len(set(rounds.split(","))) > 1, f"every round on one replica: {rounds}"


async def test_a_listen_stream_through_nginx_hears_changes_from_every_replica(
    behind_nginx: Cluster,
) -> None:
    """With buffering off, each event reaches the listener as the replica writes it; Bob,
    listening too, hears none of Ada's diary."""
    watched = ["notes://ada/diary", "notes://public"]
    with anyio.fail_after(TIMEOUT):
        async with (
            connect(behind_nginx.url, ADA) as ada,
            connect(behind_nginx.url, BOB) as bob,
            ada.listen(resource_subscriptions=watched) as ada_hears,
            bob.listen(resource_subscriptions=watched) as bob_hears,
        ):
            for replica in behind_nginx.replicas:
                async with connect(replica.url, ADA) as announcer:
                    await announcer.call_tool("touch", {"uri": "notes://ada/diary"})
                assert await next_event(ada_hears) == ResourceUpdated(uri="notes://ada/diary")
            async with connect(behind_nginx.replicas[0].url, ADA) as announcer:
                await announcer.call_tool("touch", {"uri": "notes://public"})
            assert await next_event(bob_hears) == ResourceUpdated(uri="notes://public")
