"""A demo bearer-token verifier: one token, from ``MCP_DEMO_TOKEN``.

Real deployments verify tokens an authorization server issued (JWT signature
and audience, or RFC 7662 introspection); the SDK's ``TokenVerifier``
protocol is the same either way: a token in, an ``AccessToken`` or ``None`` out.
"""

from __future__ import annotations

import hmac
import os
import secrets
import sys

from mcp.server.auth.provider import AccessToken

TOKEN_ENV = "MCP_DEMO_TOKEN"


class DemoTokenVerifier:
    """Accepts exactly ``token``; the caller is ``demo-user`` with scope ``demo``."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return None
        return AccessToken(
            token=token,
            client_id="demo-client",
            subject="demo-user",
            scopes=["demo"],
        )


def verifier() -> DemoTokenVerifier:
    """The verifier ``mcp-adapter serve --auth examples.demo.auth:verifier`` uses.

    Reads the token from ``MCP_DEMO_TOKEN``; without it, makes one up and prints it.
    """
    token = os.environ.get(TOKEN_ENV)
    if not token:
        token = secrets.token_urlsafe(16)
        os.environ[TOKEN_ENV] = token  # the same token in every --workers process
        print(f"  demo token ({TOKEN_ENV} was not set): {token}", file=sys.stderr, flush=True)
    return DemoTokenVerifier(token)
