"""Counts and verbs that agree with them, for every line the CLI prints."""

from __future__ import annotations


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` and ``noun``, plural unless exactly one.

    >>> count(1, "prompt"), count(2, "prompt"), count(0, "resource")
    ('1 prompt', '2 prompts', '0 resources')
    """
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def verb(number: int, singular: str, plural: str) -> str:
    """The verb's form for a subject of ``number`` things: ``verb(1, "applies", "apply")``."""
    return singular if number == 1 else plural


def series(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``.

    >>> series(["--scope"]), series(["--scope", "--anonymous", "--resource-url"])
    ('--scope', '--scope, --anonymous and --resource-url')
    """
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
