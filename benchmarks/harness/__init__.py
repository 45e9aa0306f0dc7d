"""The harness every benchmark uses: timed loops, suites and their report, the HTTP load
generator, the processes and venvs of contenders. It imports nothing else of ``benchmarks``."""
