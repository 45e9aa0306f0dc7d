"""``redis+sentinel://`` URLs: read as Docket reads them (one ``--redis`` for the task store
and everything else), refused with a clear reason when malformed, their secrets never
printed, and the client they make follows the primary the Sentinels name."""

from __future__ import annotations

import pytest
from docket._redis_sentinel import parse_sentinel_url as docket_parse
from redis.asyncio.sentinel import SentinelConnectionPool

from mcp_adapter.stores.sentinel_url import parse_sentinel_url
from mcp_adapter.stores.shared import (
    COMMAND_TIMEOUT,
    CONNECT_TIMEOUT,
    SharedRedis,
    check_url,
    client_from_url,
    redacted,
)

EXAMPLES = [
    "redis+sentinel://127.0.0.1:26379/mymaster",
    "redis+sentinel://s1,s2:26380,s3/mymaster/3",
    "redis+sentinel://[::1]:26379,s2/mymaster",
    "redis+sentinel://ada:p%40ss@s1:1,s2:2/cache/1?sentinel_password=sp&sentinel_username=su",
    "redis+sentinel://:pw@s1/mymaster?socket_timeout=3&max_connections=9&health_check_interval=7",
    "redis+sentinel://s1/mymaster?db=5&password=ignored",
    "rediss+sentinel://s1,s2/mymaster?ssl_cert_reqs=none&ssl_ca_certs=/ca.pem",
]

MALFORMED = [
    ("redis+sentinel:///mymaster", "at least one Sentinel host"),
    ("redis+sentinel://s1:port/mymaster", "no valid port in the Sentinel member 's1:port'"),
    ("redis+sentinel://s1:26379", "names the service Sentinel monitors"),
    ("redis+sentinel://s1/mymaster/zero", "the database of a Sentinel URL is a number"),
    ("redis+sentinel://s1/mymaster?socket_timeout=soon", "socket_timeout"),
]


@pytest.mark.parametrize("url", EXAMPLES)
def test_a_sentinel_url_reads_as_docket_reads_it(url: str) -> None:
    ours, theirs = parse_sentinel_url(url), docket_parse(url)
    assert ours.sentinels == tuple(theirs.sentinels)
    assert (ours.service, ours.db) == (theirs.service_name, theirs.db)
    assert ours.connection == theirs.connection_kwargs
    assert ours.sentinel == theirs.sentinel_kwargs


@pytest.mark.parametrize(("url", "reason"), MALFORMED)
def test_a_malformed_sentinel_url_is_refused_saying_why(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        docket_parse(url)  # Docket refuses each one too
    with pytest.raises(ValueError) as refused:
        check_url(url)
    assert reason in str(refused.value)


def test_the_parts_of_a_sentinel_url() -> None:
    parsed = parse_sentinel_url(EXAMPLES[3])
    assert parsed.sentinels == (("s1", 1), ("s2", 2))
    assert (parsed.service, parsed.db) == ("cache", 1)
    assert parsed.connection == {"username": "ada", "password": "p@ss"}
    assert parsed.sentinel == {"username": "su", "password": "sp"}


def test_every_password_of_a_sentinel_url_is_redacted() -> None:
    url = "redis+sentinel://ada:secret@[::1]:1,s2/m?sentinel_password=also&password=too"
    shown = redacted(url)
    assert [word for word in ("secret", "also", "too") if word in shown] == []
    assert shown == "redis+sentinel://ada:***@[::1]:1,s2/m?sentinel_password=***&password=***"


def test_a_sentinel_client_asks_the_listed_sentinels_with_the_adapter_timeouts() -> None:
    client = client_from_url("redis+sentinel://127.0.0.1:1,127.0.0.1:2/mymaster/4")
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "mymaster"
    kwargs = pool.connection_kwargs
    assert (kwargs["db"], kwargs["socket_timeout"]) == (4, COMMAND_TIMEOUT)
    assert kwargs["socket_connect_timeout"] == CONNECT_TIMEOUT
    sentinels = pool.sentinel_manager.sentinels
    addresses = [s.connection_pool.connection_kwargs["port"] for s in sentinels]
    assert addresses == [1, 2]
    assert all(
        s.connection_pool.connection_kwargs["socket_connect_timeout"] == CONNECT_TIMEOUT
        for s in sentinels
    )


def test_an_option_of_the_url_wins_over_the_adapter_default() -> None:
    client = client_from_url("redis+sentinel://127.0.0.1:1/mymaster?socket_timeout=0.5")
    assert client.connection_pool.connection_kwargs["socket_timeout"] == 0.5


@pytest.mark.anyio
async def test_no_sentinel_answering_reads_as_unready_not_an_error() -> None:
    shared = SharedRedis.of("redis+sentinel://127.0.0.1:1/mymaster")
    try:
        assert not await shared.reachable()
    finally:
        await shared.aclose()
