"""Contracts on pydantic 2: ``Schema``, compiled validators and safe error summaries."""

from schemas.contract import JSON_SCHEMA_DIALECT, Contract
from schemas.errors import ContractError, FieldError, render, summarize
from schemas.schema import Schema

__all__ = [
    "JSON_SCHEMA_DIALECT",
    "Contract",
    "ContractError",
    "FieldError",
    "Schema",
    "render",
    "summarize",
]
