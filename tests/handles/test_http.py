"""State handles over real HTTP on 127.0.0.1 (uvicorn in a thread), two bearer tokens, both
protocol eras: a handle is its minter's only, and another principal presenting it gets,
byte for byte, the answer to a handle that never existed."""

from __future__ import annotations

import json
import secrets
from typing import Any

import httpx2
import pytest
from mcp.server.auth.provider import AccessToken

from mcp_adapter.serving import BearerAuth, HttpLimits, http_app
from tests.handles.cart import Ledger, Shop, shop_container
from tests.reliability.fuzz import LEGACY, MODERN, envelope
from tests.reliability.transports import decoded, http_headers
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

BOUND = 30.0


class Tokens:
    """``user-<n>`` is a valid token of principal ``user-<n>``."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token.startswith("user-"):
            return None
        return AccessToken(token=token, client_id="shop", subject=token, scopes=[])


async def _call(
    http: httpx2.AsyncClient, url: str, era: str, token: str, name: str, arguments: Any
) -> tuple[dict[str, Any], bytes]:
    """The JSON-RPC answer, and the raw bytes of its ``result``."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if era == MODERN:
        params["_meta"] = envelope()
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    text = json.dumps(body)
    headers = http_headers(text, era)
    headers["authorization"] = f"Bearer {token}"
    response = await http.post(url, content=text, headers=headers)
    assert response.status_code == 200, response.text
    message = decoded(response)
    assert message is not None, response.text
    assert "result" in message, message
    return message["result"], json.dumps(message["result"], sort_keys=True).encode()


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_over_http_a_handle_is_its_minters_only(era: str) -> None:
    ledger = Ledger()
    limits = HttpLimits(max_handles_per_client=2)
    app = http_app(
        Shop, shop_container(ledger), json_response=True, auth=BearerAuth(Tokens()), limits=limits
    )
    with serve_app(app) as base:
        url = f"{base}/mcp"
        async with httpx2.AsyncClient(timeout=BOUND) as http:
            opened, _ = await _call(http, url, era, "user-ada", "open_cart", {})
            cart = opened["content"][0]["text"]
            added, _ = await _call(
                http, url, era, "user-ada", "add_item", {"cart": cart, "item": "tea"}
            )
            assert added["content"][0]["text"] == "tea"
            again, _ = await _call(
                http, url, era, "user-ada", "add_item", {"cart": cart, "item": "jam"}
            )
            assert again["content"][0]["text"] == "tea,jam"  # one cart across requests

            stolen, stolen_bytes = await _call(
                http, url, era, "user-bob", "add_item", {"cart": cart, "item": "nails"}
            )
            guess = secrets.token_urlsafe(24)
            _, guessed_bytes = await _call(
                http, url, era, "user-bob", "add_item", {"cart": guess, "item": "nails"}
            )
            assert stolen_bytes == guessed_bytes
            assert stolen["isError"] is True
            assert stolen["content"][0]["text"] == "Unknown state handle in argument 'cart'"

            await _call(http, url, era, "user-ada", "open_cart", {})
            capped, _ = await _call(http, url, era, "user-ada", "open_cart", {})
            assert capped["isError"] is True
            assert capped["content"][0]["text"].startswith("Too many open state handles")
            bobs, _ = await _call(http, url, era, "user-bob", "open_cart", {})
            assert "isError" not in bobs or bobs["isError"] is False

            kept, _ = await _call(
                http, url, era, "user-ada", "add_item", {"cart": cart, "item": "milk"}
            )
            assert kept["content"][0]["text"] == "tea,jam,milk"
            assert ledger.closed == []
    assert ledger.closed == [cart]  # the app's shutdown finalized the open handles
