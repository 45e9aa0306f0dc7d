"""``tools/list`` parity: the entry of every case's tool, as a class tool and as a function
tool, in both eras: ``inputSchema`` (without the input model's title), ``outputSchema``,
``description``, ``title``, ``annotations``, ``_meta``, and whether it is listed at all.
"""

from __future__ import annotations

import pytest

from tests.parity.cases import CASES
from tests.parity.kit import Case, assert_same, observe, params

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("case", "era"), params(CASES, "listing"))
async def test_listings_match(case: Case, era: str) -> None:
    classes = await observe(case, "class", era)
    functions = await observe(case, "function", era)
    assert [entry["name"] for entry in classes.listed] == ([case.tool] if case.listed else [])
    assert_same(classes.listed, functions.listed, f"{case.id} ({era}) tools/list")
