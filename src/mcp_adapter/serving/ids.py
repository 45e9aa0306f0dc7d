"""Requests whose ``id`` is no valid id: the SDK reads them as notifications, so nobody answers.

MCP request ids are strings or integers (JSON-RPC 2.0 would also allow ``null``
and fractions, which MCP rules out). The SDK's message models have no room for
any other ``id``: an object with a string ``method`` and an ``id`` of ``true``,
``[1]``, ``{...}``, ``null`` or ``1.5`` fails the request model and then passes
as a *notification*, the ``id`` dropped as an unknown member, and a notification
is never answered. JSON-RPC wants ``-32600 Invalid Request`` with ``id: null``
for it; the 2026-07-28 HTTP path answers that already, the transports here
make stdio and the 2025-11-25 HTTP path answer the same.

They do it by handing the SDK :data:`NO_MESSAGE` in place of such a message:
JSON that is no JSON-RPC message, which the SDK refuses after its own checks
(headers, size) and which the adapter answers ``-32600``, ``id: null``, as it
answers any JSON that is no message.
"""

from __future__ import annotations

import pydantic_core

NO_MESSAGE = "null"
"""JSON that is no JSON-RPC message: what a request with an invalid id is replaced with."""


def has_invalid_id(text: str | bytes) -> bool:
    """Whether ``text`` is a JSON object with an ``id`` member that is no string or integer.

    Text that is not JSON, or JSON that is not an object, is ``False``: the
    SDK answers it as it is. Booleans are not integers here (JSON tells them
    apart), nor are numbers with a fraction or exponent (``1.0``), which the
    SDK's strict id model refuses.
    """
    try:
        message = pydantic_core.from_json(text)
    except ValueError:  # not JSON, or nested deeper than the parser goes
        return False
    if not isinstance(message, dict) or "id" not in message:
        return False
    request_id = message["id"]
    return type(request_id) is not str and type(request_id) is not int
