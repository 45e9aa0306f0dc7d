"""The base class of payload and output contracts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Schema(BaseModel):
    """A contract: pydantic model that rejects unknown fields.

    >>> class GreetInput(Schema):
    ...     name: str
    >>> GreetInput(name="Ada")
    GreetInput(name='Ada')
    >>> GreetInput.model_validate({"name": "Ada", "admin": True})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for GreetInput
    admin
      Extra inputs are not permitted [type=extra_forbidden, input_value=True, input_type=bool]
    ...
    """

    model_config = ConfigDict(extra="forbid")
