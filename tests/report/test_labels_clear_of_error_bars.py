"""Value labels clear of error bars (issue 39, point 5): in every figure that draws a 95 % interval beside
a value label (the tcsexam index and solver figures, the rxn rates), no label's box touches a cap of an
error bar, measured with matplotlib's renderer after layout."""

from __future__ import annotations

import json
from pathlib import Path

from benchscore.common.html import Output
from benchscore.rxn import figures as rxn_figures
from benchscore.tcsexam import figures as tcsexam_figures


def _outputs(folder: Path, kind: str) -> list[Output]:
    return [Output(path=p, label=str(p.relative_to(folder)), sha256="0" * 64, doc=json.loads(p.read_text()),
                   kind=kind) for p in sorted(folder.rglob("*.json"))]


def touching(fig) -> list[str]:
    """Every value label whose box overlaps the box of an error bar's cap (1 px of slack)."""
    fig.draw_without_rendering()
    renderer = fig._get_renderer()
    found = []
    for ax in fig.axes:
        caps = [line.get_window_extent(renderer) for c in ax.containers if hasattr(c, "has_xerr")
                for line in c.lines[1]]
        for t in ax.texts:
            box = t.get_window_extent(renderer)
            for cap in caps:
                if min(box.x1, cap.x1) - max(box.x0, cap.x0) > 1 and min(box.y1, cap.y1) - max(box.y0, cap.y0) > 1:
                    found.append(f"{t.get_text()!r} touches a cap at x={cap.x0:.0f}-{cap.x1:.0f} px")
                    break
    return found


def test_the_checker_finds_a_label_on_a_cap():
    from benchscore.common import plot

    fig = plot.new_figure(4, 2)
    ax = fig.add_subplot()
    ax.barh(0, 0.5)
    plot.error_bar(ax, 0, 0.5, [0.4, 0.6])
    ax.text(0.6, 0, "0.5", va="center")
    assert touching(fig)


def test_the_tcsexam_solver_figure_s_labels_clear_its_error_bars(demo_out):
    outs = _outputs(demo_out / "tcsexam" / "solver-scores", "solver-score")
    assert len(outs) >= 10
    assert touching(tcsexam_figures._solver_figure(outs)) == []


def test_the_rxn_rates_figure_s_labels_clear_its_error_bars(demo_out):
    outs = _outputs(demo_out / "rxn", "eval")
    outs = [o for o in outs if o.doc.get("task")]
    rows = rxn_figures._rows(outs)
    assert touching(rxn_figures._rates_figure(rows, rxn_figures._intervals(outs), rxn_figures._chances(outs))) == []
