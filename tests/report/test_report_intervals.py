"""issue 16: the report draws the 95 % intervals as error bars, and a comparison page for compare outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.container import ErrorbarContainer
from report_helpers import EXAMPLES, invoke

from benchscore.common.html import Output


def _output(path: Path, kind: str) -> Output:
    return Output(path=path, label=path.name, sha256="0" * 64, doc=json.loads(path.read_text()), kind=kind)


def _bars(fig) -> list[tuple[float, float]]:
    """Every error bar of a figure as (low, high) along its value axis."""
    out = []
    for ax in fig.axes:
        for c in ax.containers:
            if isinstance(c, ErrorbarContainer):
                (segments,) = [lc.get_segments() for lc in c.lines[2]]
                out.extend((float(s[0][0]), float(s[1][0])) for s in segments)
    return out


def test_rxn_rates_have_their_intervals_as_error_bars(tmp_path):
    from benchscore.rxn import figures as F

    # the bundled deoxyfluorination set has dozens of condition tables (the example's one or two have none)
    assert invoke("rxn", "build-mc", "--bundled", "deoxyfluorination", "--output-dir", str(tmp_path)).exit_code == 0
    folder = next(tmp_path.glob("*_multiple_choice"))
    assert invoke("rxn", "eval-mc", "--dataset", str(folder / "multiple_choice_all_varying.json"), "--prediction",
                  str(folder / "example_prediction_all_varying.json"), "--output", str(tmp_path / "e.json")).exit_code == 0
    out = _output(tmp_path / "e.json", "eval")
    fig = F._rates_figure(F._rows([out]), F._intervals([out]))
    cis = out.doc["intervals"]
    want = sorted(tuple(r["ci95"]) for block in [*cis["per_dataset"].values(), cis["overall"]] for r in block.values()
                  if r["ci95"])
    assert want and sorted(set(_bars(fig))) == sorted(set(want))  # one dataset: its rates are the overall ones


def test_tcsexam_index_track_means_and_relative_score_have_error_bars(tmp_path):
    from benchscore.tcsexam import figures as F

    out = _output(EXAMPLES / "tcsexam" / "seed-example" / "expected" / "index.json", "index")
    want = sorted(tuple(r["ci95"]) for m in out.doc["models"].values()
                  for r in [m["intervals"]["index"], *m["intervals"]["track_means"].values()] if r["ci95"])
    got = sorted(_bars(F._index_figure(out.doc["models"])))
    assert len(got) == len(want) and all(g == pytest.approx(w) for g, w in zip(got, want, strict=True))
    from benchscore.tcsexam.commands import run_demo

    run_demo(tmp_path / "demo")  # the seed example's Solver task has 2 scored instances: no interval
    path = next((tmp_path / "demo" / "solver-scores").rglob("attempt-1.json"))
    solver = _output(path, "solver-score")
    (bar,) = _bars(F._solver_figure([solver]))
    assert bar == pytest.approx(tuple(solver.doc["intervals"]["relative_score"]["ci95"]))


def test_a_compare_output_gets_a_comparison_page(tmp_path):
    a, b = EXAMPLES / "mira" / "expected" / "score.json", tmp_path / "b.json"
    doc = json.loads(a.read_text())
    b.write_text(json.dumps(doc))
    cmp = tmp_path / "cmp.json"
    assert invoke("compare", str(a), str(b), "--output", str(cmp)).exit_code == 0
    page = tmp_path / "page.html"
    r = invoke("report", str(cmp), "--output", str(page))
    assert r.exit_code == 0, r.output
    text = page.read_text()
    assert "compare: paired differences between outputs" in text
    assert "score.json - b.json: each difference with its interval." in text
    assert text.count("<svg") >= 1 and "minimum detectable effect" in text
