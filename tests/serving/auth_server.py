"""A small authorization server for the verifier tests: a JWKS endpoint, an RFC 7662
introspection endpoint, and endpoints that misbehave (slow, dripping, failing, huge).

It runs in a uvicorn thread on 127.0.0.1 (``tests/serving/harness.serve_app``); the
tests change what it publishes and read what it saw through :class:`AuthServer`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.serving.harness import serve_app

ISSUER = "https://auth.example.test"
AUDIENCE = "mcp-tests"
CLIENT_ID = "mcp-server"
CLIENT_SECRET = "s3cret-of-the-server"
DEEP = 200_000
"""How deep the ``/deep`` endpoint nests its JSON: far past Python's recursion limit."""


@dataclass
class SigningKey:
    kid: str
    private: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
    algorithm: str

    @classmethod
    def rsa(cls, kid: str) -> SigningKey:
        return cls(kid, rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256")

    @classmethod
    def ec(cls, kid: str) -> SigningKey:
        return cls(kid, ec.generate_private_key(ec.SECP256R1()), "ES256")

    def public_jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        if isinstance(public, rsa.RSAPublicKey):
            jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
        else:
            jwk = ECAlgorithm.to_jwk(public, as_dict=True)
        return {**jwk, "kid": self.kid, "use": "sig", "alg": self.algorithm}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        return jwt.encode(
            claims, self.private, algorithm=self.algorithm, headers={"kid": self.kid, **header}
        )


def claims(**changes: Any) -> dict[str, Any]:
    """Claims of a good token (valid for an hour), with ``changes`` (``None`` removes one)."""
    now = int(time.time())
    base: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "ada",
        "client_id": "notebook",
        "scope": "read write",
        "iat": now,
        "exp": now + 3600,
    }
    base.update(changes)
    return {key: value for key, value in base.items() if value is not None}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_with_secret(secret: bytes, header: dict[str, Any], body: dict[str, Any]) -> str:
    """An HS256 token signed by hand (pyjwt refuses a PEM key as an HMAC secret)."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}"
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


@dataclass
class AuthServer:
    """What the endpoints publish and answer, and what they saw."""

    url: str = ""
    keys: list[SigningKey] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Introspection answers by token; any other token is ``{"active": false}``."""
    jwks_calls: int = 0
    introspections: list[dict[str, Any]] = field(default_factory=list)
    """Per introspection request: ``form`` and ``authorization``."""
    in_flight: int = 0
    most_in_flight: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    """Set to let the slow endpoints finish (the fixture sets it before stopping)."""

    def endpoint(self, path: str) -> str:
        return f"{self.url}{path}"

    def reset(self) -> None:
        self.keys.clear()
        self.answers.clear()
        self.jwks_calls = 0
        self.introspections.clear()
        self.in_flight = self.most_in_flight = 0

    def new_token(self, **answer: Any) -> str:
        """An opaque token the introspection endpoint answers ``{"active": true, ...}`` for."""
        token = uuid.uuid4().hex
        now = int(time.time())
        self.answers[token] = {
            "active": True,
            "client_id": "notebook",
            "sub": "ada",
            "scope": "read write",
            "iss": ISSUER,
            "aud": AUDIENCE,
            "exp": now + 3600,
            **answer,
        }
        return token

    async def _wait(self) -> None:
        while not self.release.is_set():
            await anyio.sleep(0.02)

    async def jwks(self, _: Request) -> Response:
        self.jwks_calls += 1
        return JSONResponse({"keys": [key.public_jwk() for key in self.keys]})

    async def introspect(self, request: Request) -> Response:
        form = dict(await request.form())
        self.introspections.append(
            {"form": form, "authorization": request.headers.get("authorization")}
        )
        if not self._client_authenticated(request, form):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if request.query_params.get("slow"):
                await self._wait()
            return JSONResponse(self.answers.get(str(form.get("token")), {"active": False}))
        finally:
            self.in_flight -= 1

    @staticmethod
    def _client_authenticated(request: Request, form: dict[str, Any]) -> bool:
        basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if request.headers.get("authorization") == f"Basic {basic}":
            return True
        return form.get("client_id") == CLIENT_ID and form.get("client_secret") == CLIENT_SECRET

    async def slow(self, _: Request) -> Response:
        self.jwks_calls += 1
        await self._wait()
        return JSONResponse({"keys": []})

    async def drip(self, _: Request) -> Response:
        self.jwks_calls += 1

        async def body() -> AsyncIterator[bytes]:
            yield b'{"keys": ['
            while not self.release.is_set():
                yield b" "
                await anyio.sleep(0.02)
            yield b"]}"

        return StreamingResponse(body(), media_type="application/json")

    async def failing(self, _: Request) -> Response:
        self.jwks_calls += 1
        return JSONResponse({"error": "down for maintenance"}, status_code=503)

    async def garbage(self, _: Request) -> Response:
        self.jwks_calls += 1
        return Response("<html>not json</html>", media_type="text/html")

    async def huge(self, _: Request) -> Response:
        self.jwks_calls += 1
        return Response(b'{"keys": [' + b" " * (1024 * 1024) + b"]}", media_type="application/json")

    async def deep(self, _: Request) -> Response:
        """JSON nested 200,000 deep, under the verifiers' 256 KiB cap on an answer."""
        self.jwks_calls += 1
        return Response(b'{"keys": ' + b"[" * DEEP, media_type="application/json")

    def app(self) -> Starlette:
        routes = [
            Route("/jwks", self.jwks),
            Route("/introspect", self.introspect, methods=["POST"]),
            Route("/slow", self.slow, methods=["GET", "POST"]),
            Route("/drip", self.drip, methods=["GET", "POST"]),
            Route("/failing", self.failing, methods=["GET", "POST"]),
            Route("/garbage", self.garbage, methods=["GET", "POST"]),
            Route("/huge", self.huge, methods=["GET", "POST"]),
            Route("/deep", self.deep, methods=["GET", "POST"]),
        ]
        return Starlette(routes=routes)


@contextmanager
def auth_server() -> Iterator[AuthServer]:
    server = AuthServer()
    with serve_app(server.app()) as url:
        server.url = url
        try:
            yield server
        finally:
            server.release.set()


def closed_port_url(path: str) -> str:
    """A loopback URL nobody listens on (the port was bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"
