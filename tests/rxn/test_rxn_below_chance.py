"""Below chance (issue 39, point 5): an rxn evaluation whose 95 % interval lies below what a uniform random
answer scores says so in the JSON output (``below_chance``), the terminal (``BELOW CHANCE``), the page (the
summary row and the chance banner) and the figure (the chance level drawn on each bar)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common import html, plot
from benchscore.rxn import figures
from benchscore.rxn.chance import below_chance
from benchscore.rxn.formats import FillInBlankMetrics, MultipleChoiceMetrics

ENV = {"SOURCE_DATE_EPOCH": "1767225600"}


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert result.exit_code == expect, result.output
    return result


def test_below_chance_is_the_interval_below_the_level_else_the_value():
    assert below_chance(0.38, 0.61, [0.3, 0.46]) is True
    assert below_chance(0.38, 0.61, [0.3, 0.7]) is False  # the interval reaches chance: not told apart from it
    assert below_chance(0.38, 0.61) is True and below_chance(0.7, 0.61) is False
    assert below_chance(None, 0.61) is None and below_chance(0.38, None) is None


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory) -> dict[str, Path]:
    """The bundled deoxyfluorination MC set answered with its worst and with its best options."""
    root = tmp_path_factory.mktemp("below-chance")
    run("rxn", "build-mc", "--bundled", "deoxyfluorination", "--output-dir", root, "--name", "mc")
    dataset = root / "mc" / "multiple_choice_all_varying.json"
    samples = json.loads(dataset.read_text())["samples"]
    outs = {}
    for name, pick in (("worst", np.argmin), ("best", np.argmax)):
        (root / f"{name}.pred.json").write_text(json.dumps(
            {s["id"]: int(pick(s["meta"]["option_relative_scores"])) for s in samples}))
        outs[name] = root / f"{name}.json"
        outs[f"{name}.terminal"] = run("rxn", "eval-mc", "--dataset", dataset, "--prediction", root / f"{name}.pred.json",
                                       "--output", outs[name]).output
    return outs


def test_the_output_and_the_terminal_flag_a_result_below_chance(evaluations):
    worst = json.loads(evaluations["worst"].read_text())
    assert worst["below_chance"]["overall"] == ["avg_relative_score", "exact_match_accuracy"]
    assert worst["below_chance"]["rule"].startswith("below chance: the 95 % interval's upper end")
    assert worst["intervals"]["overall"]["avg_relative_score"]["ci95"][1] < worst["chance"]["overall"]["avg_relative_score"]
    lines = [x for x in evaluations["worst.terminal"].splitlines() if x.startswith("BELOW CHANCE")]
    assert [x.split(":")[0] for x in lines] == ["BELOW CHANCE (overall)"] * 2
    assert "avg_relative_score 0.2" in lines[0] and "the chance level 0.5" in lines[0]
    best = json.loads(evaluations["best"].read_text())
    assert best["below_chance"]["overall"] == []
    assert "BELOW CHANCE" not in evaluations["best.terminal"]


def test_the_page_and_the_figure_flag_it_and_mark_chance(evaluations, tmp_path):
    page = tmp_path / "report.html"
    run("report", evaluations["worst"], evaluations["best"], "--output", page)
    text = page.read_text().replace("<wbr>", "")
    summary = text.split('<table class="summary">', 1)[1].split("</table>", 1)[0]
    rows = summary.split("<tr>")
    assert "BELOW CHANCE: avg_relative_score, exact_match_accuracy" in next(r for r in rows if "worst.json" in r)
    assert "BELOW CHANCE" not in next(r for r in rows if "best.json" in r)
    assert '<p class="banner warn"><strong>NOTE</strong> BELOW CHANCE (avg_relative_score, exact_match_accuracy)' \
        in text
    outputs = [html.Output(path=p, label=p.name, sha256="0" * 64, doc=json.loads(p.read_text()), kind="eval")
               for p in (evaluations["worst"], evaluations["best"])]
    fig = figures._rates_figure(figures._rows(outputs), figures._intervals(outputs), figures._chances(outputs))
    ax = fig.axes[0]
    marks = [line for line in ax.get_lines() if line.get_linestyle() not in ("None", "")]
    levels = {round(float(line.get_xdata()[0]), 6) for line in marks}
    chance = outputs[0].doc["chance"]["overall"]
    assert levels == {round(chance["avg_relative_score"], 6), round(chance["exact_match_accuracy"], 6)}
    labels = [t.get_text() for t in ax.texts]
    assert sum("BELOW CHANCE" in t for t in labels) == 2
    assert "chance level" in [t.get_text() for t in fig.legends[0].get_texts()]


@pytest.mark.parametrize("model", [MultipleChoiceMetrics, FillInBlankMetrics])
def test_one_colour_per_metric_within_a_figure(model):
    """The rates of one task share a figure: each its own colour (best_hit_rate_among_scored and
    avg_yield_ratio shared a green); the counts likewise."""
    fields = list(model.model_fields)
    for names in ([f for f in fields if not f.startswith("num_")], [f for f in fields if f.startswith("num_")]):
        colours = [plot.metric_colour(n) for n in names]
        assert len(set(colours)) == len(colours), dict(zip(names, colours, strict=True))
