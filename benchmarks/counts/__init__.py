"""Instruction counts of the benchmark rows, under valgrind's callgrind.

``python -m benchmarks.counts`` (see :mod:`benchmarks.counts.__main__`). This
package's ``__init__`` imports nothing: the worker process imports its modules
in a chosen order (see :mod:`benchmarks.counts.worker`).
"""
