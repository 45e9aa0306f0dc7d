"""ASGI wrappers: a 2025-11-25 body that is no valid JSON-RPC request is answered ``-32600``.

:class:`RefuseInvalidIds` turns a request with an invalid ``id`` (which the SDK
would take for a notification and never answer) into JSON the SDK refuses, and
:class:`CleanInvalidRequests` turns the SDK's refusal of such JSON into the
JSON-RPC 2.0 answer.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable

from mcp.types import INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_adapter.serving.ids import NO_MESSAGE, has_invalid_id

_INVALID_REQUEST_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": INVALID_REQUEST, "message": "Invalid Request"},
    },
    separators=(",", ":"),
).encode()
_HELD_BODY_LIMIT = 16 * 1024
"""The largest 400 answer :class:`CleanInvalidRequests` holds back (the SDK's are ~1 KiB)."""


class CleanInvalidRequests:
    """ASGI wrapper: the SDK's answer to JSON that is no JSON-RPC message, made clean and standard.

    The SDK's 2025-11-25 transport answers such a body with ``400`` and
    ``-32602 "Validation error: "`` followed by pydantic's report (model names,
    ``input_value=...`` echoing the request, documentation URLs). This wrapper
    holds back a ``400`` ``application/json`` answer that declares at most
    ``_HELD_BODY_LIMIT`` bytes, and when it is that error (``id: null``) sends
    the JSON-RPC 2.0 answer instead: ``-32600 "Invalid Request"``, ``id: null``,
    still ``400``. Every other answer passes unchanged; nothing larger is held.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        held: list[bytes] = []
        size = 0

        async def app_send(message: Message) -> None:
            nonlocal start, size
            if message["type"] == "http.response.start" and _small_json_error(message):
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            body = bytes(message.get("body", b""))
            held.append(body)
            size += len(body)
            if size > _HELD_BODY_LIMIT:  # more than declared: let it through as it is
                await send(start)
                start = None
                await send({**message, "body": b"".join(held)})
                return
            if message.get("more_body", False):
                return
            held_start, whole = start, b"".join(held)
            start = None
            if _is_validation_error(whole):
                whole = _INVALID_REQUEST_BODY
            await send({**held_start, "headers": _with_length(held_start["headers"], len(whole))})
            await send({"type": "http.response.body", "body": whole})

        await self.app(scope, receive, app_send)


def _small_json_error(start: Message) -> bool:
    if start.get("status") != 400:
        return False
    headers = {bytes(k).lower(): bytes(v) for k, v in start.get("headers") or ()}
    length = headers.get(b"content-length", b"")
    return (
        headers.get(b"content-type", b"").startswith(b"application/json")
        and length.isdigit()
        and int(length) <= _HELD_BODY_LIMIT
    )


def _is_validation_error(body: bytes) -> bool:
    """Whether ``body`` is the SDK's ``-32602 "Validation error: ..."`` with ``id: null``."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict) or message.get("id", 0) is not None:
        return False
    error = message.get("error")
    return (
        isinstance(error, dict)
        and error.get("code") == INVALID_PARAMS
        and str(error.get("message", "")).startswith("Validation error")
    )


def _with_length(headers: Iterable[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    kept = [(bytes(k), bytes(v)) for k, v in headers if bytes(k).lower() != b"content-length"]
    return [*kept, (b"content-length", str(length).encode())]


_PROTOCOL_VERSION_HEADER = b"mcp-protocol-version"


class RefuseInvalidIds:
    """ASGI wrapper: a 2025-11-25 request whose ``id`` is no valid id is refused, not dropped.

    The SDK's 2025-11-25 path reads ``{"id": true, "method": ...}`` (or an ``id``
    that is a list, an object, ``null``, a fraction) as a notification and
    answers ``202`` with no body (see :mod:`mcp_adapter.serving.ids`). This
    wrapper reads the body of such a POST first, and when it is a JSON object
    with an invalid ``id`` hands the SDK ``null`` in its place: the SDK then
    refuses it, after its own checks (``Host``, ``Accept``, ``Content-Type``),
    as JSON that is no JSON-RPC message, which :class:`CleanInvalidRequests`
    answers ``400`` with ``-32600 Invalid Request`` and ``id: null``. Other
    bodies reach the SDK as they came.

    Nothing larger than ``max_body_size`` is held: a body that declares more,
    or streams past it, goes on to the SDK as it arrives (which refuses it with
    ``413``). The 2026-07-28 path (a ``Mcp-Protocol-Version`` header the
    handshake does not know) and other methods pass untouched: that path
    answers invalid ids itself.
    """

    def __init__(self, app: ASGIApp, max_body_size: int) -> None:
        self.app = app
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._screened(scope):
            await self.app(scope, receive, send)
            return
        held: deque[Message] = deque()
        size = 0
        while True:
            message = await receive()
            held.append(message)
            if message["type"] != "http.request":  # a disconnect: the SDK finds out itself
                break
            size += len(message.get("body", b""))
            if size > self.max_body_size:  # too large to hold: the SDK refuses it as it streams
                break
            if not message.get("more_body", False):
                body = b"".join(bytes(m.get("body", b"")) for m in held)
                whole = NO_MESSAGE.encode() if has_invalid_id(body) else body
                held = deque([{"type": "http.request", "body": whole, "more_body": False}])
                break

        async def replay() -> Message:
            return held.popleft() if held else await receive()

        await self.app(scope, replay, send)

    def _screened(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return False
        version: bytes | None = None
        for key, value in scope.get("headers") or ():
            name = bytes(key).lower()
            if name == b"content-length":
                length = bytes(value)
                if not length.isdigit() or int(length) > self.max_body_size:
                    return False
            elif name == _PROTOCOL_VERSION_HEADER and version is None:  # the first, as the SDK
                version = bytes(value)
        return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
