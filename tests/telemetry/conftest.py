"""An in-memory span exporter and metric reader on the process's OpenTelemetry providers.

Providers are set once per process: the first test that needs them installs the
SDK's (or reuses SDK providers something else installed, the docs' examples say),
and every test reads only what was recorded during it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_adapter.dispatch import telemetry

_EXPORTER = InMemorySpanExporter()
COMPONENT_CALLS = ("tools/call", "resources/read", "prompts/get")


def _providers() -> tuple[TracerProvider, MeterProvider]:
    tracer_provider = trace.get_tracer_provider()
    if not isinstance(tracer_provider, TracerProvider):
        tracer_provider = TracerProvider()
        trace.set_tracer_provider(tracer_provider)
    meter_provider = metrics.get_meter_provider()
    if not isinstance(meter_provider, MeterProvider):
        meter_provider = MeterProvider()
        metrics.set_meter_provider(meter_provider)
    assert trace.get_tracer_provider() is tracer_provider
    assert metrics.get_meter_provider() is meter_provider
    return tracer_provider, meter_provider


@pytest.fixture(scope="session")
def providers() -> tuple[TracerProvider, MeterProvider]:
    tracer_provider, meter_provider = _providers()
    tracer_provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    telemetry.refresh()
    return tracer_provider, meter_provider


@dataclass
class Recorded:
    """What the providers recorded during one test."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans() if span.name == name]

    def server_span(self) -> ReadableSpan:
        """The SDK's span of the one component call of the test (2025-11-25's handshake
        has spans of its own)."""
        found = [
            s
            for s in self.spans()
            if s.kind == trace.SpanKind.SERVER
            and (s.attributes or {}).get("mcp.method.name") in COMPONENT_CALLS
        ]
        assert len(found) == 1, [s.name for s in found]
        return found[0]

    def stages(self) -> list[ReadableSpan]:
        """The adapter's stage spans, in the order they started."""
        found = [s for s in self.spans() if s.name in telemetry.STAGES]
        return sorted(found, key=lambda s: s.start_time or 0)

    def durations(self) -> list[tuple[dict[str, Any], HistogramDataPoint]]:
        """Every ``mcp.server.operation.duration`` point: its attributes and the point."""
        data = self.reader.get_metrics_data()
        points: list[tuple[dict[str, Any], HistogramDataPoint]] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name != telemetry.DURATION:
                        continue
                    assert metric.unit == "s"
                    for point in metric.data.data_points:
                        assert isinstance(point, HistogramDataPoint)
                        points.append((dict(point.attributes or {}), point))
        return points


@pytest.fixture
def otel(providers: tuple[TracerProvider, MeterProvider]) -> Iterator[Recorded]:
    _, meter_provider = providers
    reader = InMemoryMetricReader()
    meter_provider.add_metric_reader(reader)
    _EXPORTER.clear()
    try:
        yield Recorded(_EXPORTER, reader)
    finally:
        meter_provider.remove_metric_reader(reader)
        _EXPORTER.clear()


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def names(spans: Sequence[ReadableSpan]) -> list[str]:
    return [span.name for span in spans]
