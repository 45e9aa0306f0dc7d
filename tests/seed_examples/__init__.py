"""Seed 004's examples, verbatim but for the import lines (DESIGN.md's table).

Each module is the file the seed tells a user to write; ``tests/tools`` and
``tests/components`` both run them, from this one copy.
"""
