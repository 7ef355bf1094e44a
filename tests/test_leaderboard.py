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


def _stand_in(n: int, items: int = 200, seed: int = 37) -> tuple[dict, list]:
    """Compare's document and entries for a board of ``n`` models, with a stand-in for the statistics
    (computing ranks at this size is compare's job, tested there): accuracies spread over [0.2, 0.95]
    with four tied at places 49-52, two results separated when their values are more than 0.03 apart
    (rank intervals, groups and the not-separated lists follow from that), verdicts of the pairs at most
    NEIGHBOURS places apart. Items are 0/1 per sample, so each result's standard error is its own."""
    from benchscore.stats import compare as C
    from benchscore.stats import paired as P

    rng = np.random.default_rng(seed)
    values = np.sort(rng.uniform(0.2, 0.95, n))[::-1]
    values[48:52] = values[48]
    labels = [f"org-{k % 97:02d}/model-{k:04d}" + ("-instruct-2025-preview" if k % 5 == 0 else "") for k in range(n)]
    far = np.abs(values[:, None] - values[None, :]) > 0.03
    rows = far.tolist()
    entries, standings = [], []
    for i, label in enumerate(labels):
        hits = rng.random(items) < values[i]
        m = C.Metric("score", float(hits.mean()), {f"s{j}": (float(h), 1.0) for j, h in enumerate(hits)},
                     binary=True, bounds=(0.0, 1.0), ci95=[float(values[i]) - 0.05, float(values[i]) + 0.05],
                     ci_method="exact_mid_p",
                     counts={"samples": items, "sample_epochs": items, "scored": items, "errored": 0, "unscored": 0,
                             "missing": 0, "limited": 0, "retried": 0, "excluded": 0, "errors": "as-wrong"})
        entries.append(C.Entry(label, "inspect_ai results", {"task": "quiz"}, [m]))
    try:
        groups = P.letters(list(range(n)), lambda i, j: rows[i][j])
        reason = None
    except P.TooManyGroups as exc:
        groups, reason = None, str(exc)
    above = np.cumsum(far, axis=1)  # separated results above (values are sorted: a smaller index is higher)
    for i, label in enumerate(labels):
        better = int(above[i, i]) if i else 0
        worse = int(far[i, i + 1:].sum())
        standings.append({"label": label, "value": float(values[i]), "ci95": entries[i].metrics[0].ci95,
                          "ci_method": "exact_mid_p", "rank_range": [1 + better, n - worse],
                          "groups": None if groups is None else groups[i],
                          **({"groups_reason": reason} if reason else {}),
                          "indistinguishable_from": [labels[j] for j in np.flatnonzero(~far[i]) if j != i],
                          "equal_to": [], "counts": entries[i].metrics[0].counts})
    comparisons = []
    for i in range(n):
        for j in range(i + 1, min(n, i + L.NEIGHBOURS + 1)):
            d = float(values[i] - values[j])
            verdict = "differs" if far[i, j] else "not_separated"
            comparisons.append({"a": labels[i], "b": labels[j], "metrics": [{
                "name": "score", "a": float(values[i]), "b": float(values[j]), "difference": d, "verdict": verdict,
                "verdict_reason": "stand-in: apart by more than 0.03" if far[i, j] else "stand-in: within 0.03",
                "ci95": [d - 0.03, d + 0.03], "ci_level": 0.99999, "ci_method": "mcnemar_inversion",
                "p_value": 1e-7 if far[i, j] else 0.5, "p_holm": 1e-3 if far[i, j] else 1.0, "test": "mcnemar_exact",
                "smallest_attainable_p": 1e-60, "n_items": items, "n_units": items, "standard_error": None,
                "minimum_detectable_effect": None, "items_that_differ_most": []}]})
    doc = {"format": "benchscore-compare", "kind": "inspect_ai results", "same": {"task": "quiz"}, "results": labels,
           "alpha": 0.05, "level": 0.95, "comparisons": comparisons, "leaderboards": {"score": standings},
           "not_compared": {}, "intersection": None}
    return doc, entries


