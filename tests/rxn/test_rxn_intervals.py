"""The 95 % intervals beside rxn eval-mc / eval-fib headline metrics, clustered by condition table (issues 16, 29)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.rxn import metrics
from benchscore.stats import intervals as S


def run(*args):
    result = CliRunner().invoke(cli, ["rxn", *map(str, args)], env={"SOURCE_DATE_EPOCH": "1767225600"})
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("rxn-ci")
    run("build-mc", "--bundled", "deoxyfluorination", "--output-dir", root)
    run("build-fib", "--bundled", "deoxyfluorination", "--output-dir", root)
    return next(root.glob("*_multiple_choice")), next(root.glob("*_fill_in_blank"))


def _samples(path: Path) -> list[dict]:
    return json.loads(path.read_text())["samples"]


def _merged_predictions(folder: Path, types: list[str], tmp: Path) -> Path:
    merged: dict = {}
    for q in types:
        merged.update(json.loads((folder / f"example_prediction_{q}.json").read_text()))
    (tmp / "p.json").write_text(json.dumps(merged))
    return tmp / "p.json"


def test_multiple_choice_intervals_are_clustered_by_condition_table(build, tmp_path):
    mc = build[0]
    types = ["all_varying", "single_varying"]
    pred = _merged_predictions(mc, types, tmp_path)
    run("eval-mc", *(a for q in types for a in ("--dataset", mc / f"multiple_choice_{q}.json")),
        "--prediction", pred, "--output", tmp_path / "e.json")
    out = json.loads((tmp_path / "e.json").read_text())
    preds = json.loads(pred.read_text())
    samples = {q: _samples(mc / f"multiple_choice_{q}.json") for q in types}
    every = [s for q in types for s in samples[q]]
    tables = [s["meta"]["source"]["table_id"] for s in every]
    rel = [metrics.multiple_choice_outcome(s, preds.get(s["id"]))[1] for s in every]
    hit = [float(metrics.multiple_choice_outcome(s, preds.get(s["id"]))[2]) for s in every]
    assert len(set(tables)) < len(tables)  # the same tables give an all_varying and single_varying questions
    overall = out["intervals"]["overall"]
    want = S.item_interval(rel, tables, unit="condition table")
    assert overall["avg_relative_score"] == {"ci95": [want.low, want.high], "ci_method": want.method}
    assert want.method in ("cluster_wilson", "units_wilson")
    hits = S.item_interval(hit, tables)
    assert overall["exact_match_accuracy"] == {"ci95": [hits.low, hits.high], "ci_method": hits.method}
    # treating the questions as independent would give another (here narrower) interval
    naive = S.item_interval(rel, None)
    assert naive.high - naive.low < want.high - want.low
    # all_varying asks one question per table: the exact interval of independent 0/1 outcomes
    av = samples["all_varying"]
    k = sum(bool(metrics.multiple_choice_outcome(s, preds.get(s["id"]))[2]) for s in av)
    assert out["intervals"]["per_dataset"]["all_varying"]["exact_match_accuracy"] == {
        "ci95": list(S.mid_p(k, len(av))), "ci_method": "exact_mid_p"}
    # the interval holds its number; avg_yield_ratio (no upper bound) has one only from 20 tables
    for q, m in [*out["per_dataset"].items(), ("overall", out["overall"])]:
        cis = out["intervals"]["overall"] if q == "overall" else out["intervals"]["per_dataset"][q]
        assert set(cis) == {"avg_relative_score", "exact_match_accuracy", "avg_yield_ratio"}
        for name, rec in cis.items():
            if rec["ci95"] is None:
                assert name == "avg_yield_ratio" and "needs at least 20 condition tables" in rec["ci_reason"], rec
                continue
            assert rec["ci95"][0] <= m[name] <= rec["ci95"][1] and rec["ci95"][0] < rec["ci95"][1], (q, name)


def test_the_contract_numbers_are_unchanged_by_the_intervals(build, tmp_path):
    from benchscore.rxn.cli import _evaluate

    mc = build[0]
    ds = (mc / "multiple_choice_single_varying.json",)
    pred = mc / "example_prediction_single_varying.json"
    with_ci = _evaluate("multiple_choice", ds, pred, tmp_path / "a.json")
    without = _evaluate("multiple_choice", ds, pred, tmp_path / "b.json", intervals=False)
    assert "intervals" in with_ci and "intervals" not in without
    a, b = json.loads((tmp_path / "a.json").read_bytes()), json.loads((tmp_path / "b.json").read_bytes())
    for key in ("task", "per_dataset", "overall", "per_sample"):
        assert json.dumps(a[key]) == json.dumps(b[key]), key
    assert a["provenance"]["intervals"] == {"level": 0.95}


def test_fill_in_blank_intervals_leave_unhit_answers_out(build, tmp_path):
    fib = build[1]
    ds = fib / "fill_in_blank_all_blank_reference.json"
    samples = _samples(ds)
    # the first sample unhit (a combination that is no table row), the second the best row, the rest missing
    first, second = samples[0], samples[1]
    legal = {tuple(c["indices"][k] for k in first["query_keys"]) for c in first["meta"]["legal_combinations"]}
    sizes = [len(first["input"]["candidate_values"][k]) for k in first["query_keys"]]
    unhit = next(c for c in np.ndindex(*sizes) if c not in legal)
    best = max(second["meta"]["legal_combinations"], key=lambda c: c["relative_score"])
    preds = {first["id"]: dict(zip(first["query_keys"], map(int, unhit), strict=True)), second["id"]: best["indices"]}
    (tmp_path / "p.json").write_text(json.dumps(preds))
    run("eval-fib", "--dataset", ds, "--prediction", tmp_path / "p.json", "--output", tmp_path / "e.json")
    out = json.loads((tmp_path / "e.json").read_text())
    assert out["per_dataset"]["all_blank_reference"]["num_unhit"] == 1
    kept = [s for s in samples if s["id"] != first["id"]]
    values = [1.0 if s["id"] == second["id"] else 0.0 for s in kept]
    assert best["relative_score"] == 1.0
    tables = [s["meta"]["source"]["table_id"] for s in kept]
    want = S.item_interval(values, tables)
    assert out["intervals"]["overall"]["avg_relative_score"]["ci95"] == [want.low, want.high]
    all_tables = [s["meta"]["source"]["table_id"] for s in samples]
    hit = S.item_interval([1.0 if s["id"] == second["id"] else 0.0 for s in samples], all_tables)
    assert out["intervals"]["overall"]["hit_rate"] == {"ci95": [hit.low, hit.high], "ci_method": hit.method}
    assert hit.high > hit.low > 0.0 or hit.low == 0.0 < hit.high


def test_one_condition_table_has_no_interval_and_says_why(tmp_path):
    """examples/rxn: every question of single_varying comes from one table."""
    ex = Path(__file__).resolve().parents[2] / "examples" / "rxn" / "expected" / "eval_mc.json"
    out = json.loads(ex.read_text())
    rec = out["intervals"]["per_dataset"]["single_varying"]["avg_relative_score"]
    assert rec == {"ci95": None, "ci_method": "cluster_wilson",
                   "ci_reason": "1 condition table: a calibrated 95 % interval needs at least 3 condition tables"}
