"""Hostile input over real transports: ``mcp-adapter serve`` over stdio, and streamable HTTP
on 127.0.0.1, in both protocol eras.

Every request with an id gets one well-formed answer to that id with nothing
internal in it; the server keeps serving after anything; internal failures are
logged server-side with their incident id; a body over the HTTP size limit is
refused with 413 before it is buffered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest
from hypothesis import Phase, given, settings
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.types import PROTOCOL_VERSION_META_KEY

from container import Container
from mcp_adapter.serving import HttpLimits, http_app
from tests.reliability.conftest import BOUNDED, ERAS
from tests.reliability.fuzz import (
    LEGACY,
    MODERN,
    Sent,
    check_answer,
    deep_json,
    envelope,
    malformed,
    nested,
    requests,
)
from tests.reliability.servers import INCIDENT, SECRET, FuzzServer, leaks
from tests.reliability.transports import StdioServer, decoded, http_headers
from tests.serving.harness import serve_app

TARGET = "tests.reliability.servers:FuzzServer"
OVER_THE_WIRE = settings(
    BOUNDED, max_examples=60, phases=[Phase.explicit, Phase.reuse, Phase.generate]
)
"""No shrinking: a failure over a real transport can cost a timeout per attempt."""

# -- stdio ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=ERAS)
def stdio(request: pytest.FixtureRequest) -> Iterator[StdioServer]:
    server = StdioServer(TARGET, request.param)
    try:
        yield server
    finally:
        server.close()


def test_stdio_answers_hostile_requests_and_keeps_serving(stdio: StdioServer) -> None:
    @OVER_THE_WIRE
    @given(sent=requests(stdio.era))
    def exchange(sent: Sent) -> None:
        stdio.write(sent.text)
        check_answer(sent, stdio.answer(sent.id), f"stdio {stdio.era}")

    exchange()
    assert stdio.alive()
    assert stdio.process.poll() is None


def _stdio_request(stdio: StdioServer, request_id: int, params: dict[str, object]) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": stdio.params(params),
        }
    )


def test_stdio_survives_lines_that_are_not_requests(stdio: StdioServer) -> None:
    @OVER_THE_WIRE
    @given(sent=malformed())
    def exchange(sent: Sent) -> None:
        before = len(stdio.unrouted)
        stdio.write(sent.text)
        assert stdio.alive()  # answered after the line before it
        answers = stdio.unrouted[before:]
        for answer in answers:
            check_answer(sent, answer, f"stdio {stdio.era}")
        assert [a["error"]["code"] for a in answers] in ([-32700], [-32600]), (sent, answers)

    exchange()
    huge = _stdio_request(stdio, 1, {"name": "echo", "arguments": {"text": "z" * 5_000_000}})
    for line in (
        b"\xff\xfe\xfd not utf-8",
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": \xc3\x28}',
        _stdio_request(stdio, 3, {"name": "echo", "arguments": "@@"}).replace(
            '"@@"', deep_json(100_000)
        ),
        _stdio_request(stdio, 4, {"name": "echo", "arguments": {"text": nested(300)}}),
        "",
        "   ",
    ):
        stdio.write(line)
        assert stdio.alive()
    stdio.write(huge)
    big = stdio.answer(1)
    assert "Invalid tool arguments" in json.dumps(big)
    assert len(json.dumps(big)) < 2_000
    for message in stdio.unrouted:
        assert not leaks(json.dumps(message)), message
    assert stdio.undecodable == []


def test_stdio_reads_invalid_utf8_inside_a_string_as_replacement_characters(
    stdio: StdioServer,
) -> None:
    line = _stdio_request(stdio, 5, {"name": "echo", "arguments": {"text": "@@"}})
    stdio.write(line.encode().replace(b"@@", b"\xff\xfe"))
    answer = stdio.answer(5)
    assert answer["result"]["content"][0]["text"] == "\ufffd\ufffd"


def test_stdio_failures_are_logged_server_side_and_not_sent(stdio: StdioServer) -> None:
    answer = stdio.call("tools/call", {"name": "boom"})
    text = json.dumps(answer)
    assert SECRET not in text
    found = INCIDENT.search(text)
    assert found is not None
    stdio.call("ping")  # the log line is written before the next answer
    log = "".join(stdio.stderr)
    assert found.group(1) in log
    assert "Traceback" in log
    assert SECRET in log  # server-side only


def test_stdio_answers_a_line_that_is_not_json(stdio: StdioServer) -> None:
    before = len(stdio.unrouted)
    stdio.write("{not json")
    assert stdio.alive()
    answers = stdio.unrouted[before:]
    assert [a["error"]["code"] for a in answers] == [-32700]


@pytest.mark.parametrize("bad_id", [True, [1], {"n": 1}], ids=["bool", "list", "object"])
def test_stdio_answers_a_request_with_an_invalid_id(stdio: StdioServer, bad_id: object) -> None:
    before = len(stdio.unrouted)
    stdio.write(json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "ping", "params": {}}))
    assert stdio.alive()
    assert [a["error"]["code"] for a in stdio.unrouted[before:]] == [-32600]


# -- HTTP -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http() -> Iterator[str]:
    """``http_app`` under uvicorn on 127.0.0.1, JSON answers; yields the endpoint URL."""
    with serve_app(http_app(FuzzServer, Container(), json_response=True)) as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def http_sse() -> Iterator[str]:
    """The default mode: answers as an SSE stream."""
    with serve_app(http_app(FuzzServer, Container())) as base:
        yield f"{base}/mcp"


def _post(url: str, sent: Sent, era: str) -> httpx2.Response:
    with httpx2.Client(timeout=30) as client:
        return client.post(url, content=sent.text, headers=http_headers(sent.text, era))


def _http_alive(url: str, era: str) -> None:
    params: dict[str, object] = {"name": "echo", "arguments": {"text": "alive"}}
    if era == MODERN:
        params["_meta"] = envelope()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    answer = decoded(_post(url, Sent(body, 1, "alive"), era))
    assert answer is not None
    assert answer["result"]["content"][0]["text"] == "alive"


@pytest.mark.parametrize("era", ERAS)
def test_http_answers_hostile_requests_and_keeps_serving(http: str, era: str) -> None:
    @OVER_THE_WIRE
    @given(sent=requests(era))
    def exchange(sent: Sent) -> None:
        response = _post(http, sent, era)
        assert response.status_code in (200, 400, 404, 405, 406, 413, 415), response
        answer = decoded(response)
        assert answer is not None, (response.status_code, response.text)
        check_answer(sent, answer, f"http {era}")

    exchange()
    _http_alive(http, era)


@pytest.mark.parametrize("era", ERAS)
def test_http_sse_answers_hostile_requests(http_sse: str, era: str) -> None:
    @settings(OVER_THE_WIRE, max_examples=25)
    @given(sent=requests(era))
    def exchange(sent: Sent) -> None:
        response = _post(http_sse, sent, era)
        answer = decoded(response)
        assert answer is not None, (response.status_code, response.text)
        check_answer(sent, answer, f"http {era} (SSE)")

    exchange()
    _http_alive(http_sse, era)


@pytest.mark.parametrize("version", [" ", " 7", f"{MODERN} ", "a b"])
def test_http_a_version_no_header_can_carry_is_answered(http: str, version: str) -> None:
    """The fuzzer's wrong versions include edge spaces, which httpx refuses to put in a header."""
    meta = envelope({PROTOCOL_VERSION_META_KEY: version})
    params = {"name": "echo", "arguments": {"text": "v"}, "_meta": meta}
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    sent = Sent(text, 1, "bad version")
    answer = decoded(_post(http, sent, MODERN))
    assert answer is not None
    check_answer(sent, answer, "http 2026-07-28")


