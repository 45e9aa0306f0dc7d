"""A griffe extension for the API reference: the package's docstrings are reST-flavoured
prose with doctests; MkDocs renders Markdown. Doctest runs become ``pycon`` code blocks
and Sphinx roles (``:class:`X```) become code spans."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:func|class|meth|data|attr|mod|exc|obj):`~?([^`]+)`")


def _short(match: re.Match[str]) -> str:
    target = match.group(1)
    return f"`{target.rsplit('.', 1)[-1]}`" if match.group(0).count("~") else f"`{target}`"


def markdown(text: str) -> str:
    lines, out, index = text.splitlines(), [], 0
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith(">>>"):
            block = []
            while index < len(lines) and lines[index].strip():
                block.append(lines[index])
                index += 1
            out.extend(["```pycon", *block, "```"])
            continue
        out.append(line)
        index += 1
    return _ROLE.sub(_short, "\n".join(out))


class MarkdownDocstrings(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **_: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
