"""Benchmarks: ``uv run --group bench python -m benchmarks`` (docs/performance.md; method:
benchmarks/README.md).

Four folders, each importing only itself and the ones before it: ``harness`` (timed
loops, suites and their report, the HTTP load generator, processes and venvs),
``workloads`` (what is measured), ``suites`` (``python -m benchmarks``), ``counts``
(instruction counts). The modules here are commands; nothing imports them.
"""
