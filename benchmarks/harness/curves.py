"""How a cost grows with the work: curves a scale suite measures, drawn as one PNG per suite.

A suite's ``measure`` returns them in :attr:`benchmarks.harness.suite.Measured.curves`;
``python -m benchmarks`` draws ``benchmarks-<suite>.png`` beside ``benchmarks.png`` (one
panel per curve, one line per contender) and links it from the suite's section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Series:
    """One contender's points ``(x, y)``: x the size of the work, y its cost."""

    name: str
    points: Sequence[tuple[float, float]]
    ours: bool = False
    """Drawn in the adapter's colour; peers are grey."""


@dataclass(frozen=True)
class Curve:
    """One panel: how one cost (``y_label``) grows with one size (``x_label``)."""

    title: str
    x_label: str
    y_label: str
    series: Sequence[Series]
    log_x: bool = True
    log_y: bool = False
    from_zero: bool = False
    """The y axis starts at 0 (linear y only): a flat cost then looks flat."""


_OURS = ("#1f77b4", "#2ca02c", "#17becf", "#9467bd")
_PEERS = ("#7f7f7f", "#d62728", "#ff7f0e", "#8c564b")


def image_name(suite: str) -> str:
    return f"benchmarks-{suite}.png"


def draw(curves: Sequence[Curve], heading: str, path: Path) -> bool:
    """Write ``curves`` as panels of one PNG; False when matplotlib is missing or there
    is nothing to draw."""
    if not curves:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    columns = min(2, len(curves))
    rows = -(-len(curves) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.6 * rows), squeeze=False)
    for ax, curve in zip(axes.flat, curves, strict=False):
        ours, peers = iter(_OURS), iter(_PEERS)
        for series in curve.series:
            xs = [x for x, _ in series.points]
            ys = [y for _, y in series.points]
            color = next(ours if series.ours else peers, "#000000")
            ax.plot(xs, ys, marker="o", markersize=3, color=color, label=series.name)
        if curve.log_x:
            ax.set_xscale("log")
        if curve.log_y:
            ax.set_yscale("log")
        elif curve.from_zero:
            ax.set_ylim(bottom=0)
        ax.set_title(curve.title, fontsize=9, loc="left")
        ax.set_xlabel(curve.x_label, fontsize=8)
        ax.set_ylabel(curve.y_label, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, linewidth=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(curves) :]:
        ax.set_visible(False)
    fig.suptitle(heading, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
