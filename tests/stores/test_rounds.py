"""The Redis ledger of answered rounds on ``fakeredis`` (tests/replicas runs it on a real
Redis, shared by two servers): one ``SET NX PX`` per round, and a Redis that does not
answer refuses the round instead of letting it through unrecorded."""

from __future__ import annotations

import fakeredis
import pytest

from mcp_adapter.stores import LedgerUnavailable, RedisRounds, RoundLedger, SharedRedis

pytestmark = pytest.mark.anyio


async def test_a_round_is_taken_once_and_expires_with_its_ttl() -> None:
    client = fakeredis.FakeAsyncRedis()
    rounds = SharedRedis(client).for_server("bank").rounds()
    assert isinstance(rounds, RoundLedger)
    assert await rounds.consume("digest-1", 90.5)
    assert not await rounds.consume("digest-1", 90.5)
    assert await rounds.consume("digest-2", 0.0)  # PX 0 is an error: at least a millisecond
    assert 90_000 < await client.pttl("mcp_adapter:bank:rounds:digest-1") <= 90_500
    keys = sorted(await client.keys("*"))  # digest-2 may be gone already: it had 1 ms
    assert keys[0] == b"mcp_adapter:bank:rounds:digest-1"
    assert keys[1:] in ([], [b"mcp_adapter:bank:rounds:digest-2"])


async def test_a_redis_that_does_not_answer_is_a_ledger_unavailable() -> None:
    server = fakeredis.FakeServer()
    server.connected = False
    client = fakeredis.FakeAsyncRedis(server=server)
    rounds = RedisRounds(client, "p:rounds", timeout=5)
    with pytest.raises(LedgerUnavailable, match="Redis did not record the round"):
        await rounds.consume("digest", 10.0)
    await client.aclose()


def test_shared_redis_hands_its_wait_for_replicas_to_the_rounds() -> None:
    client = fakeredis.FakeAsyncRedis()
    shared = SharedRedis(client, wait_replicas=2, wait_timeout=0.25).for_server("bank")
    rounds = shared.rounds()
    assert (rounds.wait_replicas, rounds.wait_timeout, rounds.timeout) == (2, 0.25, 5.0)
    assert SharedRedis(client).rounds().wait_replicas == 0  # the primary's word, by default


@pytest.mark.parametrize(
    ("wait", "message"),
    [
        ({"wait_replicas": -1}, "how many replicas must hold an answered round .*not -1"),
        ({"wait_replicas": True}, "how many replicas must hold an answered round .*not True"),
        ({"wait_replicas": 1.5}, "how many replicas must hold an answered round .*not 1.5"),
        ({"wait_timeout": 0}, "the seconds WAIT waits for replicas .*not 0"),
        ({"wait_timeout": -1.0}, "the seconds WAIT waits for replicas .*not -1.0"),
        ({"wait_timeout": float("nan")}, "the seconds WAIT waits for replicas .*not nan"),
    ],
)
def test_a_wait_for_replicas_that_is_no_count_or_no_time_is_refused(
    wait: dict[str, float], message: str
) -> None:
    client = fakeredis.FakeAsyncRedis()
    with pytest.raises(ValueError, match=message):
        SharedRedis(client, **wait)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        RedisRounds(client, **wait)  # type: ignore[arg-type]
