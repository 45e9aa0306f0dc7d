"""``tools/call`` parity: every case, as a class tool and as a function tool, in both eras.

Compared field by field: each call's normalised result (``isError``, content,
``structuredContent``, ``_meta`` with incident ids replaced, or the protocol error),
and the container's journal (which services were built, each finalizer's outcome, what
the hooks saw). Each call's outcome must also be the one the case names. The text
rendering of a successful structured result is compared apart
(``test_content_matches``), so that a difference there does not hide the rest.
"""

from __future__ import annotations

import pytest

from tests.parity.cases import CASES
from tests.parity.kit import (
    Case,
    assert_same,
    check_expectations,
    observe,
    params,
    without_structured_content_text,
)

pytestmark = pytest.mark.anyio

STRUCTURED = [case for case in CASES if case.output is not None]


@pytest.mark.parametrize(("case", "era"), params(CASES))
async def test_results_match(case: Case, era: str) -> None:
    classes = await observe(case, "class", era)
    functions = await observe(case, "function", era)
    assert_same(
        [without_structured_content_text(result) for result in classes.calls],
        [without_structured_content_text(result) for result in functions.calls],
        f"{case.id} ({era}) calls",
    )
    assert_same(classes.journal, functions.journal, f"{case.id} ({era}) journal")
    check_expectations(case, classes, "class")
    check_expectations(case, functions, "function")


@pytest.mark.parametrize(("case", "era"), params(STRUCTURED, "content"))
async def test_content_matches(case: Case, era: str) -> None:
    classes = await observe(case, "class", era)
    functions = await observe(case, "function", era)
    check_expectations(case, classes, "class")
    assert_same(
        [result.get("content") for result in classes.calls],
        [result.get("content") for result in functions.calls],
        f"{case.id} ({era}) content",
    )