def test_http_2026_07_28_rejects_bodies_that_are_not_requests_safely(http: str) -> None:
    @OVER_THE_WIRE
    @given(sent=malformed())
    def exchange(sent: Sent) -> None:
        response = _post(http, sent, MODERN)
        assert response.status_code in (202, 400), response
        answer = decoded(response)
        if answer is not None:
            assert response.status_code == 400
            check_answer(sent, answer, "http 2026-07-28")

    exchange()
    _http_alive(http, MODERN)


def test_http_2025_11_25_rejects_bodies_that_are_not_requests_safely(http: str) -> None:
    sent = Sent(json.dumps({"jsonrpc": "2.0", "id": 1, "method": 5}), None, "bad method")
    response = _post(http, sent, LEGACY)
    answer = decoded(response)
    assert answer is not None
    check_answer(sent, answer, "http 2025-11-25")
    assert answer["error"]["code"] == -32600


@pytest.mark.parametrize("bad_id", [True, [1], {"n": 1}], ids=["bool", "list", "object"])
def test_http_2025_11_25_answers_a_request_with_an_invalid_id(http: str, bad_id: object) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "ping", "params": {}})
    response = _post(http, Sent(text, None, "bad id"), LEGACY)
    answer = decoded(response)
    assert answer is not None, response.status_code
    assert answer["error"]["code"] == -32600


