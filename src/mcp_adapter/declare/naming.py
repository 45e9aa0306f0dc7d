"""Public names of components: derived defaults and the allowed alphabet."""

from __future__ import annotations

import re

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,128}")

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def default_name(class_name: str, suffix: str) -> str:
    """Kebab-case name from a class name with its kind suffix dropped.

    >>> default_name("FindTicketTool", "Tool")
    'find-ticket'
    >>> default_name("HTTPStatusTool", "Tool")
    'http-status'
    >>> default_name("Tool", "Tool")
    'tool'
    """
    base = (
        class_name[: -len(suffix)]
        if class_name.endswith(suffix) and class_name != suffix
        else class_name
    )
    return _BOUNDARY.sub("-", base).replace("_", "-").lower()


def valid_name(name: str) -> bool:
    return NAME_PATTERN.fullmatch(name) is not None
