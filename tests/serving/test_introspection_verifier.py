"""``IntrospectionVerifier`` against an RFC 7662 endpoint on 127.0.0.1: client
authentication, what an answer must say, the cache (by hash, bounded in entries and in
time, never past the token's expiry), an endpoint that is down, slow or flooded, and the
whole path through ``http_app(auth=BearerAuth(...))`` with the SDK's client."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest

from mcp_adapter import BearerAuth, http_app
from mcp_adapter.serving import IntrospectionVerifier
from tests.serving.apps import AuditServer, build_container
from tests.serving.auth_server import (
    AUDIENCE,
    CLIENT_ID,
    CLIENT_SECRET,
    ISSUER,
    AuthServer,
    auth_server,
    closed_port_url,
)
from tests.serving.clients import CALL_TIMEOUT, MODES, bearer_pings, connect
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio
BOUND = 30  # seconds: a safety bound on every wait, never a measured threshold


@pytest.fixture(scope="module")
def shared_server() -> Iterator[AuthServer]:
    with auth_server() as server:
        yield server


@pytest.fixture
def server(shared_server: AuthServer) -> AuthServer:
    shared_server.reset()
    return shared_server


def verifier(
    server: AuthServer, path: str = "/introspect", **options: Any
) -> IntrospectionVerifier:
    options.setdefault("client_secret", CLIENT_SECRET)
    return IntrospectionVerifier(server.endpoint(path), client_id=CLIENT_ID, **options)


async def verify(check: IntrospectionVerifier, token: str) -> Any:
    with anyio.fail_after(BOUND):
        return await check.verify_token(token)


async def test_an_active_token_becomes_an_access_token(server: AuthServer) -> None:
    token = server.new_token(exp=2_000_000_000)
    access = await verify(verifier(server), token)
    assert access is not None
    assert (access.subject, access.client_id, access.scopes) == (
        "ada",
        "notebook",
        ["read", "write"],
    )
    assert (access.token, access.expires_at) == (token, 2_000_000_000)
    assert access.claims is not None
    assert access.claims["iss"] == ISSUER
    (seen,) = server.introspections
    assert seen["form"] == {"token": token, "token_type_hint": "access_token"}
    basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    assert seen["authorization"] == f"Basic {basic}"


async def test_client_secret_post_sends_the_credentials_in_the_form(server: AuthServer) -> None:
    token = server.new_token()
    assert await verify(verifier(server, client_auth="client_secret_post"), token) is not None
    (seen,) = server.introspections
    assert seen["authorization"] is None
    assert seen["form"]["client_id"] == CLIENT_ID
    assert seen["form"]["client_secret"] == CLIENT_SECRET


async def test_a_wrong_client_secret_is_refused_by_the_endpoint(server: AuthServer) -> None:
    assert await verify(verifier(server, client_secret="guess"), server.new_token()) is None


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"active": False}, "inactive"),
        ({"active": "true"}, "active is not the boolean true"),
        ({"exp": int(time.time()) - 10}, "expired though active"),
        ({"nbf": int(time.time()) + 3600}, "not yet valid"),
        ({"exp": "tomorrow"}, "an expiry that is not a number"),
        ({"token_type": "refresh_token"}, "a refresh token"),
        ({"scope": 42}, "a scope that is neither a string nor a list"),
    ],
)
async def test_answers_that_do_not_vouch_for_the_token_refuse_it(
    server: AuthServer, answer: dict[str, Any], why: str
) -> None:
    assert await verify(verifier(server), server.new_token(**answer)) is None, why


async def test_an_unknown_token_is_inactive(server: AuthServer) -> None:
    assert await verify(verifier(server), "never-issued") is None


async def test_issuer_audience_and_resource_are_checked_when_configured(
    server: AuthServer,
) -> None:
    token = server.new_token(aud=[AUDIENCE, "https://mcp.example.test/mcp"])
    assert await verify(verifier(server, issuer=ISSUER, audience=AUDIENCE), token) is not None
    assert await verify(verifier(server, issuer="https://other.example.test"), token) is None
    assert await verify(verifier(server, audience="another-service"), token) is None
    with_resource = verifier(server, resource="https://mcp.example.test/mcp")
    access = await verify(with_resource, token)
    assert access is not None
    assert access.resource == "https://mcp.example.test/mcp"
    assert await verify(verifier(server, resource="https://other.example.test/mcp"), token) is None


async def test_answers_are_cached_under_a_hash_of_the_token(server: AuthServer) -> None:
    check = verifier(server)
    token = server.new_token()
    first = await verify(check, token)
    second = await verify(check, token)
    assert first == second
    assert second is not None
    assert second.token == token
    assert len(server.introspections) == 1
    stored = repr(check._state._entries)
    assert token not in stored  # neither as a key nor inside the cached answer


async def test_refusals_are_not_cached(server: AuthServer) -> None:
    check = verifier(server)
    await verify(check, "not-yet-issued")
    server.answers["not-yet-issued"] = {"active": True, "client_id": "c", "scope": "read"}
    assert await verify(check, "not-yet-issued") is not None
    assert len(server.introspections) == 2


async def test_the_cache_is_bounded_in_entries(server: AuthServer) -> None:
    check = verifier(server, cache_size=2)
    first, second, third = (server.new_token() for _ in range(3))
    for token in (first, second, first, third):  # third evicts second, the least recent
        assert await verify(check, token) is not None
    assert len(server.introspections) == 3
    assert await verify(check, first) is not None
    assert len(server.introspections) == 3
    assert await verify(check, second) is not None
    assert len(server.introspections) == 4


async def test_the_cache_is_bounded_in_time(server: AuthServer) -> None:
    check = verifier(server, cache_ttl=0)
    token = server.new_token()
    await verify(check, token)
    await verify(check, token)
    assert len(server.introspections) == 2


async def test_an_answer_is_never_cached_past_the_tokens_expiry(server: AuthServer) -> None:
    check = verifier(server, cache_ttl=3600)
    expiry = int(time.time()) + 2
    token = server.new_token(exp=expiry)
    assert await verify(check, token) is not None
    with anyio.fail_after(BOUND):
        while time.time() <= expiry:
            await anyio.sleep(0.1)
    assert await verify(check, token) is None  # asked again: the answer has expired
    assert len(server.introspections) == 2


@pytest.mark.parametrize("path", ["/introspect?slow=1", "/drip", "/failing", "/garbage", "/huge"])
async def test_an_endpoint_that_misbehaves_means_401_not_a_crash(
    server: AuthServer, path: str
) -> None:
    check = verifier(server, path, timeout=0.2)
    assert await verify(check, server.new_token()) is None


async def test_an_answer_nested_too_deep_means_401_and_asking_again(server: AuthServer) -> None:
    """An answer nested far past Python's recursion limit (inside the 256 KiB cap) refuses
    the token over HTTP; the next request with it asks again."""
    app = http_app(AuditServer, build_container(), auth=BearerAuth(verifier(server, "/deep")))
    assert await bearer_pings(app, server.new_token(), 2) == [401, 401]
    assert server.jwks_calls == 2


async def test_an_endpoint_that_is_down_means_401() -> None:
    check = IntrospectionVerifier(
        closed_port_url("/introspect"), client_id=CLIENT_ID, client_secret=CLIENT_SECRET, timeout=2
    )
    assert await verify(check, "token") is None


async def test_a_flood_of_tokens_keeps_few_requests_in_flight() -> None:
    with auth_server() as own:  # its own endpoint: no request of another test is held there
        check = verifier(own, "/introspect?slow=1", max_concurrent=2, timeout=BOUND)
        tokens = [own.new_token(sub=f"user-{number}") for number in range(10)]
        results: list[Any] = []

        async def one(token: str) -> None:
            results.append(await verify(check, token))

        async with anyio.create_task_group() as tasks:
            for token in tokens:
                tasks.start_soon(one, token)
            with anyio.fail_after(BOUND):
                while own.in_flight < 2:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.5)  # room for a request beyond the two places to arrive
            assert (own.in_flight, len(own.introspections)) == (2, 2)
            own.release.set()  # the endpoint answers: the others go through, two at a time
    assert len(results) == 10
    assert None not in results
    assert own.most_in_flight == 2
    assert len(own.introspections) == 10


async def test_a_huge_token_is_refused_without_asking(server: AuthServer) -> None:
    assert await verify(verifier(server), "x" * 1_000_000) is None
    assert verifier(server, max_token_size=10).max_token_size == 10
    assert await verify(verifier(server, max_token_size=10), server.new_token()) is None
    assert server.introspections == []


def test_the_configuration_is_checked(server: AuthServer) -> None:
    with pytest.raises(ValueError, match="client_secret"):
        verifier(server, client_secret="")
    with pytest.raises(ValueError, match="https://"):
        IntrospectionVerifier("http://auth.example.test/i", client_id="a", client_secret="b")
    with pytest.raises(ValueError, match="client_auth"):
        verifier(server, client_auth="private_key_jwt")
    with pytest.raises(ValueError, match="cache_size"):
        verifier(server, cache_size=-1)
    assert CLIENT_SECRET not in repr(verifier(server))


@pytest.mark.parametrize("mode", MODES)
async def test_end_to_end_through_bearer_auth(server: AuthServer, mode: str) -> None:
    app = http_app(
        AuditServer, build_container(), auth=BearerAuth(verifier(server), required_scopes=["read"])
    )
    token = server.new_token()
    with serve_app(app) as base:
        async with connect(f"{base}/mcp", mode, token=token) as client:
            who = await client.call_tool("whoami", {})
        assert who.structured_content == {
            "subject": "ada",
            "scopes": ["read", "write"],
            "scheme": "bearer",
        }
        server.answers[token]["active"] = False  # revoked: refused once the cache lets go
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            refused = await http.post(
                f"{base}/mcp", json=ping, headers={"Authorization": "Bearer never-issued"}
            )
            assert refused.status_code == 401
