"""Where each ``serve`` setting comes from: its flag, else its ``MCP_ADAPTER_*`` variable.

One rule for every setting: the flag wins; without it the variable named after the
setting (``--max-body-size``: ``MCP_ADAPTER_MAX_BODY_SIZE``) is read; without either
the setting keeps its default. An empty variable counts as unset. Repeatable flags
(``--scope``) take a comma-separated variable (``MCP_ADAPTER_SCOPES``); switches
(``--http``) take ``1``/``0``, ``true``/``false``, ``yes``/``no`` or ``on``/``off``.
A value the variable cannot hold is a one-line error naming the variable; a
secret's value is never echoed.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_adapter.cli.errors import CliError

PREFIX = "MCP_ADAPTER_"

Kind = Literal["text", "int", "float", "switch", "list"]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    """The ``ServeOptions`` field (and the parsed flag's ``dest``)."""
    flag: str
    kind: Kind
    help: str
    metavar: str | None = None
    secret: bool = False
    """Never echoed in an error (request-state keys)."""

    @property
    def env(self) -> str:
        return PREFIX + self.name.upper()

    def add_to(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        """The flag, with no default of its own: ``None`` when not given, so the
        variable can stand in for it."""
        help_text = f"{self.help} (env {self.env})"
        if self.kind == "switch":
            parser.add_argument(
                self.flag, dest=self.name, action=argparse.BooleanOptionalAction, help=help_text
            )
        elif self.kind == "list":
            parser.add_argument(
                self.flag, dest=self.name, action="append", metavar=self.metavar, help=help_text
            )
        else:
            kind = {"text": str, "int": int, "float": float}[self.kind]
            parser.add_argument(
                self.flag, dest=self.name, type=kind, metavar=self.metavar, help=help_text
            )

    def parse(self, raw: str) -> Any:
        """The variable's value as the flag would give it (``None``: unset)."""
        text = raw.strip()
        if not text:
            return None
        if self.kind == "list":
            items = [item.strip() for item in text.split(",") if item.strip()]
            return items or None
        if self.kind == "switch":
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
            self._refuse(text, "is not a switch (1/0, true/false, yes/no, on/off)")
        if self.kind == "int":
            try:
                return int(text)
            except ValueError:
                self._refuse(text, "is not an integer")
        if self.kind == "float":
            try:
                return float(text)
            except ValueError:
                self._refuse(text, "is not a number")
        return text

    def _refuse(self, text: str, why: str) -> None:
        shown = self.env if self.secret else f"{self.env}={text!r}"
        raise CliError(f"{shown} {why}")


@dataclass(frozen=True, slots=True)
class Resolved:
    """The settings given (by flag or variable), and where each came from."""

    values: dict[str, Any]
    origins: dict[str, str] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()
    flags: dict[str, str] = field(default_factory=dict)

    def label(self, name: str) -> str:
        """The flag or variable that gave ``name`` (its flag when neither did)."""
        return self.origins.get(name) or self.flags[name]

    def said(self, name: str, value: object) -> str:
        """``--port 70000`` or ``MCP_ADAPTER_PORT=70000``; a secret's value left out."""
        where = self.label(name)
        if name in self.secrets:
            return where
        return f"{where}={value}" if where.startswith(PREFIX) else f"{where} {value}"


def resolve(
    settings: tuple[Setting, ...], args: argparse.Namespace, environ: Mapping[str, str]
) -> Resolved:
    """Each setting from its flag, else its variable; the flag's variable is not read."""
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for setting in settings:
        value = getattr(args, setting.name)
        origin = setting.flag
        if value is None:
            raw = environ.get(setting.env)
            value = None if raw is None else setting.parse(raw)
            origin = setting.env
        if value is not None:
            values[setting.name] = value
            origins[setting.name] = origin
    return Resolved(
        values,
        origins,
        secrets=frozenset(s.name for s in settings if s.secret),
        flags={s.name: s.flag for s in settings},
    )
