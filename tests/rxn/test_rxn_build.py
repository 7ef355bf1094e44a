"""Construction rules of seed sections 6, 7 and 9, pinned on hand-built tables and checked on the bundle."""

from __future__ import annotations

import pytest

from benchscore.rxn import conventions as c
from benchscore.rxn.build import (
    SKIP_FEW_OPTIONS,
    SKIP_FEW_REFERENCES,
    SKIP_NO_VARYING,
    SKIP_ZERO_BEST,
    build_fill_in_blank,
    build_multiple_choice,
    prepare,
)
from benchscore.rxn.formulas import effective_score
from benchscore.rxn.tables import BUNDLED, bundled_path, load_table_file

LOCAL = {
    ("S1", "B1"): 10.0, ("S2", "B1"): 20.0,
    ("S1", "B2"): 5.0, ("S2", "B2"): 50.0, ("S3", "B2"): 30.0,
    ("S4", "B3"): 90.0,
}


def _by_id(samples):
    return {s["id"]: s for s in samples}


@pytest.fixture
def local_build(table_factory, grid_factory):
    t = table_factory(grid_factory(LOCAL))
    return build_multiple_choice([prepare(t)], seed=1, max_options=8)


def test_single_varying_uses_the_real_fixed_group_covering_most_values(local_build):
    q = _by_id(local_build.samples["single_varying"])["single_varying:t1:solvent"]
    assert q["input"]["fixed_conditions"] == {"base": "B2"}
    values = [o["solvent"] for o in q["options"]]
    assert sorted(values) == ["S1", "S2", "S3"]  # S4 was never run with B2: not an option
    # answer and relative scores inside the local set (best 50, not the global best 90)
    rel = dict(zip(values, q["meta"]["option_relative_scores"], strict=True))
    assert rel == {"S1": 0.1, "S2": 1.0, "S3": 0.6}
    assert [values[i] for i in q["answer"]] == ["S2"]
    assert q["meta"]["best_effective_score"] == 50.0
    assert q["meta"]["best_yield"] == 50.0
    assert q["meta"]["selection_info"]["num_fixed_groups"] == 3
    assert q["meta"]["selection_info"]["covered_values"] == 3


def test_single_varying_tie_between_groups_is_seeded(table_factory, grid_factory):
    t = prepare(table_factory(grid_factory(LOCAL)))
    chosen = set()
    for seed in range(20):
        b = build_multiple_choice([t], seed=seed, max_options=8)
        q = _by_id(b.samples["single_varying"])["single_varying:t1:base"]
        assert q["meta"]["selection_info"]["num_tied_groups"] == 2
        chosen.add(q["input"]["fixed_conditions"]["solvent"])
        again = build_multiple_choice([t], seed=seed, max_options=8)
        assert again.samples == b.samples
    assert chosen == {"S1", "S2"}


def test_all_varying_options_are_real_rows(local_build):
    q = _by_id(local_build.samples["all_varying"])["all_varying:t1"]
    combos = {(o["solvent"], o["base"]) for o in q["options"]}
    assert combos == set(LOCAL)
    best = [q["options"][i] for i in q["answer"]]
    assert best == [{"solvent": "S4", "base": "B3"}]


def test_answer_lists_every_tied_best(table_factory):
    t = table_factory([({"s": "a"}, 40.0), ({"s": "b"}, 80.0), ({"s": "c"}, 80.0), ({"s": "d"}, 10.0)])
    b = build_multiple_choice([prepare(t)], seed=3, max_options=8)
    q = b.samples["all_varying"][0]
    assert sorted(q["options"][i]["s"] for i in q["answer"]) == ["b", "c"]
    assert all(q["meta"]["option_relative_scores"][i] == 1.0 for i in q["answer"])


def test_ee_and_dr_enter_the_effective_score(table_factory):
    # 90 % yield at 0 % ee loses to 60 % yield at 90 % ee: 45 vs 57
    t = table_factory([({"cat": "A"}, 90.0), ({"cat": "B"}, 60.0)], ee=[0.0, 90.0], dr=[None, None])
    q = build_multiple_choice([prepare(t)], seed=0, max_options=8).samples["all_varying"][0]
    assert [q["options"][i]["cat"] for i in q["answer"]] == ["B"]
    assert q["meta"]["best_yield"] == 90.0  # best yield of the option space, not of the best option


