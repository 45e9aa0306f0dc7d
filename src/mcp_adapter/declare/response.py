"""What a handler returns: content, an optional structured value, and flags."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from mcp import types

Role = Literal["user", "assistant"]

_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "UNSET", "__bool__": lambda s: False})()


def _annotations(
    annotations: types.Annotations | Mapping[str, Any] | None,
) -> types.Annotations | None:
    if annotations is None or isinstance(annotations, types.Annotations):
        return annotations
    return types.Annotations.model_validate(dict(annotations))


_Media = TypeVar("_Media", types.ImageContent, types.AudioContent)


def _media(
    kind: type[_Media],
    data: bytes | str,
    mime_type: str,
    annotations: types.Annotations | Mapping[str, Any] | None,
    meta: Mapping[str, Any] | None,
) -> _Media:
    """An image or audio block; its ``type`` tag is the model's default."""
    return kind(
        data=_b64(data),
        mime_type=mime_type,
        annotations=_annotations(annotations),
        meta=_dict(meta),
    )


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


@dataclass(frozen=True, slots=True)
class McpResponse:
    """An immutable response: content blocks, maybe a structured value, maybe an error.

    >>> McpResponse.text("hi").content[0].text
    'hi'
    >>> McpResponse.structured({"count": 2}).structured_content
    {'count': 2}
    >>> McpResponse.text("hello").asAssistant().role
    'assistant'
    """

    content: tuple[types.ContentBlock, ...] = ()
    structured_content: Any = field(default=_UNSET)
    is_error: bool = False
    meta: Mapping[str, Any] | None = None
    role: Role = "user"
    input_requests: Mapping[str, types.ElicitRequestFormParams] | None = None
    """Input the handler needs before it can answer (see ``McpResponse.elicit``)."""
    request_state: str | None = None

    @property
    def has_structured(self) -> bool:
        return self.structured_content is not _UNSET

    # -- constructors -------------------------------------------------------

    @classmethod
    def text(
        cls,
        text: str,
        *,
        annotations: types.Annotations | Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> McpResponse:
        """Plain text content."""
        block = types.TextContent(
            type="text", text=text, annotations=_annotations(annotations), meta=_dict(meta)
        )
        return cls((block,))

    @classmethod
    def structured(cls, value: Any, *, meta: Mapping[str, Any] | None = None) -> McpResponse:
        """A JSON value as ``structuredContent``, and its JSON text as content.

        The text is rendered when the result is built, after the output
        contract has validated and serialized the value.
        """
        return cls((), value, meta=meta)

    @classmethod
    def error(cls, message: str, *, meta: Mapping[str, Any] | None = None) -> McpResponse:
        """An expected business failure: ``isError: true`` with a safe message."""
        return cls((types.TextContent(type="text", text=message),), is_error=True, meta=meta)

    @classmethod
    def image(
        cls,
        data: bytes | str,
        mime_type: str,
        *,
        annotations: types.Annotations | Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> McpResponse:
        """An image; ``data`` is raw bytes or base64 text."""
        return cls((_media(types.ImageContent, data, mime_type, annotations, meta),))

    @classmethod
    def audio(
        cls,
        data: bytes | str,
        mime_type: str,
        *,
        annotations: types.Annotations | Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> McpResponse:
        """Audio; ``data`` is raw bytes or base64 text."""
        return cls((_media(types.AudioContent, data, mime_type, annotations, meta),))

    @classmethod
    def resource(
        cls,
        uri: str,
        *,
        text: str | None = None,
        blob: bytes | None = None,
        mime_type: str | None = None,
        annotations: types.Annotations | Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> McpResponse:
        """An embedded resource with either ``text`` or ``blob``."""
        if (text is None) == (blob is None):
            raise ValueError("McpResponse.resource() needs exactly one of text= or blob=")
        contents: types.TextResourceContents | types.BlobResourceContents
        if text is not None:
            contents = types.TextResourceContents(uri=uri, text=text, mime_type=mime_type)
        else:
            assert blob is not None
            contents = types.BlobResourceContents(uri=uri, blob=_b64(blob), mime_type=mime_type)
        block = types.EmbeddedResource(
            type="resource",
            resource=contents,
            annotations=_annotations(annotations),
            meta=_dict(meta),
        )
        return cls((block,))

    @classmethod
    def blob(cls, data: bytes, *, mime_type: str | None = None) -> McpResponse:
        """Binary content for a resource read (base64 on the wire)."""
        return cls.resource("", blob=data, mime_type=mime_type)

    @classmethod
    def resource_link(
        cls,
        uri: str,
        name: str,
        *,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: types.Annotations | Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> McpResponse:
        """A link to a resource the client may read."""
        block = types.ResourceLink(
            type="resource_link",
            uri=uri,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            size=size,
            annotations=_annotations(annotations),
            meta=_dict(meta),
        )
        return cls((block,))

    @classmethod
    def elicit(
        cls,
        message: str,
        schema: type[Any] | Mapping[str, Any],
        *,
        key: str = "input",
        state: str | None = None,
    ) -> McpResponse:
        """Ask the client for input, then get called again with the answer.

        On 2026-07-28 this becomes an ``input_required`` result; the client's
        retry carries ``McpRequest.input_responses[key]`` and the echoed
        ``request_state``. On 2025-11-25 the adapter sends the SDK's
        ``elicitation/create`` request itself and calls the handler again with
        the same two fields filled, so one handler serves both eras.
        ``schema`` is a flat ``Schema`` class or a JSON Schema object.
        Only tools can ask: returned from a resource or a prompt, it is an error.
        """
        requested = schema if isinstance(schema, Mapping) else _json_schema(schema)
        params = types.ElicitRequestFormParams(message=message, requested_schema=dict(requested))
        return cls(input_requests={key: params}, request_state=state)

    # -- modifiers ------------------------------------------------------------

    def with_meta(self, **meta: Any) -> McpResponse:
        """A copy whose result ``_meta`` includes ``meta``."""
        return dataclasses.replace(self, meta={**(self.meta or {}), **meta})

    def asUser(self) -> McpResponse:
        """As a prompt message, spoken by the user (the default)."""
        return dataclasses.replace(self, role="user")

    def asAssistant(self) -> McpResponse:
        """As a prompt message, spoken by the assistant."""
        return dataclasses.replace(self, role="assistant")


def _json_schema(schema: type[Any]) -> dict[str, Any]:
    from pydantic import TypeAdapter

    value: dict[str, Any] = TypeAdapter(schema).json_schema()
    value.pop("title", None)
    value.pop("additionalProperties", None)
    return value


def _dict(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if meta is None else dict(meta)
