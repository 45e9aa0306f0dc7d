"""``JwtVerifier`` against a JWKS endpoint on 127.0.0.1: what it accepts, every forgery and
misdated token it refuses, key rotation, an issuer that is down or slow, and the whole
path through ``http_app(auth=BearerAuth(...))`` with the SDK's client."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import jwt
import pytest

from mcp_adapter import BearerAuth, http_app
from mcp_adapter.serving import JwtVerifier
from tests.serving.apps import AuditServer, build_container
from tests.serving.auth_server import (
    AUDIENCE,
    ISSUER,
    AuthServer,
    SigningKey,
    auth_server,
    b64,
    claims,
    closed_port_url,
    hs256_with_secret,
)
from tests.serving.clients import CALL_TIMEOUT, MODES, bearer_pings, connect
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio
BOUND = 30  # seconds: a safety bound on every wait, never a measured threshold


@pytest.fixture(scope="module")
def shared_server() -> Iterator[AuthServer]:
    with auth_server() as server:
        yield server


@pytest.fixture(scope="module")
def rsa_key() -> SigningKey:
    return SigningKey.rsa("key-1")


@pytest.fixture
def server(shared_server: AuthServer, rsa_key: SigningKey) -> AuthServer:
    shared_server.reset()
    shared_server.keys.append(rsa_key)
    return shared_server


def verifier(server: AuthServer, path: str = "/jwks", **options: Any) -> JwtVerifier:
    return JwtVerifier(server.endpoint(path), issuer=ISSUER, audience=AUDIENCE, **options)


async def verify(check: JwtVerifier, token: str) -> Any:
    with anyio.fail_after(BOUND):
        return await check.verify_token(token)


async def test_a_good_token_becomes_an_access_token(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    token = rsa_key.sign(claims(exp=2_000_000_000))
    access = await verify(verifier(server), token)
    assert access is not None
    assert (access.subject, access.client_id, access.scopes) == (
        "ada",
        "notebook",
        ["read", "write"],
    )
    assert access.token == token
    assert access.expires_at == 2_000_000_000
    assert access.claims is not None
    assert access.claims["iss"] == ISSUER
    assert access.resource is None


async def test_scopes_come_from_scp_as_a_list_and_client_id_from_azp(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    token = rsa_key.sign(claims(scope=None, scp=["read", "admin"], client_id=None, azp="app"))
    access = await verify(verifier(server), token)
    assert access is not None
    assert (access.scopes, access.client_id) == (["read", "admin"], "app")


async def test_keys_are_fetched_once_for_many_tokens(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    check = verifier(server)
    for number in range(5):
        assert await verify(check, rsa_key.sign(claims(sub=f"user-{number}"))) is not None
    assert server.jwks_calls == 1


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"exp": int(time.time()) - 3600}, "expired"),
        ({"nbf": int(time.time()) + 3600}, "not yet valid"),
        ({"iat": int(time.time()) + 3600}, "issued in the future"),
        ({"aud": "another-service"}, "wrong audience"),
        ({"aud": None}, "no audience"),
        ({"iss": "https://evil.example.test"}, "wrong issuer"),
        ({"iss": None}, "no issuer"),
        ({"exp": None}, "no expiry"),
        ({"scope": 42}, "a scope that is not a string"),
        ({"exp": "9999999999"}, "an expiry that is a string"),
        ({"exp": str(int(time.time()) + 3600)}, "an expiry in date, but a string"),
        ({"nbf": True}, "a start that is a bool"),
        ({"iat": str(int(time.time()))}, "an issue time that is a string"),
    ],
)
async def test_misdated_or_misaddressed_tokens_are_refused(
    server: AuthServer, rsa_key: SigningKey, changes: dict[str, Any], why: str
) -> None:
    assert await verify(verifier(server), rsa_key.sign(claims(**changes))) is None, why


async def test_numeric_dates_may_have_fractions(server: AuthServer, rsa_key: SigningKey) -> None:
    now = time.time()
    token = rsa_key.sign(claims(iat=now - 0.5, nbf=now - 0.5, exp=now + 3600.5))
    assert await verify(verifier(server), token) is not None


async def test_leeway_absorbs_a_clock_difference(server: AuthServer, rsa_key: SigningKey) -> None:
    just_expired = rsa_key.sign(claims(exp=int(time.time()) - 5))
    assert await verify(verifier(server, leeway=60), just_expired) is not None
    assert await verify(verifier(server, leeway=0), just_expired) is None


async def test_an_audience_list_needs_one_match(server: AuthServer, rsa_key: SigningKey) -> None:
    token = rsa_key.sign(claims(aud=["other", AUDIENCE]))
    assert await verify(verifier(server), token) is not None
    check = JwtVerifier(server.endpoint("/jwks"), issuer=ISSUER, audience=["x", "other"])
    assert await verify(check, token) is not None


async def test_the_rfc_8707_resource_must_be_in_the_audience(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    resource = "https://MCP.example.test/mcp/"
    check = JwtVerifier(server.endpoint("/jwks"), issuer=ISSUER, resource=resource)
    access = await verify(check, rsa_key.sign(claims(aud=["https://mcp.example.test/mcp"])))
    assert access is not None
    assert access.resource == resource
    assert await verify(check, rsa_key.sign(claims(aud="https://other.example.test/mcp"))) is None
    assert await verify(check, rsa_key.sign(claims(aud=AUDIENCE))) is None


async def test_a_signature_by_another_key_is_refused(server: AuthServer) -> None:
    impostor = SigningKey.rsa("key-1")  # the published kid, another private key
    assert await verify(verifier(server), impostor.sign(claims())) is None


async def test_alg_none_is_refused(server: AuthServer) -> None:
    unsigned = jwt.encode(claims(), None, algorithm="none", headers={"kid": "key-1"})
    header = b64(json.dumps({"alg": "none", "kid": "key-1"}).encode())
    forged = f"{header}.{unsigned.split('.')[1]}."
    check = verifier(server)
    assert await verify(check, unsigned) is None
    assert await verify(check, forged) is None


async def test_hs256_signed_with_the_public_key_is_refused(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    header = {"alg": "HS256", "typ": "JWT", "kid": "key-1"}
    for secret in (rsa_key.public_pem(), str(rsa_key.public_jwk()["n"]).encode()):
        confused = hs256_with_secret(secret, header, claims())
        assert await verify(verifier(server), confused) is None
    with pytest.raises(ValueError, match="HS256"):
        verifier(server, algorithms=["RS256", "HS256"])
    with pytest.raises(ValueError, match="none"):
        verifier(server, algorithms=["none"])


async def test_a_key_is_used_only_for_its_algorithm(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    ec_key = SigningKey.ec("ec-1")
    server.keys.append(ec_key)
    check = verifier(server)
    assert await verify(check, ec_key.sign(claims())) is not None
    # an ES256 token naming the RSA key, and an RS256 token naming the EC key
    assert await verify(check, ec_key.sign(claims(), kid="key-1")) is None
    assert await verify(check, rsa_key.sign(claims(), kid="ec-1")) is None
    # the key says RS256; PS256 with the same key is another algorithm
    pss = jwt.encode(claims(), rsa_key.private, algorithm="PS256", headers={"kid": "key-1"})
    assert await verify(check, pss) is None


async def test_unknown_key_ids_refetch_at_most_once_per_interval(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    check = verifier(server, key_refresh_interval=3600)
    assert await verify(check, rsa_key.sign(claims())) is not None
    assert server.jwks_calls == 1

    async def forge_many() -> None:  # an attacker naming a new kid in every token
        for _ in range(20):
            assert await verify(check, rsa_key.sign(claims(), kid=uuid.uuid4().hex)) is None

    await forge_many()
    assert server.jwks_calls == 1  # the interval since the last fetch has not passed
    check._keys._attempted -= 3600  # as if the interval had passed
    await forge_many()
    assert server.jwks_calls == 2  # one refetch, then none
    assert await verify(check, rsa_key.sign(claims())) is not None  # known keys still work


async def test_rotated_keys_are_picked_up_and_the_removed_one_refused(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    check = verifier(server, key_refresh_interval=1e-6)
    old_token = rsa_key.sign(claims())
    assert await verify(check, old_token) is not None
    new_key = SigningKey.rsa("key-2")
    server.keys[:] = [new_key]  # rotation: key-1 withdrawn, key-2 published
    assert await verify(check, new_key.sign(claims())) is not None
    assert server.jwks_calls == 2
    assert await verify(check, old_token) is None  # key-1 is gone from the refetched set


async def test_keys_older_than_their_max_age_are_fetched_again(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    check = verifier(server, keys_max_age=1e-6, key_refresh_interval=1e-6)
    assert await verify(check, rsa_key.sign(claims())) is not None
    server.keys.clear()  # the issuer withdrew every key
    assert await verify(check, rsa_key.sign(claims())) is None
    assert server.jwks_calls == 2


@pytest.mark.parametrize("path", ["/slow", "/drip", "/failing", "/garbage", "/huge"])
async def test_an_issuer_that_misbehaves_means_401_not_a_crash(
    server: AuthServer, rsa_key: SigningKey, path: str
) -> None:
    check = verifier(server, path, timeout=0.2, key_refresh_interval=3600)
    token = rsa_key.sign(claims())
    assert await verify(check, token) is None
    assert await verify(check, token) is None  # no second fetch within the interval: no wait
    assert server.jwks_calls == 1


async def test_a_key_set_nested_too_deep_means_401_and_a_fetch_later(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    """A key set nested far past Python's recursion limit (inside the 256 KiB cap on an
    answer) refuses the token over HTTP, and is fetched again once the interval passed."""
    check = verifier(server, "/deep", key_refresh_interval=1e-6)
    app = http_app(AuditServer, build_container(), auth=BearerAuth(check))
    assert await bearer_pings(app, rsa_key.sign(claims()), 2) == [401, 401]
    assert server.jwks_calls == 2


async def test_an_issuer_that_is_down_means_401(rsa_key: SigningKey) -> None:
    check = JwtVerifier(closed_port_url("/jwks"), issuer=ISSUER, audience=AUDIENCE, timeout=2)
    assert await verify(check, rsa_key.sign(claims())) is None


async def test_known_keys_outlive_a_failed_refresh(server: AuthServer, rsa_key: SigningKey) -> None:
    check = verifier(server, keys_max_age=1e-6, key_refresh_interval=1e-6, timeout=0.5)
    assert await verify(check, rsa_key.sign(claims())) is not None
    object.__setattr__(check._keys, "url", server.endpoint("/failing"))
    assert await verify(check, rsa_key.sign(claims())) is not None


async def test_a_huge_token_is_refused_before_anything_is_fetched(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    huge = rsa_key.sign(claims(padding="x" * 1_000_000))
    assert await verify(verifier(server), huge) is None
    assert server.jwks_calls == 0
    for garbage in ("", "not-a-jwt", "a.b.c", "é" * 9000):
        assert await verify(verifier(server), garbage) is None


def test_the_configuration_is_checked(server: AuthServer) -> None:
    with pytest.raises(ValueError, match="audience or resource"):
        JwtVerifier(server.endpoint("/jwks"), issuer=ISSUER)
    with pytest.raises(ValueError, match="https://"):
        JwtVerifier("http://auth.example.test/jwks", issuer=ISSUER, audience=AUDIENCE)
    JwtVerifier("http://auth.internal/jwks", issuer=ISSUER, audience=AUDIENCE, allow_http=True)
    with pytest.raises(ValueError, match="issuer"):
        JwtVerifier(server.endpoint("/jwks"), issuer="", audience=AUDIENCE)
    with pytest.raises(ValueError, match="timeout"):
        verifier(server, timeout=0)
    with pytest.raises(TypeError, match="one string"):
        verifier(server, algorithms="RS256")
    assert verifier(server).audience == (AUDIENCE,)
    assert verifier(server) == verifier(server)


async def serve_and_call(check: JwtVerifier, token: str, mode: str, **auth: Any) -> Any:
    app = http_app(
        AuditServer,
        build_container(),
        auth=BearerAuth(check, required_scopes=["read"], **auth),
    )
    with serve_app(app) as base:
        async with connect(f"{base}/mcp", mode, token=token) as client:
            who = await client.call_tool("whoami", {})
            return who.structured_content


@pytest.mark.parametrize("mode", MODES)
async def test_end_to_end_through_bearer_auth(
    server: AuthServer, rsa_key: SigningKey, mode: str
) -> None:
    who = await serve_and_call(verifier(server), rsa_key.sign(claims()), mode)
    assert who == {"subject": "ada", "scopes": ["read", "write"], "scheme": "bearer"}


async def test_end_to_end_refusals_are_401_and_403(server: AuthServer, rsa_key: SigningKey) -> None:
    app = http_app(
        AuditServer, build_container(), auth=BearerAuth(verifier(server), required_scopes=["read"])
    )
    refused = {
        "expired": rsa_key.sign(claims(exp=int(time.time()) - 3600)),
        "wrong audience": rsa_key.sign(claims(aud="other")),
        "forged": SigningKey.rsa("key-1").sign(claims()),
        "huge": "x" * 20_000,
    }
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with serve_app(app) as base:
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            for why, token in refused.items():
                answer = await http.post(
                    f"{base}/mcp", json=ping, headers={"Authorization": f"Bearer {token}"}
                )
                assert answer.status_code in (401, 431), why
                if answer.status_code == 401:
                    assert answer.headers["www-authenticate"].startswith("Bearer"), why
            no_scope = rsa_key.sign(claims(scope="write"))
            answer = await http.post(
                f"{base}/mcp", json=ping, headers={"Authorization": f"Bearer {no_scope}"}
            )
            assert answer.status_code == 403


async def test_end_to_end_with_the_resource_validated(
    server: AuthServer, rsa_key: SigningKey
) -> None:
    resource = "http://127.0.0.1/mcp"
    check = JwtVerifier(server.endpoint("/jwks"), issuer=ISSUER, resource=resource)
    who = await serve_and_call(
        check,
        rsa_key.sign(claims(aud=resource)),
        "auto",
        resource_server_url=resource,
        issuer_url=ISSUER,
        validate_token_resource=True,
    )
    assert who is not None
    assert who["subject"] == "ada"


def test_importing_the_package_does_not_import_pyjwt() -> None:
    code = "import sys, mcp_adapter, mcp_adapter.serving; print('jwt' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"
