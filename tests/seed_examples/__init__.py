"""Seed 004's tool examples, verbatim but for the import lines (DESIGN.md's table).

Each module is the file the seed tells a user to write; the tests in
``tests/tools/test_seed_examples.py`` run them.
"""
