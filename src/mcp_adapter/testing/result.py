"""A JSON-RPC response as a test sees it, with assertions that print it whole."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from mcp import types


@dataclass(frozen=True, slots=True)
class McpResult:
    """The decoded JSON-RPC response to one request, plus notifications seen meanwhile."""

    message: dict[str, Any]
    notifications: tuple[dict[str, Any], ...] = field(default=())

    @property
    def result(self) -> dict[str, Any]:
        """The ``result`` object; a response without one (a protocol error) fails the test.

        It raises ``AssertionError`` with the whole message, so ``result.result["tools"]``
        needs no ``None`` check; test for a protocol error with ``error`` instead.
        """
        value = self.message.get("result")
        if not isinstance(value, dict):
            self._fail(
                "expected a result, got a protocol error"
                if self.error is not None
                else "expected a result, got a response without one"
            )
        return value

    @property
    def _result(self) -> dict[str, Any]:
        value = self.message.get("result")
        return value if isinstance(value, dict) else {}

    @property
    def error(self) -> dict[str, Any] | None:
        value = self.message.get("error")
        return value if isinstance(value, dict) else None

    @property
    def is_error(self) -> bool:
        """A protocol error, or a tool result with ``isError: true``."""
        return self.error is not None or bool(self._result.get("isError"))

    @property
    def texts(self) -> list[str]:
        """The text of every text content block (tool results, prompt messages, resources)."""
        result = self._result
        blocks: list[Any] = list(result.get("content") or [])
        blocks += [m.get("content") for m in result.get("messages") or []]
        blocks += list(result.get("contents") or [])
        return [b["text"] for b in blocks if isinstance(b, Mapping) and "text" in b]

    @property
    def structured(self) -> Any:
        return self._result.get("structuredContent")

    def _fail(self, why: str) -> NoReturn:
        raise AssertionError(f"{why}\nmessage:\n{json.dumps(self.message, indent=2)}")

    def assertOk(self) -> McpResult:
        """Assert neither a protocol error nor ``isError``."""
        if self.error is not None:
            self._fail("expected a result, got a protocol error")
        if self.is_error:
            self._fail("expected success, got isError: true")
        return self

    def assertError(self, text: str | None = None, *, code: int | None = None) -> McpResult:
        """Assert a protocol error or ``isError``; with ``text``, that it says so; with
        ``code``, that it is a protocol error with that JSON-RPC code."""
        if not self.is_error:
            self._fail("expected an error, got success")
        if code is not None:
            if self.error is None:
                self._fail(f"expected a protocol error {code}, got isError: true")
            if self.error.get("code") != code:
                self._fail(f"expected a protocol error {code}")
        if text is not None:
            said = [self.error.get("message", "")] if self.error else self.texts
            if not any(text in item for item in said):
                self._fail(f"expected the error to contain {text!r}")
        return self

    def assertTextContains(self, text: str) -> McpResult:
        if not any(text in item for item in self.texts):
            self._fail(f"expected some text content to contain {text!r}")
        return self

    def assertStructured(self, value: Any) -> McpResult:
        if self._result.get("structuredContent", _ABSENT) != value:
            self._fail(f"expected structuredContent == {value!r}")
        return self


_ABSENT = object()


def texts_of(
    result: types.CallToolResult | types.GetPromptResult | types.ReadResourceResult,
) -> list[str]:
    """The text of every text block of a result the SDK's ``Client`` returned: a tool's
    content, a prompt's messages, a resource's contents (``McpResult.texts`` for the SDK's).

    >>> from mcp import types
    >>> texts_of(types.CallToolResult(content=[types.TextContent(type="text", text="hi")]))
    ['hi']
    """
    if isinstance(result, types.CallToolResult):
        blocks: list[object] = list(result.content)
    elif isinstance(result, types.GetPromptResult):
        blocks = [message.content for message in result.messages]
    else:
        blocks = list(result.contents)
    return [
        block.text
        for block in blocks
        if isinstance(block, types.TextContent | types.TextResourceContents)
    ]
