"""Evaluation metrics of seed sections 6.5 and 7.4 on hand-made samples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.rxn.metrics import (
    HISTOGRAM_ROWS,
    PredictionError,
    check_prediction_ids,
    fill_in_blank_samples,
    index_fill_in_blank,
    multiple_choice_samples,
    relative_score_histogram,
    score_fill_in_blank,
)
from benchscore.rxn.metrics import score_multiple_choice as mc


def mc_sample(sid, rel, yields, best_yield=None):
    answer = [i for i, r in enumerate(rel) if r == 1.0]
    if best_yield is None and yields[0] is not None:
        best_yield = max(yields)
    return {"id": sid, "answer": answer,
            "meta": {"option_relative_scores": rel, "option_yields": yields, "best_yield": best_yield}}


SAMPLES = [
    mc_sample("a", [0.5, 1.0, 0.25], [40.0, 80.0, 20.0]),
    mc_sample("b", [1.0, 1.0, 0.0], [60.0, 60.0, 0.0]),
    mc_sample("c", [0.2, 1.0], [10.0, 50.0]),
    mc_sample("d", [1.0, 0.5], [None, None], best_yield=None),  # a table without yield
]


def test_mc_metrics():
    preds = {"a": 0, "b": 1, "c": 7, "d": 1}  # c invalid (out of range)
    m = mc(SAMPLES, preds)
    assert m["num_samples"] == 4
    assert m["avg_relative_score"] == pytest.approx((0.5 + 1.0 + 0 + 0.5) / 4)
    assert m["exact_match_accuracy"] == pytest.approx(1 / 4)
    assert m["avg_yield_ratio"] == pytest.approx((40 / 80 + 60 / 60 + 0) / 3)
    assert (m["num_invalid"], m["num_missing"], m["num_without_yield"]) == (1, 0, 1)


def test_mc_missing_scores_zero_and_is_counted():
    m = mc(SAMPLES, {"a": 1, "b": None})
    assert m["num_missing"] == 3
    assert m["avg_relative_score"] == pytest.approx(1 / 4)
    assert m["exact_match_accuracy"] == pytest.approx(1 / 4)


def test_mc_tied_best_both_count_as_exact():
    assert mc(SAMPLES[1:2], {"b": 0})["exact_match_accuracy"] == 1.0
    assert mc(SAMPLES[1:2], {"b": 1})["exact_match_accuracy"] == 1.0


@pytest.mark.parametrize("bad", ["1", 1.0, True, [1], {"x": 1}, "the second option", ""])
def test_mc_answer_that_is_not_an_integer_is_invalid_and_scoring_goes_on(bad):
    m = mc(SAMPLES, {"a": bad, "b": 1})
    assert (m["num_invalid"], m["num_missing"]) == (1, 2)
    assert m["avg_relative_score"] == pytest.approx(1.0 / 4)  # b still scored, a scores 0 and stays in N


def test_unknown_ids_are_an_error():
    with pytest.raises(PredictionError, match="not a sample id"):
        check_prediction_ids({"zzz": 1}, {"a", "b"})


def fib_sample(sid, combos, sizes):
    keys = list(sizes)
    return {
        "id": sid,
        "query_keys": keys,
        "input": {"candidate_values": {k: [{"index": i, "value": f"{k}{i}"} for i in range(n)] for k, n in sizes.items()}},
        "meta": {"legal_combinations": [
            {"indices": dict(zip(keys, ind, strict=True)), "relative_score": r} for ind, r in combos
        ]},
    }


FIB = [
    fib_sample("x", [((0, 0), 1.0), ((0, 1), 0.5), ((1, 1), 0.2)], {"solvent": 2, "base": 2}),
    fib_sample("y", [((0,), 0.4), ((2,), 1.0)], {"ligand": 3}),
    fib_sample("z", [((1, 0), 1.0), ((0, 0), 0.1)], {"solvent": 2, "base": 1}),
    fib_sample("w", [((0,), 1.0), ((1,), 0.3)], {"ligand": 2}),
]


def test_fib_metrics():
    index = index_fill_in_blank(FIB)
    preds = {
        "x": {"solvent": 0, "base": 1},  # scored 0.5
        "y": {"ligand": 1},  # unhit: a real index but not a real combination
        "z": {"solvent": 1, "base": 0},  # scored 1.0 (best)
        "w": {"ligand": 5},  # invalid: out of range
    }
    m = score_fill_in_blank(index, preds)
    assert m == {
        "num_samples": 4,
        "hit_rate": 0.5,
        "num_scored": 2,
        "num_unhit": 1,
        "num_invalid": 1,
        "num_missing": 0,
        "avg_relative_score": pytest.approx(1.5 / 3),  # unhit leaves the denominator
        "best_hit_rate_among_scored": 0.5,
    }


@pytest.mark.parametrize(
    "pred",
    [{"solvent": 0}, {"solvent": 0, "base": 0, "ligand": 0}, {"solvent": 0, "ligand": 0}, {"solvent": -1, "base": 0}],
)
def test_fib_wrong_keys_or_index_is_invalid(pred):
    m = score_fill_in_blank(index_fill_in_blank(FIB[:1]), {"x": pred})
    assert m["num_invalid"] == 1 and m["num_scored"] == 0
    assert m["avg_relative_score"] == 0.0


@pytest.mark.parametrize("bad", [1, "solvent", [0, 0], {"solvent": "0", "base": 0}, {"solvent": 0.0, "base": 0},
                                 {"solvent": True, "base": 0}, {"solvent": "DMF", "base": "DBU"}, {"solvent": None}])
def test_fib_non_integer_candidate_index_is_invalid_and_scoring_goes_on(bad):
    m = score_fill_in_blank(index_fill_in_blank(FIB[:3]), {"x": bad, "z": {"solvent": 1, "base": 0}})
    assert (m["num_invalid"], m["num_scored"], m["num_missing"]) == (1, 1, 1)
    assert m["avg_relative_score"] == pytest.approx(1.0 / 3)


def test_fib_free_text_ligand_is_invalid():
    """issue 9 item 12: {"ligand": "XPhos"} is an invalid prediction, not a reason to refuse the file."""
    m = score_fill_in_blank(index_fill_in_blank(FIB[1:2]), {"y": {"ligand": "XPhos"}})
    assert m["num_invalid"] == 1 and m["avg_relative_score"] == 0.0


def test_fib_all_unhit_has_no_average():
    m = score_fill_in_blank(index_fill_in_blank(FIB[1:2]), {"y": {"ligand": 1}})
    assert m["avg_relative_score"] is None and m["best_hit_rate_among_scored"] is None and m["hit_rate"] == 0.0


@given(st.lists(st.integers(min_value=-1, max_value=3), min_size=4, max_size=4))
def test_mc_bounds(choices):
    preds = {s["id"]: c for s, c in zip(SAMPLES, choices, strict=True) if c >= 0}
    m = mc(SAMPLES, preds)
    for key in ("avg_relative_score", "exact_match_accuracy", "avg_yield_ratio"):
        assert 0.0 <= m[key] <= 1.0
    assert m["num_invalid"] + m["num_missing"] <= m["num_samples"]


def test_perfect_predictions_score_one():
    best = {s["id"]: s["answer"][0] for s in SAMPLES}
    m = mc(SAMPLES, best)
    assert m["avg_relative_score"] == 1.0 and m["exact_match_accuracy"] == 1.0
    preds = {"x": {"solvent": 0, "base": 0}, "y": {"ligand": 2}, "z": {"solvent": 1, "base": 0}, "w": {"ligand": 0}}
    f = score_fill_in_blank(index_fill_in_blank(FIB), preds)
    assert f["avg_relative_score"] == 1.0 and f["best_hit_rate_among_scored"] == 1.0 and f["hit_rate"] == 1.0


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=4, max_size=4))
def test_fib_counts_add_up(choices):
    preds = {"x": {"solvent": choices[0][0], "base": choices[0][1]}, "y": {"ligand": choices[1][0]},
             "z": {"solvent": choices[2][0], "base": choices[2][1]}, "w": {"ligand": choices[3][0]}}
    m = score_fill_in_blank(index_fill_in_blank(FIB), preds)
    assert m["num_scored"] + m["num_unhit"] + m["num_invalid"] + m["num_missing"] == 4
    if m["avg_relative_score"] is not None:
        assert 0.0 <= m["avg_relative_score"] <= 1.0


def test_metrics_module_is_standard_library_only():
    import ast
    from pathlib import Path

    import benchscore.rxn.metrics as metrics_module
    import benchscore.rxn.standalone as standalone

    files = [Path(metrics_module.__file__), *Path(standalone.__file__).parent.glob("*.py")]
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                assert top in {"__future__", "argparse", "json", "os", "sys", "rxn_metrics", "rxn_standalone"}, (
                    path, name)


def test_metrics_tolerance_is_the_conventions_tolerance():
    from benchscore.rxn import conventions, metrics

    assert metrics.TOLERANCE == conventions.TIE_TOLERANCE


answers = st.one_of(st.none(), st.integers(-1, 3), st.sampled_from(["1", 1.0, True, "XPhos"]))


@given(st.lists(answers, min_size=4, max_size=4), st.lists(st.booleans(), min_size=4, max_size=4))
def test_mc_per_sample_records_add_up_to_the_metrics(choices, absent):
    preds = {s["id"]: c for s, c, gone in zip(SAMPLES, choices, absent, strict=True) if not gone}
    m, records = mc(SAMPLES, preds), multiple_choice_samples(SAMPLES, preds)
    assert [r["id"] for r in records] == [s["id"] for s in SAMPLES]
    status = [r["status"] for r in records]
    assert (status.count("invalid"), status.count("missing")) == (m["num_invalid"], m["num_missing"])
    assert sum(r["relative_score"] for r in records) / len(records) == pytest.approx(m["avg_relative_score"])
    assert sum(r["exact_match"] for r in records) / len(records) == pytest.approx(m["exact_match_accuracy"])
    assert all(r["relative_score"] == 0.0 for r in records if r["status"] != "scored")


fib_answers = st.one_of(st.none(), st.fixed_dictionaries({"solvent": st.integers(-1, 2), "base": st.integers(0, 2)}),
                        st.fixed_dictionaries({"ligand": st.integers(0, 3)}), st.sampled_from([1, "DMF", {}]))


@given(st.lists(fib_answers, min_size=4, max_size=4))
def test_fib_per_sample_records_add_up_to_the_metrics(choices):
    index = index_fill_in_blank(FIB)
    preds = {s["id"]: c for s, c in zip(FIB, choices, strict=True)}
    m, records = score_fill_in_blank(index, preds), fill_in_blank_samples(index, preds)
    assert [r["id"] for r in records] == [s["id"] for s in FIB]
    status = [r["status"] for r in records]
    for name in ("scored", "unhit", "invalid", "missing"):
        assert status.count(name) == m[f"num_{name}"]
    counted = [r["relative_score"] for r in records if r["relative_score"] is not None]
    assert len(counted) == m["num_samples"] - m["num_unhit"]  # unhit answers leave the denominator
    if counted:
        assert sum(counted) / len(counted) == pytest.approx(m["avg_relative_score"])
    assert all((r["relative_score"] is None) == (r["status"] == "unhit") for r in records)


def test_histogram_rows_and_edges():
    def rec(status, rel):
        return {"status": status, "relative_score": rel}

    records = [rec("invalid", 0.0), rec("missing", 0.0), rec("missing", 0.0), rec("scored", 0.0), rec("scored", 0.1),
               rec("scored", 0.95), rec("scored", 1.0 - 1e-12), rec("scored", 1.0), rec("unhit", None)]
    counts = dict(zip(HISTOGRAM_ROWS, relative_score_histogram(records), strict=True))
    assert counts["invalid (0)"] == 1 and counts["missing (0)"] == 2 and counts["unhit (no score)"] == 1
    assert counts["[0.0, 0.1)"] == 1 and counts["[0.1, 0.2)"] == 1 and counts["[0.9, 1.0)"] == 1
    assert counts["1.0 (best)"] == 2  # within the tolerance of 1
    assert sum(counts.values()) == len(records)


# -- chance levels: what a uniform random answer scores ---------------------------------------------

def test_chance_levels_by_hand():
    from benchscore.rxn.metrics import chance_fill_in_blank, chance_multiple_choice

    c = chance_multiple_choice(SAMPLES)
    # option means: a (0.5+1+0.25)/3, b (1+1+0)/3, c (0.2+1)/2, d (1+0.5)/2; best options: 1/3, 2/3, 1/2, 1/2
    assert c["avg_relative_score"] == pytest.approx((1.75 / 3 + 2 / 3 + 0.6 + 0.75) / 4)
    assert c["exact_match_accuracy"] == pytest.approx((1 / 3 + 2 / 3 + 1 / 2 + 1 / 2) / 4)
    assert c["num_samples"] == 4
    f = chance_fill_in_blank(index_fill_in_blank(FIB))
    # legal means: x (1+0.5+0.2)/3, y (0.4+1)/2, z (1+0.1)/2, w (1+0.3)/2; legal/grid: 3/4, 2/3, 2/2, 2/2
    assert f["avg_relative_score"] == pytest.approx((1.7 / 3 + 0.7 + 0.55 + 0.65) / 4)
    assert f["hit_rate"] == pytest.approx((3 / 4 + 2 / 3 + 1 + 1) / 4)
    assert chance_multiple_choice([])["avg_relative_score"] is None


def test_a_uniform_random_predictor_converges_to_the_chance_level():
    import random

    from benchscore.rxn.metrics import chance_fill_in_blank, chance_multiple_choice

    rng = random.Random(7)
    runs = 4000
    mc_rel = mc_exact = 0.0
    for _ in range(runs):
        m = mc(SAMPLES, {s["id"]: rng.randrange(len(s["meta"]["option_relative_scores"])) for s in SAMPLES})
        mc_rel += m["avg_relative_score"]
        mc_exact += m["exact_match_accuracy"]
    c = chance_multiple_choice(SAMPLES)
    assert mc_rel / runs == pytest.approx(c["avg_relative_score"], abs=0.01)
    assert mc_exact / runs == pytest.approx(c["exact_match_accuracy"], abs=0.01)
    index = index_fill_in_blank(FIB)
    fib_rel = fib_hit = 0.0
    for _ in range(runs):
        legal = {sid: dict(zip(keys, rng.choice(list(lookup)), strict=True)) for sid, (keys, _, lookup) in index.items()}
        fib_rel += score_fill_in_blank(index, legal)["avg_relative_score"]
        anything = {sid: {k: rng.randrange(n) for k, n in zip(keys, sizes, strict=True)}
                    for sid, (keys, sizes, _) in index.items()}
        fib_hit += score_fill_in_blank(index, anything)["hit_rate"]
    f = chance_fill_in_blank(index)
    assert fib_rel / runs == pytest.approx(f["avg_relative_score"], abs=0.01)
    assert fib_hit / runs == pytest.approx(f["hit_rate"], abs=0.01)
