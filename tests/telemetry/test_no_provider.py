"""Without a configured provider (OpenTelemetry's default) the adapter makes no span and
records nothing: the providers are global and set once per process, so this runs in a
process of its own, where nothing configured them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_adapter.dispatch import telemetry
from tests.telemetry.test_spans import client

touched = []


class Untouchable:
    def __getattr__(self, name):
        touched.append(name)
        raise AssertionError(f"telemetry used without a provider: {name}")


real_tracer, real_duration, real_traced = telemetry._tracer, telemetry._duration, telemetry.Traced
telemetry._tracer = telemetry._duration = Untouchable()
telemetry.Traced = Untouchable  # no traced mode is made either
telemetry.RECHECK = 7


async def calls(mcp):
    (await mcp.tool("add", {"a": 1, "b": 2})).assertOk()
    (await mcp.tool("sync_add", {"a": 1, "b": 2})).assertOk()
    assert (await mcp.tool("broken")).is_error
    (await mcp.read_resource("notes://1")).assertOk()
    (await mcp.prompt("greet", {"who": "Ada"})).assertOk()


for protocol in ("2026-07-28", "2025-11-25"):
    mcp = client(protocol)
    for _ in range(4):  # 20 calls, past RECHECK: the providers were looked at again
        anyio.run(calls, mcp)
assert touched == [], touched
assert not telemetry.ACTIVITY.on

# a provider configured after the server was built is noticed within RECHECK calls
telemetry._tracer, telemetry._duration, telemetry.Traced = real_tracer, real_duration, real_traced
mcp = client("2026-07-28")
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)


async def until_traced():
    for done in range(1, telemetry.RECHECK + 1):
        (await mcp.tool("add", {"a": 1, "b": 2})).assertOk()
        if any(span.name == telemetry.HANDLER for span in exporter.get_finished_spans()):
            return done
    raise AssertionError("no stage span after RECHECK calls")


assert anyio.run(until_traced) <= telemetry.RECHECK
assert telemetry.ACTIVITY.traces and not telemetry.ACTIVITY.metrics
print("ok")
"""


def test_no_stage_span_and_no_measurement_without_a_provider() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.pop("MCP_ADAPTER_TELEMETRY", None)
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip() == "ok"
