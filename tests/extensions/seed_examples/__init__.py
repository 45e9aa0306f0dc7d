"""Seed 000's extension examples, verbatim but for the import lines (DESIGN.md's table).

``sandbox_runtime`` and ``host`` are not from the seed: they define what the seed's
snippets use without showing (``launch``, ``LAUNCH_SANDBOX_ANNOTATIONS``, ``platform``).
"""
