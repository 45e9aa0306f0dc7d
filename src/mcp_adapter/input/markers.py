"""The one marker this package adds to the SDK's (``Elicit``, ``Sample``, ``ListRoots``):
URL-mode elicitation."""

from __future__ import annotations

from mcp import types


class ElicitUrl:
    """A resolver's request to send the user to ``url`` (URL-mode elicitation).

    Returned from a resolver (``Annotated[T, Resolve(fn)]``); the client must have
    declared ``elicitation.url``. The consumer gets ``AcceptedUrlElicitation`` when the
    user accepted, or, annotated with ``UrlElicitationResult``, the outcome to branch
    on. ``elicitation_id`` is required on the 2025-11-25 wire; it defaults to one
    derived from the URL.
    """

    __slots__ = ("params",)

    def __init__(self, message: str, url: str, *, elicitation_id: str | None = None) -> None:
        self.params = types.ElicitRequestURLParams(
            message=message, url=url, elicitation_id=elicitation_id or url
        )

    @property
    def message(self) -> str:
        return self.params.message

    @property
    def url(self) -> str:
        return self.params.url
