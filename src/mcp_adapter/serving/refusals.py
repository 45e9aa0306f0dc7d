"""The HTTP answer for a request a limit refuses: a JSON-RPC error with no id, as the SDK sends."""

from __future__ import annotations

import json

from starlette.responses import Response


def jsonrpc_refusal(status: int, code: int, message: str) -> Response:
    """``status`` with ``{"jsonrpc": "2.0", "id": null, "error": {code, message}}``."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Response(
        json.dumps(body, separators=(",", ":")), status_code=status, media_type="application/json"
    )
