"""The matrix's cases cover every pair of values of every two dimensions that a valid
combination can hold; the pairs no valid combination holds are the constraints' cases; the
generator is deterministic; every known-defect row still meets a case."""

from __future__ import annotations

import itertools

import pytest

from tests.composition.cases import (
    CONSTRAINED,
    DIMENSIONS,
    KNOWN,
    MATRIX,
    SERVER,
    allowed,
)
from tests.composition.pairwise import all_pairs, coverable_pairs, pairs_of


def every_pair() -> set[tuple[tuple[str, str], tuple[str, str]]]:
    return {
        ((a, x), (b, y))
        for a, b in itertools.combinations(DIMENSIONS, 2)
        for x in DIMENSIONS[a]
        for y in DIMENSIONS[b]
    }


def test_every_pair_a_valid_case_can_hold_is_in_a_case() -> None:
    covered = set().union(*(pairs_of(case.values, DIMENSIONS) for case in MATRIX))
    missing = coverable_pairs(DIMENSIONS, allowed) - covered
    assert not missing, sorted(missing)


def test_no_matrix_case_is_an_excluded_combination() -> None:
    assert [case.id for case in MATRIX if not allowed(case.values)] == []


def test_every_pair_no_valid_case_holds_is_a_constraints_case() -> None:
    """Nothing is dropped silently: what the matrix cannot hold, a constraint's case does."""
    left_out = every_pair() - coverable_pairs(DIMENSIONS, allowed)
    assert left_out  # the constraints do leave pairs out
    constrained = set().union(*(pairs_of(case.values, DIMENSIONS) for case in CONSTRAINED))
    assert not left_out - constrained, sorted(left_out - constrained)


def test_the_cases_are_deterministic_and_share_servers() -> None:
    again = all_pairs(DIMENSIONS, allowed, SERVER)
    assert [case.values for case in MATRIX] == again
    groups = {case.group for case in MATRIX}
    # at least one server per (transport, layers) pair; the cases share them
    assert len(groups) == len(DIMENSIONS["transport"]) * len(DIMENSIONS["layers"])
    assert len(MATRIX) > len(groups)


def test_the_generator_covers_pairs_under_a_constraint() -> None:
    dimensions = {"a": ("1", "2", "3"), "b": ("x", "y"), "c": ("p", "q"), "d": ("s", "t")}

    def no_3x(assignment: dict[str, str]) -> bool:
        return not (assignment["a"] == "3" and assignment["b"] == "x")

    found = all_pairs(dimensions, no_3x, server=("c", "d"))  # type: ignore[arg-type]
    covered = set().union(*(pairs_of(case, dimensions) for case in found))
    assert covered == coverable_pairs(dimensions, no_3x)  # type: ignore[arg-type]
    assert (("a", "3"), ("b", "x")) not in covered
    assert all(no_3x(case) for case in found)
    assert len(found) < 3 * 2 * 2 * 2


@pytest.mark.parametrize("row", KNOWN, ids=lambda row: row.reason[:40])
def test_every_known_defect_meets_a_case(row: object) -> None:
    assert any(row.matches(case) for case in (*MATRIX, *CONSTRAINED))  # type: ignore[attr-defined]
