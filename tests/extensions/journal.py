"""Services for the extension tests that watch one call's scope: a journal and a session."""

from __future__ import annotations

from collections.abc import Iterator

from container import Container


class Journal:
    """A singleton log shared by the scoped services below."""

    def __init__(self) -> None:
        self.events: list[str] = []


class Session:
    """A scoped service with a finalizer: one per call."""

    def __init__(self, journal: Journal, number: int) -> None:
        self.journal = journal
        self.number = number


def journal_container(journal: Journal) -> Container:
    """``Journal`` as an instance, and a ``Session`` numbered 1, 2, ... per scope, logged
    when it opens and when it closes."""
    opened = iter(range(1, 1000))

    def open_session(journal: Journal) -> Iterator[Session]:
        session = Session(journal, next(opened))
        journal.events.append(f"open {session.number}")
        yield session
        journal.events.append(f"close {session.number}")

    container = Container()
    container.instance(Journal, journal)
    container.scoped(Session, open_session)
    return container
