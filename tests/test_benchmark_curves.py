"""Scale suites' curves: drawn as one PNG per suite and linked from the suite's section."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks.harness.curves import Curve, Series, draw, image_name
from benchmarks.harness.suite import Measured, Suite, SuiteRun, suite_markdown

pytest.importorskip("matplotlib")

CURVE = Curve(
    "fan-out",
    "listeners",
    "p50 ms",
    [Series("ours", [(10, 1.0), (100, 2.0), (1000, 9.0)], ours=True), Series("peer", [(10, 2.0)])],
)


def test_curves_are_drawn_as_one_png(tmp_path: Path) -> None:
    path = tmp_path / image_name("listeners")
    assert draw([CURVE, CURVE, CURVE], "heading", path)
    assert path.read_bytes().startswith(b"\x89PNG")
    assert path.name == "benchmarks-listeners.png"


def test_nothing_to_draw_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "none.png"
    assert not draw([], "heading", path)
    assert not path.exists()


def test_the_suite_section_links_its_image() -> None:
    suite = Suite("listeners", "Listeners", {}, lambda _o: (), lambda _o: None, lambda _t: ())
    run = SuiteRun(suite, {}, (), measured=Measured(curves=[CURVE]))
    assert "![Listeners](benchmarks-listeners.png)" in suite_markdown(
        run, image=image_name("listeners")
    )
    assert "png" not in suite_markdown(run)
