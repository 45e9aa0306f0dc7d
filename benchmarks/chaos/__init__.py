"""The chaos run: ``python -m benchmarks.chaos --seconds N`` (docs/reliability.md)."""