def test_http_legacy_parse_errors_say_where_not_what(http: str) -> None:
    for text in ("{not json", "[", '{"a": \u0001}', deep_json(1000)):
        response = _post(http, Sent(text, None, "not json"), LEGACY)
        assert response.status_code == 400
        answer = decoded(response)
        assert answer is not None
        assert answer["error"]["code"] == -32700
        assert not leaks(json.dumps(answer), text)
    _http_alive(http, LEGACY)


@pytest.mark.parametrize("era", ERAS)
def test_http_refuses_a_body_over_the_limit_before_buffering_it(http: str, era: str) -> None:
    size = DEFAULT_MAX_REQUEST_BODY_SIZE + 1024
    text = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":'
    text += '{"text":"' + "q" * size + '"}}}'
    declared = _post(http, Sent(text, 1, "huge"), era)
    assert declared.status_code == 413

    sent_chunks = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent_chunks
        piece = b"q" * 65_536
        yield b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
        for _ in range(4 * size // len(piece)):  # up to 4x the limit, unless refused first
            sent_chunks += 1
            yield piece
        yield b'"}}'

    with httpx2.Client(timeout=30) as client:
        try:
            streamed = client.post(http, content=chunks(), headers=http_headers("", era))
        except httpx2.TransportError:
            streamed = None  # the server closed the connection mid-upload: also refused
    assert streamed is None or streamed.status_code == 413
    _http_alive(http, era)


def test_http_body_limit_can_be_configured() -> None:
    limit = 64 * 1024
    app = http_app(
        FuzzServer, Container(), json_response=True, limits=HttpLimits(max_body_size=limit)
    )
    with serve_app(app) as base:
        text = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "p" * limit}}
        )
        assert _post(f"{base}/mcp", Sent(text, 1, "over"), LEGACY).status_code == 413


def test_http_failures_are_logged_with_their_incident(
    http: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("ERROR", logger="mcp_adapter")
    params: dict[str, object] = {"name": "boom", "_meta": envelope()}
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
    answer = decoded(_post(http, Sent(body, 9, "boom"), MODERN))
    assert answer is not None
    text = json.dumps(answer)
    assert SECRET not in text
    found = INCIDENT.search(text)
    assert found is not None
    logged = [r for r in caplog.records if found.group(1) in r.getMessage()]
    assert logged
    assert logged[0].exc_info is not None


def test_http_with_the_wrong_content_type_is_refused(http: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}})
    with httpx2.Client(timeout=30) as client:
        for era in ERAS:
            headers = {**http_headers(body, era), "content-type": "text/plain"}
            response = client.post(http, content=body, headers=headers)
            assert response.status_code in (400, 415)
            assert not leaks(response.text)


def test_an_sse_answer_is_decoded_with_unicode_line_separators_in_its_data() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "data": "a\x85b\u2028c"}}
    body = f"event: message\r\ndata: {json.dumps(message, ensure_ascii=False)}\r\n\r\n"
    answer = httpx2.Response(200, headers={"content-type": "text/event-stream"}, text=body)
    assert decoded(answer) == message