def test_max_options_samples_and_keeps_a_best(table_factory):
    rows = [({"cat": f"c{i:02d}"}, float(i)) for i in range(30)]
    t = prepare(table_factory(rows))
    for seed in range(10):
        q = build_multiple_choice([t], seed=seed, max_options=5).samples["all_varying"][0]
        assert len(q["options"]) == 5
        assert [q["options"][i]["cat"] for i in q["answer"]] == ["c29"]
        assert q["meta"]["selection_info"]["sampled"] is True


def test_option_order_is_shuffled_with_the_seed(table_factory):
    rows = [({"cat": f"c{i}"}, float(10 * i + 1)) for i in range(6)]
    t = prepare(table_factory(rows))
    positions = {build_multiple_choice([t], seed=s, max_options=8).samples["all_varying"][0]["answer"][0]
                 for s in range(30)}
    assert len(positions) > 1


def test_skips_are_counted(table_factory):
    zero = table_factory([({"s": "a"}, 0.0), ({"s": "b"}, 0.0)], table_id="zero")
    single = table_factory([({"s": "a"}, 50.0)], table_id="single")
    b = build_multiple_choice([prepare(zero), prepare(single)], seed=0, max_options=8)
    assert b.samples["all_varying"] == []
    assert b.skipped["all_varying"] == {SKIP_ZERO_BEST: 1, SKIP_NO_VARYING: 1}
    f = build_fill_in_blank([prepare(zero), prepare(single)], seed=0)
    assert f.skipped["all_blank"] == {SKIP_ZERO_BEST: 1, SKIP_NO_VARYING: 1}


def test_fewer_than_two_options_is_skipped(table_factory):
    # target 'a' only ever varies alone: every fixed group of 'b' covers one value of 'a'
    t = table_factory([({"a": "x", "b": "1"}, 10.0), ({"a": "y", "b": "2"}, 20.0)])
    b = build_multiple_choice([prepare(t)], seed=0, max_options=8)
    assert b.samples["single_varying"] == []
    assert b.skipped["single_varying"][SKIP_FEW_OPTIONS] == 2


def test_row_without_yield_is_dropped_and_counted(table_factory):
    t = table_factory([({"s": "a"}, 50.0), ({"s": "b"}, None), ({"s": "c"}, 20.0)])
    b = build_multiple_choice([prepare(t)], seed=0, max_options=8)
    assert b.dropped_rows == 1
    assert {o["s"] for o in b.samples["all_varying"][0]["options"]} == {"a", "c"}


def test_table_without_yield_scores_selectivity(table_factory):
    t = table_factory([({"cat": "A"}, None), ({"cat": "B"}, None)], measure=None, ee=[50.0, 90.0])
    q = build_multiple_choice([prepare(t)], seed=0, max_options=8).samples["all_varying"][0]
    assert q["meta"]["best_yield"] is None
    assert q["meta"]["yield_measure"] is None
    assert [q["options"][i]["cat"] for i in q["answer"]] == ["B"]
    assert sorted(q["meta"]["option_relative_scores"]) == pytest.approx([75 / 95, 1.0])


def test_selectivity_table_drops_rows_without_ee_or_dr(table_factory):
    # a table without yields is scored on selectivity; a row with neither ee nor dr measured nothing and
    # must not score 100 x 1 x 1 (it would become the answer); it is left out and counted like a row
    # without a yield in a yield table
    t = table_factory([({"cat": "A"}, None), ({"cat": "B"}, None), ({"cat": "C"}, None)], measure=None,
                      ee=[50.0, 90.0, None])
    b = build_multiple_choice([prepare(t)], seed=0, max_options=8)
    q = b.samples["all_varying"][0]
    assert b.dropped_rows == 1
    assert {o["cat"] for o in q["options"]} == {"A", "B"}
    assert [q["options"][i]["cat"] for i in q["answer"]] == ["B"]
    f = build_fill_in_blank([prepare(t)], seed=0)
    assert len(f.samples["all_blank"][0]["meta"]["legal_combinations"]) == 2


