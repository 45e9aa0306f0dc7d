"""Raw access to real transports: a ``mcp-adapter serve`` subprocess over stdio, and HTTP POSTs.

Both speak bytes, so the tests can send what no well-behaved client would.
Every wait is bounded.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

import httpx2
from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value

from tests.reliability.fuzz import LEGACY, MODERN
from tests.serving.harness import REPO, cli_env

ANSWER_TIMEOUT = 60.0
"""Only a bound that turns a hang into a failure: a loaded machine starts a server slowly."""
CLIENT_INFO = {"name": "raw", "version": "0"}


class StdioServer:
    """``mcp-adapter serve TARGET`` over pipes; lines in, decoded answers out."""

    def __init__(self, target: str, era: str) -> None:
        self.era = era
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_adapter.cli", "serve", target],
            cwd=REPO,
            env=cli_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.unrouted: list[dict[str, Any]] = []
        """Answers without an id (to lines the server could not read as a request)."""
        self.stderr: list[str] = []
        self.undecodable: list[bytes] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self._ids = iter(range(10**6, 10**9))
        if era == LEGACY:
            self._handshake()
        else:
            self.call("ping")  # the first request decides the connection's era

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self.undecodable.append(line)
                continue
            if isinstance(message, dict) and message.get("id") is None and "method" not in message:
                self.unrouted.append(message)
            self.answers.put(message)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def _handshake(self) -> None:
        self.call(
            "initialize",
            {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO},
        )
        self.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def write(self, line: str | bytes) -> None:
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def answer(self, request_id: Any, timeout: float = ANSWER_TIMEOUT) -> dict[str, Any]:
        """The answer to ``request_id``; anything else that arrives meanwhile is dropped."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no answer to request {request_id!r}")
            try:
                message = self.answers.get(timeout=remaining)
            except queue.Empty:
                continue
            if message.get("id") == request_id and "method" not in message:
                return message

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(self._ids)
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": self.params(params)}
        self.write(json.dumps(body))
        return self.answer(request_id)

    def params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        sent = dict(params or {})
        if self.era == MODERN:
            from tests.reliability.fuzz import envelope

            sent["_meta"] = envelope(sent.get("_meta"))
        return sent

    def alive(self) -> bool:
        answer = self.call("tools/call", {"name": "echo", "arguments": {"text": "alive"}})
        return answer.get("result", {}).get("content", [{}])[0].get("text") == "alive"

    def close(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)


BASE_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def http_headers(text: str, era: str) -> dict[str, str]:
    """The headers a client of ``era`` sends with the body ``text`` (as far as it can tell)."""
    headers = dict(BASE_HEADERS)
    headers["mcp-protocol-version"] = era
    if era != MODERN:
        return headers
    try:
        body = json.loads(text)
    except ValueError:
        return headers
    if not isinstance(body, dict):
        return headers
    method = body.get("method")
    if isinstance(method, str):
        headers["mcp-method"] = encode_header_value(method)
    params = body.get("params")
    key = NAME_BEARING_METHODS.get(method) if isinstance(method, str) else None
    if key and isinstance(params, dict) and isinstance(params.get(key), str):
        headers["mcp-name"] = encode_header_value(params[key])
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = (
        meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
    )
    if isinstance(version, str) and version.isascii() and version.isprintable():
        # What the server reads had the client put it in the header: HTTP strips a field
        # value's edge whitespace (RFC 9110, 5.5), and httpx refuses to send it at all.
        headers["mcp-protocol-version"] = version.strip(" ")
    return headers


SSE_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""What ends a line of an SSE stream, and nothing else (the HTML standard's event-stream)."""


def decoded(response: httpx2.Response) -> dict[str, Any] | None:
    """The JSON-RPC message in an HTTP answer: a JSON body or the last SSE ``data:`` line."""
    text = response.text
    if not text.strip():
        return None
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        lines = SSE_LINE_BREAK.split(text)  # not splitlines(): U+0085 or U+2028 may be data
        data = [line[5:].strip() for line in lines if line.startswith("data:")]
        messages = [json.loads(d) for d in data if d]
        answers = [m for m in messages if "method" not in m]
        return answers[-1] if answers else None
    value = json.loads(text)
    return value if isinstance(value, dict) else None
