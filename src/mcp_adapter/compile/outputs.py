"""What a function tool returns: its output contract, and its value as a result.

Function tools may return plain values, as with the SDK's ``MCPServer``: the
return annotation is the output contract (``structuredContent``), and the
value also becomes content the way ``MCPServer`` renders it (a string as is,
content blocks as themselves, lists flattened, anything else as indented JSON).
``McpResponse`` (or a list of them) and ``CallToolResult`` pass through
unchanged, as for class tools.
"""

from __future__ import annotations

import collections.abc
import types as pytypes
import typing
from typing import Annotated, Any

import pydantic_core
from mcp import types
from mcp.server.mcpserver.utilities.types import Audio, Image

from container import EMPTY
from mcp_adapter.declare.response import McpResponse

_BLOCK_TYPES: tuple[type, ...] = typing.get_args(types.ContentBlock)
_CONTENT_TYPES: tuple[type, ...] = (*_BLOCK_TYPES, Image, Audio)
_SEQUENCES = (list, tuple, collections.abc.Sequence)
_NO_OUTPUT = (EMPTY, None, type(None), Any, object)


def _is_result_type(annotation: Any) -> bool:
    """``McpResponse``, a sequence of them, ``CallToolResult``: results, not data."""
    if isinstance(annotation, type):
        return issubclass(annotation, McpResponse | types.CallToolResult)
    if typing.get_origin(annotation) in _SEQUENCES:
        return any(_is_result_type(arg) for arg in typing.get_args(annotation))
    return False


def _is_content_type(annotation: Any) -> bool:
    if isinstance(annotation, type):
        return issubclass(annotation, _CONTENT_TYPES)
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _is_content_type(typing.get_args(annotation)[0])
    if origin in _SEQUENCES or origin in (typing.Union, pytypes.UnionType):
        return any(_is_content_type(arg) for arg in typing.get_args(annotation))
    return False


def output_annotation(returns: Any) -> Any:
    """The data part of a return annotation, or ``None`` when it declares no output.

    >>> output_annotation(dict)
    <class 'dict'>
    >>> output_annotation(McpResponse) is None, output_annotation(None) is None
    (True, True)
    >>> output_annotation(dict[str, int] | McpResponse)
    dict[str, int]
    """
    if any(returns is nothing for nothing in _NO_OUTPUT):
        return None
    origin = typing.get_origin(returns)
    if origin is Annotated:
        return returns if output_annotation(typing.get_args(returns)[0]) is not None else None
    if origin in (typing.Union, pytypes.UnionType):
        arms = [arm for arm in typing.get_args(returns) if not _is_result_type(arm)]
        if len(arms) < len(typing.get_args(returns)):
            data = [arm for arm in arms if arm is not type(None)]
            if not data:
                return None
            return data[0] if len(data) == 1 else typing.Union[tuple(data)]  # noqa: UP007
    if _is_result_type(returns) or _is_content_type(returns):
        return None
    return returns


def to_content(value: Any) -> list[types.ContentBlock]:
    """A value as content blocks, as the SDK's ``MCPServer`` renders it.

    >>> [block.text for block in to_content(["a", {"n": 1}])]
    ['a', '{\\n  "n": 1\\n}']
    """
    if value is None:
        return []
    if isinstance(value, _BLOCK_TYPES):
        return [typing.cast(types.ContentBlock, value)]
    if isinstance(value, Image):
        return [value.to_image_content()]
    if isinstance(value, Audio):
        return [value.to_audio_content()]
    if isinstance(value, list | tuple):
        return [block for item in value for block in to_content(item)]
    text = value if isinstance(value, str) else _json(value)
    return [types.TextContent(type="text", text=text)]


def _json(value: Any) -> str:
    return pydantic_core.to_json(value, fallback=str, indent=2).decode()


def to_outcome(value: Any, *, structured: bool) -> Any:
    """What the dispatcher turns into a result: responses pass, plain values are converted.

    With ``structured``, the value is the ``structuredContent`` that the
    output contract validates when the result is built.
    """
    if isinstance(value, McpResponse | types.CallToolResult):
        return value
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(item, McpResponse) for item in value)
    ):
        return value
    if structured:  # the structured content, validated and serialized as a class tool's is
        return McpResponse.structured(value)
    return types.CallToolResult(content=to_content(value))