def test_single_varying_references_outside_options_and_below_local_best(local_build):
    q = _by_id(local_build.samples["single_varying_reference"])["single_varying_reference:t1:solvent"]
    refs = q["input"]["reference_conditions"]
    got = sorted((r["conditions"]["solvent"], r["conditions"]["base"], r["yield"]) for r in refs)
    # outside the options (base B2), below 0.7 x local best 50: (S1,B1,10) and (S2,B1,20); (S4,B3,90) is above
    assert got == [("S1", "B1", 10.0), ("S2", "B1", 20.0)]
    assert all(r < c.REFERENCE_MAX_RELATIVE for r in q["meta"]["reference_info"]["reference_relative_scores"])


def test_single_varying_references_use_the_local_best_not_the_global_best(table_factory, grid_factory):
    # (S1, B4) = 40 lies outside the options and below 0.7 x the global best 90 (63), but above
    # 0.7 x the local best 50 of the B2 group (35): it must not be a reference
    t = table_factory(grid_factory({**LOCAL, ("S1", "B4"): 40.0}))
    b = build_multiple_choice([prepare(t)], seed=1, max_options=8)
    q = _by_id(b.samples["single_varying_reference"])["single_varying_reference:t1:solvent"]
    assert q["input"]["fixed_conditions"] == {"base": "B2"}
    got = sorted((r["conditions"]["solvent"], r["conditions"]["base"]) for r in q["input"]["reference_conditions"])
    assert got == [("S1", "B1"), ("S2", "B1")]


def test_too_few_reference_candidates_skips_reference_and_control(table_factory):
    t = table_factory([({"s": "a"}, 50.0), ({"s": "b"}, 49.0), ({"s": "c"}, 1.0)])
    b = build_multiple_choice([prepare(t)], seed=0, max_options=8)
    assert len(b.samples["all_varying"]) == 1
    for q in ("all_varying_reference", "all_varying_reference_control"):
        assert b.samples[q] == []
        assert b.skipped[q] == {SKIP_FEW_REFERENCES: 1}


def _strip(sample):
    out = {k: v for k, v in sample.items() if k not in ("id", "question_type")}
    out["input"] = {k: v for k, v in sample["input"].items() if k != "reference_conditions"}
    out["meta"] = {k: v for k, v in sample["meta"].items() if k != "reference_info"}
    return out


@pytest.fixture(scope="module")
def bundle_tables():
    return [prepare(t) for name in BUNDLED for t in load_table_file(bundled_path(name)).tables]


@pytest.fixture(scope="module")
def bundle_mc(bundle_tables):
    return build_multiple_choice(bundle_tables, seed=c.DEFAULT_SEED, max_options=c.DEFAULT_MAX_OPTIONS)


@pytest.fixture(scope="module")
def bundle_fib(bundle_tables):
    return build_fill_in_blank(bundle_tables, seed=c.DEFAULT_SEED)


@pytest.mark.parametrize("kind", ["single_varying", "all_varying"])
def test_controls_identical_but_for_references(bundle_mc, kind):
    refs = bundle_mc.samples[f"{kind}_reference"]
    ctls = _by_id(bundle_mc.samples[f"{kind}_reference_control"])
    assert len(refs) == len(ctls) > 0
    for r in refs:
        ctl = ctls[r["id"].replace(f"{kind}_reference:", f"{kind}_reference_control:")]
        assert "reference_conditions" not in ctl["input"] and "reference_info" not in ctl["meta"]
        assert _strip(r) == _strip(ctl)
    base = _by_id(bundle_mc.samples[kind])
    for r in refs:
        assert _strip(base[r["id"].replace(f"{kind}_reference:", f"{kind}:")]) == _strip(r)


