"""The CLI's one kind of failure: a clear line and a hint, no traceback."""

from __future__ import annotations


class CliError(Exception):
    """Printed as ``error: <message>`` and ``hint: <hint>``; exit status ``status``."""

    def __init__(
        self, message: str, hint: str = "", *, status: int = 2, details: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.status = status
        self.details = details
        """Further lines printed between the message and the hint (every compile problem)."""
