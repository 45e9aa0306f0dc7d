"""The CLI's one kind of failure: a clear line and a hint, no traceback."""

from __future__ import annotations

DEBUG_HINT = "run again with --debug to see the traceback"


class CliError(Exception):
    """Printed as ``error: <message>`` and ``hint: <hint>``; exit status ``status``.

    ``traceback``: a traceback would show more (the error wraps an exception of
    user code); without ``--debug`` the hint then ends by saying how to see it,
    and with ``--debug`` the traceback is printed instead of that advice.
    """

    def __init__(
        self,
        message: str,
        hint: str = "",
        *,
        status: int = 2,
        details: tuple[str, ...] = (),
        traceback: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.status = status
        self.details = details
        """Further lines printed between the message and the hint (every compile problem)."""
        self.traceback = traceback

    def lines(self, *, debug: bool) -> list[str]:
        """What is printed on stderr: the error, its details, then one hint line."""
        hints = [self.hint] if self.hint else []
        if self.traceback and not debug:
            hints.append(DEBUG_HINT)
        lines = [f"error: {self.message}", *(f"  {line}" for line in self.details)]
        if hints:
            lines.append(f"hint: {'; '.join(hints)}")
        return lines
