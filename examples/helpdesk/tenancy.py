"""Who belongs to which helpdesk, and the layer that gives each call its tenant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_adapter import McpRequest, ToolError, request_stage
from mcp_adapter.extensions import Call, Next


@dataclass(frozen=True)
class Tenant:
    """The helpdesk a call works in: a context value of the call's scope
    (``container.context(Tenant)``), given by :func:`tenancy` only."""

    id: str
    suspended: bool = False


class Directory:
    """A singleton: the tenant of each signed-in subject."""

    def __init__(self, members: Mapping[str, Tenant]) -> None:
        self.members = dict(members)

    def tenant_of(self, subject: str) -> Tenant | None:
        return self.members.get(subject)


@request_stage(provides=[Tenant])
async def tenancy(call: Call, call_next: Next, request: McpRequest, directory: Directory) -> Any:
    """Resolve the caller's tenant before anything else runs; refuse anyone who has none.

    It stands in the request stage, so it sees every request (listings too) before the
    call's scope opens, and gives that scope the ``Tenant``: the tool's constructor, its
    hooks and every service see it. Arguments never play a part: a client cannot name
    another tenant.
    """
    identity = request.identity
    tenant = directory.tenant_of(identity.subject) if identity is not None else None
    if tenant is None:
        raise ToolError("Sign in as a member of a helpdesk")
    return await call_next(call.with_context({Tenant: tenant}))
