"""``benchscore leaderboard`` on contract outputs: compare's standings, the reproduced mark only where
``benchscore verify`` reproduced the output, and Mira outputs only through their public projection."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

ENV = {"SOURCE_DATE_EPOCH": "1767225600"}
REPO = Path(__file__).resolve().parents[1]


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert result.exit_code == expect, result.output
    return result


@pytest.fixture(scope="module")
def rxn(tmp_path_factory) -> dict[str, Path]:
    """Three evaluations of the deoxyfluorination MC questions: best, seeded random and worst answers."""
    root = tmp_path_factory.mktemp("lb-rxn")
    run("rxn", "build-mc", "--bundled", "deoxyfluorination", "--output-dir", root)
    folder = next(root.glob("*_multiple_choice"))
    types = ("all_varying", "single_varying")
    data = {q: json.loads((folder / f"multiple_choice_{q}.json").read_text())["samples"] for q in types}
    preds: dict[str, dict] = {"random": {}, "best": {}, "worst": {}}
    for q in types:
        preds["random"].update(json.loads((folder / f"example_prediction_{q}.json").read_text()))
        for s in data[q]:
            preds["best"][s["id"]] = s["answer"][0]
            preds["worst"][s["id"]] = int(np.argmin(s["meta"]["option_relative_scores"]))
    outs = {}
    for name, p in preds.items():
        (root / f"{name}.pred.json").write_text(json.dumps(p))
        outs[name] = root / f"{name}.json"
        run("rxn", "eval-mc", *(a for q in types for a in ("--dataset", folder / f"multiple_choice_{q}.json")),
            "--prediction", root / f"{name}.pred.json", "--output", outs[name])
    return outs


def test_contract_outputs_are_marked_reproduced_only_when_verify_reproduces_them(rxn, tmp_path):
    site = tmp_path / "site"
    run("leaderboard", rxn["best"], rxn["random"], rxn["worst"], "--output-dir", site, "--resamples", "200")
    doc = orjson.loads((site / "leaderboard.json").read_bytes())
    compared = run("compare", rxn["best"], rxn["random"], rxn["worst"], "--resamples", "200",
                   "--output", tmp_path / "c.json")
    assert compared.exit_code == 0
    standings = orjson.loads((tmp_path / "c.json").read_bytes())["leaderboards"]
    for board in doc["metrics"]:  # compare's statistics, not a second implementation
        assert [(r["label"], r["value"], r["rank_range"], r["groups"]) for r in board["rows"]] == [
            (s["label"], s["value"], s["rank_range"], s["groups"]) for s in standings[board["name"]]]
        assert all(r["reproduced"] is True and r["reproduced_reason"].startswith("reproduced") for r in board["rows"])
        assert all(r["counts"] is None and r["counts_reason"] for r in board["rows"])
    page = (site / "index.html").read_text()
    assert page.count("&#10003; reproduced") == 3 * len(doc["metrics"])
    # the best answers are separated from the worst: their rank intervals do not overlap
    rows = {r["label"]: r for r in doc["metrics"][0]["rows"]}
    assert rows["best.json"]["rank_range"] == [1, 1] and rows["worst.json"]["rank_range"][0] >= 2
    # an edited output (a value compare does not read) is no longer reproduced: no mark
    edited = tmp_path / "edited" / "random.json"
    edited.parent.mkdir()
    raw = json.loads(rxn["random"].read_text())
    raw["overall"]["num_without_yield"] += 1  # a count beside the numbers, not an item
    edited.write_text(json.dumps(raw))
    run("leaderboard", rxn["best"], edited, rxn["worst"], "--output-dir", tmp_path / "site2", "--resamples", "200")
    doc2 = orjson.loads((tmp_path / "site2" / "leaderboard.json").read_bytes())
    marks = {r["label"]: (r["reproduced"], r["reproduced_reason"]) for r in doc2["metrics"][0]["rows"]}
    assert marks["best.json"][0] is True and marks["worst.json"][0] is True
    assert marks["random.json"][0] is False and "reproduced" not in marks["random.json"][1].split(":")[0]
    page2 = (tmp_path / "site2" / "index.html").read_text()
    assert page2.count("&#10003; reproduced") == 2 * len(doc2["metrics"])


def test_a_mira_score_is_refused_pointing_to_its_public_projection(tmp_path):
    from benchscore.mira.cli import demo

    out = tmp_path / "demo"
    demo(out)
    score = out / "score.json"
    res = run("leaderboard", score, score.with_name("score_incomplete.json"), "--output-dir", tmp_path / "site",
              expect=2)
    line = res.output.strip()
    assert "\n" not in line and "benchscore mira project --score" in line and "public projection" in line
    assert not (tmp_path / "site").exists()


MIRA = REPO / "examples" / "mira"


def _mira(tmp_path: Path, name: str, change=None) -> tuple[Path, Path]:
    """A mira score of the example's repetitions (changed by ``change``) and its public projection."""
    rows = [json.loads(line) for line in (MIRA / "repetitions.jsonl").read_text().splitlines()]
    if change:
        change(rows)
    reps = tmp_path / f"{name}.jsonl"
    reps.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score, public = tmp_path / f"{name}.json", tmp_path / f"{name}.public.json"
    run("mira", "score", "--contract", MIRA / "contract.json", "--repetitions", reps, "--output", score, "--quiet")
    run("mira", "project", "--score", score, "--output", public, "--quiet")
    return score, public


def _fail_adv03(rows):
    for r in rows:
        if r["case_id"] == "ADV-03" and r["repetition"] in (1, 2):
            r["deterministic_results"] = {"correct-answer": False}