@pytest.mark.parametrize("kind", ["single_varying_reference", "all_varying_reference"])
def test_bundle_references_follow_section_9(bundle_mc, kind):
    for q in bundle_mc.samples[kind]:
        refs = q["input"]["reference_conditions"]
        assert c.REFERENCE_MIN <= len(refs) <= c.REFERENCE_MAX
        rels = q["meta"]["reference_info"]["reference_relative_scores"]
        assert all(0 <= r < c.REFERENCE_MAX_RELATIVE for r in rels)
        # recomputed from what the model is shown: strictly below the question's own (local) best
        local_best = max(q["meta"]["option_effective_scores"])
        for r in refs:
            assert effective_score(r["yield"], r["ee"], r["dr"]) < c.REFERENCE_MAX_RELATIVE * local_best
        if kind == "single_varying_reference":
            fixed = q["input"]["fixed_conditions"]
            options = [{**fixed, **o} for o in q["options"]]
            assert not any(r["conditions"] == o for r in refs for o in options)


def test_bundle_questions_are_consistent(bundle_mc):
    for qtype, samples in bundle_mc.samples.items():
        assert samples, qtype
        for q in samples:
            rel = q["meta"]["option_relative_scores"]
            assert len(q["options"]) >= 2 and max(rel) == 1.0
            assert q["answer"] == [i for i, r in enumerate(rel) if r >= 1 - c.TIE_TOLERANCE]
            assert len(q["options"]) <= c.DEFAULT_MAX_OPTIONS


def test_fib_legal_combinations_are_real_rows(bundle_tables, bundle_fib):
    tables = {p.table.table_id: p for p in bundle_tables}
    for s in bundle_fib.samples["all_blank"]:
        p = tables[s["meta"]["source"]["table_id"]]
        cands = s["input"]["candidate_values"]
        assert s["query_keys"] == p.varying
        real = {r.values: r.effective for r in p.rows}
        legal = s["meta"]["legal_combinations"]
        assert len(legal) == len(real)
        for combo in legal:
            values = tuple(cands[k][combo["indices"][k]]["value"] for k in s["query_keys"])
            assert real[values] == combo["effective_score"]
        assert max(x["relative_score"] for x in legal) == 1.0


def test_fib_reference_groups_are_not_legal(bundle_fib):
    refs = bundle_fib.samples["all_blank_reference"]
    base = _by_id(bundle_fib.samples["all_blank"])
    assert refs
    for s in refs:
        legal = {tuple(x["indices"].values()) for x in s["meta"]["legal_combinations"]}
        ref_combos = {tuple(r["indices"].values()) for r in s["input"]["reference_conditions"]}
        assert 2 <= len(ref_combos) <= 5
        assert not legal & ref_combos
        full = base[s["id"].replace("all_blank_reference:", "all_blank:")]
        all_legal = {tuple(x["indices"].values()) for x in full["meta"]["legal_combinations"]}
        assert all_legal == legal | ref_combos
        assert max(x["relative_score"] for x in s["meta"]["legal_combinations"]) == 1.0


def test_same_seed_same_build_other_seed_other_order(bundle_tables):
    a = build_multiple_choice(bundle_tables, seed=7, max_options=8)
    b = build_multiple_choice(bundle_tables, seed=7, max_options=8)
    d = build_multiple_choice(bundle_tables, seed=8, max_options=8)
    assert a.samples == b.samples
    assert a.samples != d.samples


def test_rendered_prompt_has_options_and_references_but_no_answer(bundle_mc):
    from benchscore.rxn.prompts import render

    q = bundle_mc.samples["single_varying_reference"][0]
    text = render(q)
    assert q["input"]["target_key"] in text
    assert all(v in text for o in q["options"] for v in o.values())
    assert "option_relative_scores" not in text and "answer" not in q["input"]
    ctl = bundle_mc.samples["single_varying_reference_control"][0]
    assert "NOT the best" not in render(ctl)


def test_colliding_sample_ids_are_refused(table_factory):
    # table 't' with key 'a:b' and table 't:a' with key 'b' would both make 'single_varying:t:a:b';
    # a build must not write a dataset that its own evaluator then refuses for a duplicate id
    from benchscore.common.errors import BadInput

    one = table_factory([({"a:b": "x", "c": "1"}, 10.0), ({"a:b": "y", "c": "1"}, 20.0)], table_id="t")
    two = table_factory([({"b": "x", "c": "1"}, 10.0), ({"b": "y", "c": "1"}, 20.0)], table_id="t:a")
    with pytest.raises(BadInput, match="single_varying:t:a:b"):
        build_multiple_choice([prepare(one), prepare(two)], seed=0, max_options=8)
