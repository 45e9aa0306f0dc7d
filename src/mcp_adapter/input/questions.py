"""One question a resolver asks: its marker, how it looks on the wire, the capability it
needs, and the answers that count for it.

A resolver asks by returning a marker: the SDK's ``Elicit`` (a form), ``Sample``
(``sampling/createMessage``), ``ListRoots`` (``roots/list``), or this package's
:class:`ElicitUrl` (URL-mode elicitation). The question is rendered once into the
request the client sees; its digest pins every answer and every recorded outcome to
that exact rendering, so an answer to another question (or to an older wording of this
one) never stands in for it.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import weakref
from collections.abc import Mapping
from typing import Any, TypeGuard

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError
from mcp import MCPError, types
from mcp.server.elicitation import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    render_elicitation_schema,
)
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Sample
from mcp.server.request_state import compact_json
from mcp.server.validation import wants_sampling_tools
from pydantic import ValidationError

from mcp_adapter.input.markers import ElicitUrl

Marker = Elicit[Any] | ElicitUrl | Sample | ListRoots
"""What a resolver returns to ask the client."""

MARKERS = (Elicit, ElicitUrl, Sample, ListRoots)

ELICITATION = "elicitation (form)"
ELICITATION_URL = "elicitation (url)"
SAMPLING = "sampling"
SAMPLING_TOOLS = "sampling (with tools)"
ROOTS = "roots"
NOTHING = "nothing"
"""What a resolver whose return annotation names no marker asks (it returns a value)."""
KINDS = {Elicit: ELICITATION, ElicitUrl: ELICITATION_URL, Sample: SAMPLING, ListRoots: ROOTS}
"""The kind of question each marker class asks, as ``mcp-adapter check`` names it."""

Outcome = Any
"""An ``AcceptedElicitation`` (of a form's model, or of a plain, sampled or listed
value), ``AcceptedUrlElicitation``, ``DeclinedElicitation`` or ``CancelledElicitation``."""


def is_marker(value: Any) -> TypeGuard[Marker]:
    return isinstance(value, MARKERS)


_FORMS: weakref.WeakKeyDictionary[type[Any], dict[str, Any]] = weakref.WeakKeyDictionary()
"""Each form model's rendered ``requestedSchema`` (the SDK's rendering walks the model's
JSON Schema, about a millisecond: done once per model, while the model lives)."""


def form_schema(model: type[Any]) -> dict[str, Any]:
    """``render_elicitation_schema(model)``, rendered once per model (a fresh copy each
    time: the caller may keep or change it)."""
    found = _FORMS.get(model)
    if found is None:
        found = _FORMS[model] = render_elicitation_schema(model)
    return copy.deepcopy(found)


def render(marker: Marker) -> types.InputRequest:
    """The request the client is shown (the same in both protocol eras)."""
    if isinstance(marker, Elicit):
        schema = form_schema(marker.schema)
        params = types.ElicitRequestFormParams(message=marker.message, requested_schema=schema)
        return types.ElicitRequest(params=params)
    if isinstance(marker, ElicitUrl):
        return types.ElicitRequest(params=marker.params)
    if isinstance(marker, Sample):
        return types.CreateMessageRequest(params=marker.params)
    return types.ListRootsRequest()


def digest(request: types.InputRequest) -> str:
    """A short digest of the exact rendered question (method and params)."""
    params = request.params
    dumped = params.model_dump(mode="json", by_alias=True, exclude_none=True) if params else None
    return short_digest(compact_json({"m": request.method, "p": dumped}))


def short_digest(text: str) -> str:
    """A short digest of ``text``: 16 bytes of its SHA-256, base64url (22 characters)."""
    raw = hashlib.sha256(text.encode()).digest()[:16]
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def accepted(value: Any) -> AcceptedElicitation[Any]:
    """A value that needs no question (or was validated already) as an accepted outcome."""
    return AcceptedElicitation[Any].model_construct(data=value)


def _result_type(marker: Sample | ListRoots) -> Any:
    if isinstance(marker, ListRoots):
        return types.ListRootsResult
    if wants_sampling_tools(marker.params.tools, marker.params.tool_choice):
        return types.CreateMessageResultWithTools
    return types.CreateMessageResult


_FormValidator = validators.extend(  # type: ignore[no-untyped-call]  # jsonschema's own
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "object": lambda _checker, value: isinstance(value, Mapping),
            "array": lambda _checker, value: isinstance(value, list | tuple),
        }
    ),
)
"""JSON Schema 2020-12 over JSON as the adapter holds it: a request's values are frozen
(read-only mappings, tuples)."""


def meets(content: Mapping[str, Any], schema: Mapping[str, Any]) -> bool:
    """Whether a form's ``content`` meets the JSON Schema it was asked with, strictly: a
    boolean is ``true`` or ``false`` (never ``"yes"`` nor ``1``), an integer no string."""
    try:
        return bool(_FormValidator(schema).is_valid(content))
    except SchemaError:
        return False


def checked(
    marker: Marker, request: types.InputRequest, answer: Any
) -> tuple[Outcome, dict[str, Any]] | None:
    """``(outcome, record)`` for a client's ``answer`` to ``marker`` (rendered as
    ``request``, what the client was sent), or ``None`` when it is no valid answer to
    what was asked: the wrong kind, a form's content outside the schema sent (checked
    strictly, then given to the form's model), or a sampling or roots result of
    another shape (the protocol's model).

    The record is what ``requestState`` keeps: the action and the validated wire data.
    """
    if not isinstance(answer, Mapping):
        return None
    if isinstance(marker, Elicit | ElicitUrl):
        action = answer.get("action")
        if action == "decline":
            return DeclinedElicitation(), {"a": "decline"}
        if action == "cancel":
            return CancelledElicitation(), {"a": "cancel"}
        if action != "accept":
            return None
        if isinstance(marker, ElicitUrl):
            return AcceptedUrlElicitation(), {"a": "accept"}
        content = answer.get("content")
        params = request.params
        if not isinstance(content, Mapping) or not isinstance(
            params, types.ElicitRequestFormParams
        ):
            return None
        if not meets(content, params.requested_schema):
            return None
        try:
            data = marker.schema.model_validate(dict(content))
        except ValidationError:
            return None
        return AcceptedElicitation(data=data), {"a": "accept", "d": dict(content)}
    if "action" in answer:  # an elicitation's answer given to a sampling or roots question
        return None
    try:
        result = _result_type(marker).model_validate(dict(answer), by_name=False)
    except ValidationError:
        return None
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return accepted(result), {"a": "accept", "d": wire}


def restored(
    marker: Marker, request: types.InputRequest, record: Mapping[str, Any]
) -> Outcome | None:
    """The outcome a record of an earlier round holds, validated against the live marker
    (rendered as ``request``)."""
    action = record.get("a")
    if action in ("decline", "cancel"):
        if not isinstance(marker, Elicit | ElicitUrl):
            return None
        return DeclinedElicitation() if action == "decline" else CancelledElicitation()
    if action != "accept":
        return None
    if isinstance(marker, ElicitUrl):
        return AcceptedUrlElicitation()
    wire = {"action": "accept", "content": record.get("d")} if isinstance(marker, Elicit) else None
    found = checked(marker, request, wire if wire is not None else record.get("d"))
    return None if found is None else found[0]


def required_capability(marker: Marker) -> tuple[str, dict[str, Any]]:
    """``(name, capabilities)``: what a client must declare to be asked ``marker``."""
    if isinstance(marker, Elicit):
        return "form elicitation", {"elicitation": {"form": {}}}
    if isinstance(marker, ElicitUrl):
        return "URL elicitation", {"elicitation": {"url": {}}}
    if isinstance(marker, Sample):
        if wants_sampling_tools(marker.params.tools, marker.params.tool_choice):
            return "sampling.tools", {"sampling": {"tools": {}}}
        return "sampling", {"sampling": {}}
    return "roots", {"roots": {}}


def declares(capabilities: Mapping[str, Any], marker: Marker) -> bool:
    """Whether ``capabilities`` (the client's, as JSON) let the server ask ``marker``.

    A bare ``elicitation: {}`` (the spelling before modes existed) means form support.
    """
    if isinstance(marker, Elicit | ElicitUrl):
        declared = capabilities.get("elicitation")
        if not isinstance(declared, Mapping):
            return False
        if isinstance(marker, ElicitUrl):
            return "url" in declared
        return not declared or "form" in declared
    if isinstance(marker, Sample):
        sampling = capabilities.get("sampling")
        if not isinstance(sampling, Mapping):
            return False
        wants = wants_sampling_tools(marker.params.tools, marker.params.tool_choice)
        return not wants or isinstance(sampling.get("tools"), Mapping)
    return isinstance(capabilities.get("roots"), Mapping)


def missing_capability(marker: Marker, parameter: str) -> MCPError:
    """``-32021`` naming what the client did not declare, in ``data`` as the spec has it."""
    name, capabilities = required_capability(marker)
    return MCPError(
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Client did not declare the {name} capability needed to resolve {parameter!r}",
        {"requiredCapabilities": capabilities},
    )
