"""Benchmarks: ``uv run --group bench python -m benchmarks`` (see docs/performance.md)."""
