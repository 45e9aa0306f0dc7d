"""Where each ``serve`` setting comes from: its flag, else its ``MCP_ADAPTER_*`` variable.

One rule for every setting: the flag wins; without it the variable named after the
setting (``--max-body-size``: ``MCP_ADAPTER_MAX_BODY_SIZE``) is read; without either
the setting keeps its default. An empty variable counts as unset. Repeatable flags
(``--scope``) take a comma-separated variable (``MCP_ADAPTER_SCOPES``); switches
(``--http``) take ``1``/``0``, ``true``/``false``, ``yes``/``no`` or ``on``/``off``.
A value the variable cannot hold is a one-line error naming the variable; a
secret's value is never echoed.

A credential (a key, a token) may also come from a file: ``--request-state-key-file
PATH`` or ``MCP_ADAPTER_REQUEST_STATE_KEYS_FILE=PATH`` stand for the flag and the
variable (one of each pair at most). Given as the flag itself, it is in the command
line, which every user of the machine reads (``ps``, ``/proc/PID/cmdline``): it still
works, with one warning on stderr naming the safer ways.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_adapter.cli.errors import CliError

PREFIX = "MCP_ADAPTER_"

Kind = Literal["text", "int", "float", "switch", "list"]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
MAX_FILE_BYTES = 65536
"""The most a credential's file may hold (64 KiB): more is no key or token."""


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    """The ``ServeOptions`` field (and the parsed flag's ``dest``)."""
    flag: str
    kind: Kind
    help: str
    metavar: str | None = None
    secret: bool = False
    """Never echoed in an error (request-state keys, a Redis URL)."""
    credential: bool = False
    """A key or token, so a secret too: it may also come from a file (:attr:`file_flag`,
    :attr:`file_env`), and given as the flag it draws a warning (the process list shows it)."""

    def __post_init__(self) -> None:
        if self.credential and not self.secret:
            raise ValueError(f"{self.flag}: a credential is a secret too")

    @property
    def env(self) -> str:
        return PREFIX + self.name.upper()

    @property
    def file_flag(self) -> str:
        return f"{self.flag}-file"

    @property
    def file_env(self) -> str:
        return f"{self.env}_FILE"

    @property
    def forms(self) -> tuple[tuple[str, str], ...]:
        """``(flag, variable)`` pairs that give it: its own, and a credential's file's."""
        own = ((self.flag, self.env),)
        return (*own, (self.file_flag, self.file_env)) if self.credential else own

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(env for _, env in self.forms)

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
        if self.credential:
            lines = " (one per line)" if self.kind == "list" else ""
            parser.add_argument(
                self.file_flag,
                dest=f"{self.name}_file",
                metavar="PATH",
                help=f"{self.flag} read from this file{lines}, out of the process list "
                f"(env {self.file_env})",
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

    def read(self, path: str, label: str) -> Any:
        """The value the file at ``path`` holds, as the variable would (a list: one per
        line, or comma-separated); ``label`` names where the path came from."""
        try:
            with open(path, "rb") as file:
                data = file.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise CliError(f"{label}: {exc.strerror or exc}") from None
        if len(data) > MAX_FILE_BYTES:
            raise CliError(f"{label} holds more than {MAX_FILE_BYTES} bytes: no {self.flag}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise CliError(f"{label} is not UTF-8 text") from None
        value = self.parse(",".join(text.splitlines()) if self.kind == "list" else text)
        if value is None:
            raise CliError(f"{label} is empty")
        return value

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
    """Each setting from its flag, else its variable; the flag's variable is not read.
    A credential given as its flag is warned about, once, on stderr."""
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for setting in settings:
        value, origin = _given(setting, args, environ)
        if value is not None:
            values[setting.name] = value
            origins[setting.name] = origin
            if setting.credential and origin == setting.flag:
                print(
                    f"warning: {setting.flag} on the command line is visible to every user "
                    f"of this machine (ps); give it as {setting.env} or {setting.file_flag} "
                    "PATH",
                    file=sys.stderr,
                    flush=True,
                )
    return Resolved(
        values,
        origins,
        secrets=frozenset(s.name for s in settings if s.secret),
        flags={s.name: s.flag for s in settings},
    )


def _given(
    setting: Setting, args: argparse.Namespace, environ: Mapping[str, str]
) -> tuple[Any, str]:
    """The setting's value (``None``: not given) and the flag or variable that gave it."""
    value = getattr(args, setting.name)
    path = getattr(args, f"{setting.name}_file", None) if setting.credential else None
    if value is not None and path is not None:
        raise CliError(f"{setting.flag} and {setting.file_flag} are both given", "give one of them")
    if value is not None:
        return value, setting.flag
    if path is not None:
        return setting.read(path, f"{setting.file_flag} {path}"), setting.file_flag
    raw = environ.get(setting.env)
    value = None if raw is None else setting.parse(raw)
    if not setting.credential:
        return value, setting.env
    path = (environ.get(setting.file_env) or "").strip()
    if not path:
        return value, setting.env
    if value is not None:
        raise CliError(f"{setting.env} and {setting.file_env} are both set", "set one of them")
    return setting.read(path, f"{setting.file_env}={path}"), setting.file_env
