"""Contracts on pydantic 2: ``Schema``, compiled validators and safe error summaries."""

from schemas.contract import JSON_SCHEMA_DIALECT, Contract
from schemas.errors import ContractError, FieldError, render, summarize
from schemas.schema import Schema

__distribution__ = "mcp-adapter-di"
"""The distribution this package ships in; ``mcp_adapter`` checks it to know its own."""


def __getattr__(name: str) -> str:
    """``__version__``: the installed distribution's, read when first asked for."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(__distribution__)
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "JSON_SCHEMA_DIALECT",
    "Contract",
    "ContractError",
    "FieldError",
    "Schema",
    "render",
    "summarize",
]
