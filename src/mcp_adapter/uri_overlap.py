"""Whether two URI templates can match the same URI (which would make reads ambiguous)."""

from __future__ import annotations

import re

from mcp.shared.uri_template import UriTemplate

_SIMPLE_VARIABLE = re.compile(r"\{[A-Za-z0-9_]+\}")
_PROBES = ("probe", "0", "a.b")


def _is_simple(template: str) -> bool:
    """Only ``{name}`` expressions (RFC 6570 level 1): they never span a ``/``, and the SDK
    lets them match the empty string."""
    return "{" not in _SIMPLE_VARIABLE.sub("", template) and "}" not in _SIMPLE_VARIABLE.sub(
        "", template
    )


def _segment_regex(segment: str) -> re.Pattern[str]:
    parts = _SIMPLE_VARIABLE.split(segment)
    return re.compile("[^/]*".join(re.escape(part) for part in parts))


def _affixes(segment: str) -> tuple[str, str]:
    return segment[: segment.index("{")], segment[segment.rindex("}") + 1 :]


def _segments_overlap(first: str, second: str) -> bool:
    first_literal, second_literal = "{" not in first, "{" not in second
    if first_literal and second_literal:
        return first == second
    if first_literal:
        return _segment_regex(second).fullmatch(first) is not None
    if second_literal:
        return _segment_regex(first).fullmatch(second) is not None
    first_prefix, first_suffix = _affixes(first)
    second_prefix, second_suffix = _affixes(second)
    prefixes = first_prefix.startswith(second_prefix) or second_prefix.startswith(first_prefix)
    suffixes = first_suffix.endswith(second_suffix) or second_suffix.endswith(first_suffix)
    return prefixes and suffixes


def can_overlap(first: str, second: str) -> bool:
    """True when some URI may match both templates.

    Exact for simple templates, segment by segment; for templates with other
    operators, a probe: each template is expanded with sample values and
    matched against the other.

    >>> can_overlap("demo://{a}/x", "demo://y/{b}")
    True
    >>> can_overlap("demo://{id}.json", "demo://{id}.txt")
    False
    """
    if _is_simple(first) and _is_simple(second):
        first_parts, second_parts = first.split("/"), second.split("/")
        return len(first_parts) == len(second_parts) and all(
            _segments_overlap(a, b) for a, b in zip(first_parts, second_parts, strict=True)
        )
    parsed = UriTemplate.parse(first), UriTemplate.parse(second)
    for value in _PROBES:
        for this, other in (parsed, parsed[::-1]):
            uri = this.expand(dict.fromkeys(this.variable_names, value))
            if other.match(uri) is not None:
                return True
    return False
