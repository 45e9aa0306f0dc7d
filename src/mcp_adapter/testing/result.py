"""A JSON-RPC response as a test sees it, with assertions that print it whole."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class McpResult:
    """The decoded JSON-RPC response to one request, plus notifications seen meanwhile."""

    message: dict[str, Any]
    notifications: tuple[dict[str, Any], ...] = field(default=())

    @property
    def result(self) -> dict[str, Any] | None:
        value = self.message.get("result")
        return value if isinstance(value, dict) else None

    @property
    def error(self) -> dict[str, Any] | None:
        value = self.message.get("error")
        return value if isinstance(value, dict) else None

    @property
    def is_error(self) -> bool:
        """A protocol error, or a tool result with ``isError: true``."""
        return self.error is not None or bool((self.result or {}).get("isError"))

    @property
    def texts(self) -> list[str]:
        """The text of every text content block (tool results, prompt messages, resources)."""
        result = self.result or {}
        blocks: list[Any] = list(result.get("content") or [])
        blocks += [m.get("content") for m in result.get("messages") or []]
        blocks += list(result.get("contents") or [])
        return [b["text"] for b in blocks if isinstance(b, Mapping) and "text" in b]

    @property
    def structured(self) -> Any:
        return (self.result or {}).get("structuredContent")

    def _fail(self, why: str) -> None:
        raise AssertionError(f"{why}\nmessage:\n{json.dumps(self.message, indent=2)}")

    def assertOk(self) -> McpResult:
        """Assert neither a protocol error nor ``isError``."""
        if self.error is not None:
            self._fail("expected a result, got a protocol error")
        if self.is_error:
            self._fail("expected success, got isError: true")
        return self

    def assertError(self, text: str | None = None) -> McpResult:
        """Assert a protocol error or ``isError``; with ``text``, that it says so."""
        if not self.is_error:
            self._fail("expected an error, got success")
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
        if (self.result or {}).get("structuredContent", _ABSENT) != value:
            self._fail(f"expected structuredContent == {value!r}")
        return self


_ABSENT = object()