def test_mira_public_projections_are_compared_as_their_scores_and_published(tmp_path):
    (sa, pa), (sb, pb) = _mira(tmp_path, "a"), _mira(tmp_path, "b", _fail_adv03)
    run("compare", sa, sb, "--output", tmp_path / "scores.json")
    run("compare", pa, pb, "--output", tmp_path / "public.json")
    scores, public = (orjson.loads((tmp_path / f).read_bytes()) for f in ("scores.json", "public.json"))
    keys = ("name", "a", "b", "difference", "verdict", "p_value", "ci95", "n_items", "items_that_differ_most")
    assert [{k: m[k] for k in keys} for m in public["comparisons"][0]["metrics"]] == [
        {k: m[k] for k in keys} for m in scores["comparisons"][0]["metrics"]]
    run("leaderboard", pa, pb, "--output-dir", tmp_path / "site")
    doc = orjson.loads((tmp_path / "site" / "leaderboard.json").read_bytes())
    assert doc["kind"] == "mira public projection"
    assert [b["name"] for b in doc["metrics"]] == ["task_success", "reliability", "pass_at_1", "stable_at_3",
                                                   "complete_at_3"]
    for board in doc["metrics"]:
        assert all(r["reproduced"] is True for r in board["rows"]), board["rows"]
    ts = doc["metrics"][0]["rows"]
    assert [r["label"] for r in ts] == ["a.public.json", "b.public.json"]
    assert ts[0]["ci95"] == orjson.loads(pa.read_bytes())["intervals"]["overall"]["task_success"]["ci95"]
    assert ts[0]["ci_method"] == "cluster_wilson"
    pair = doc["metrics"][0]["adjacent_pairs"][0]
    assert [d["item"] for d in pair["items_that_differ_most"]] == ["ADV-03"]


def test_verify_recomputes_a_leaderboard_of_contract_outputs(rxn, tmp_path):
    site = tmp_path / "site"
    run("leaderboard", rxn["best"], rxn["worst"], "--output-dir", site, "--resamples", "200")
    res = run("verify", site / "leaderboard.json", "--search", rxn["best"].parent)
    assert "reproduced" in res.output
    doc = json.loads((site / "leaderboard.json").read_text())
    doc["metrics"][0]["rows"][0]["value"] = 0.5
    (site / "leaderboard.json").write_text(json.dumps(doc))
    res = run("verify", site / "leaderboard.json", "--search", rxn["best"].parent, expect=1)
    assert "metrics[0].rows[0].value: 0.5 in the file" in res.output


# --- the page's axis and the top of the board (issue 35 point 6, issue 37 point 6) ---------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from benchscore.publish import leaderboard as L  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(st.floats(-1e6, 1e6), st.floats(0, 1e6), st.sampled_from([(None, None), (0.0, 1.0), (0.0, None),
                                                                   (0.0, 100.0)]))
def test_round_ticks_cover_the_values_inside_the_bounds(low, span, bounds):
    """The axis covers the values (clipped to the metric's bounds), never leaves the bounds, and its ticks
    are round: equal steps of 1, 2 or 5 times a power of ten, 2 to 11 of them, each a multiple of the step."""
    import math

    lo_b, hi_b = bounds
    if lo_b is not None:
        low = min(max(low, lo_b), hi_b if hi_b is not None else math.inf)
    high = low + span
    if hi_b is not None:
        high = min(high, hi_b)
    start, end, ticks = L.round_ticks(low, high, bounds)
    assert start <= low + 1e-9 * max(1, abs(low)) and end >= high - 1e-9 * max(1, abs(high))
    assert (lo_b is None or start >= lo_b) and (hi_b is None or end <= hi_b)
    assert 2 <= len(ticks) <= 11 and all(start - 1e-9 * max(1, abs(start)) <= t <= end + 1e-9 * max(1, abs(end))
                                          for t in ticks)
    step = (ticks[1] - ticks[0])
    power = 10 ** math.floor(math.log10(step) + 1e-12)
    assert round(step / power, 6) in (1.0, 2.0, 5.0, 10.0), (ticks, step)
    for a, b in zip(ticks, ticks[1:], strict=False):
        assert b - a == pytest.approx(step, rel=1e-6)
    for t in ticks:
        assert abs(t / step - round(t / step)) < 1e-6 * max(1.0, abs(t / step))
    shown = [L.tick_text(t, step) for t in ticks]  # labels that differ, each the tick's value
    assert len(set(shown)) == len(shown) and all(float(x) == pytest.approx(t, abs=step / 100)
                                                 for x, t in zip(shown, ticks, strict=True))


@given(st.lists(st.integers(0, 6), min_size=0, max_size=120), st.integers(1, 60))
def test_the_forest_plot_draws_the_top_and_never_cuts_a_tie(raw, top):
    values = sorted((v / 6 for v in raw), reverse=True)
    k = L.plotted_rows(values, top)
    assert k == min(len(values), top) or (k > top and values[k - 1] == values[top - 1])
    assert k == len(values) or k < top or values[k] != values[top - 1]


def test_label_widths_are_measured_wide_enough():
    """A text's measured width grows with its characters; a wide letter counts more than a narrow one."""
    assert L.text_width("WWWW") > L.text_width("iiii") > 0
    assert L.text_width("model") == pytest.approx(sum(L.text_width(c) for c in "model"))
    assert L.text_width("\u6a21\u578b") == pytest.approx(2 * 1.05 * 11)
