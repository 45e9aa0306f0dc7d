"""The suites of ``python -m benchmarks``: each module exposes ``SUITE``. They import the
harness and the workloads, and one another only within this folder."""