@pytest.mark.slow
def test_a_site_of_2000_models_stays_readable_and_small(tmp_path, monkeypatch, capsys):
    """2,000 results: the forest plot draws the first 50 and the ones tied with the 50th, the table every
    result, a page per result with its verdicts against its neighbours (no page per pair); the whole
    site under 60 MB, index.html under 8 MB; leaderboard.json valid; written all or nothing."""
    import re

    from benchscore.common.atomic import dumps_json
    from benchscore.common.errors import BadInput
    from benchscore.common.provenance import provenance, sha256_bytes
    from benchscore.sources.every_eval_ever import validate_aggregate

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    n = 2000
    doc, entries = _stand_in(n)
    reproduced = {e.label: (None, "results of another tool: no benchscore command to re-run") for e in entries}
    board = L.build(doc, entries, reproduced)
    board["provenance"] = provenance(L.FORMAT, {}, seed=16)
    L.formats()[L.FORMAT].model_validate(board)
    (metric,) = board["metrics"]
    assert metric["pages"] == "result" and metric["adjacent_pairs"] == [] and metric["plotted"] == 52
    assert len(metric["neighbour_pairs"]) == sum(min(L.NEIGHBOURS, n - 1 - i) for i in range(n))
    rows = metric["rows"]
    assert rows[0]["groups"] is None and "rank interval alone" in rows[0]["groups_reason"]
    assert all(r["indistinguishable_from"] is None and r["indistinguishable_reason"] for r in rows)
    about = {e.label: {"created": "2026-01-01T00:00:00Z", "library": ("inspect_ai", "0.3.285"), "dataset": "quiz"}
             for e in entries}
    records = L.eee_records(board, about, sha256_bytes(dumps_json(board)))
    pages = L.render(board)
    site = tmp_path / "site"
    L.write_site(site, board, records, pages, validate_aggregate)
    sizes = {p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*") if p.is_file()}
    total, index = sum(sizes.values()), sizes["index.html"]
    with capsys.disabled():
        print(f"\n2,000-model site: {len(sizes)} files, {total / 1e6:.1f} MB in all, index.html {index / 1e6:.2f} MB, "
              f"leaderboard.json {sizes['leaderboard.json'] / 1e6:.1f} MB, result pages "
              f"{sum(v for k, v in sizes.items() if k.startswith('result-')) / 1e6:.1f} MB")
    assert total < 60e6 and index < 8e6
    assert sorted(k for k in sizes if k.startswith("result-")) == sorted(r["page"] for r in rows)
    assert not [k for k in sizes if k.startswith("pair-")]
    page = (site / "index.html").read_text()
    assert page.count('<g class="row"') == 52 and page.count("<tr data-label=") == n
    assert "the first 52 of 2000 results (the first 50 and 2 tied with the 50th)" in page
    # a result in the middle: its 10 neighbours on each side, each verdict from its own side
    mid = rows[1000]
    text = (site / mid["page"]).read_text()
    shown = re.findall(r'<tr data-label="([^"]+)">', text)
    assert shown == [r["label"] for r in rows[990:1011] if r is not mid]
    assert f"not separated from {mid['n_indistinguishable']} of the 1999 other results" in text
    first = (site / rows[0]["page"]).read_text()
    assert re.findall(r'<tr data-label="([^"]+)">', first) == [r["label"] for r in rows[1:11]]
    # all or nothing: a write that fails once every file is written (the flush to disk) leaves the earlier site
    before = {k: (site / k).read_bytes() for k in ("leaderboard.json", "index.html", rows[7]["page"])}

    def full_disk(folder, target):
        raise BadInput("cannot write the output: No space left on device", source=target)

    monkeypatch.setattr(L, "_flush", full_disk)
    with pytest.raises(BadInput, match="No space left"):
        L.write_site(site, board, records, {**pages, "index.html": "changed"}, validate_aggregate)
    assert {k: (site / k).read_bytes() for k in before} == before
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) == sorted(sizes)
    assert not [p for p in tmp_path.iterdir() if p.name != "site"]


def test_record_names_are_unique_and_never_end_in_json_twice():
    from benchscore.publish.leaderboard import record_names

    names = record_names(["e1.json", "e1", "org/model", "org model", ".json", ".."])
    assert names["e1.json"] == "e1" and names["e1"] == "e1-2"
    assert len(set(names.values())) == 6 and not any(n.endswith(".json") or n.startswith(".") for n in names.values())
