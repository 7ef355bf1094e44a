"""Hypothesis: construction invariants hold on random small condition tables."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from benchscore.rxn import conventions as c
from benchscore.rxn.build import build_fill_in_blank, build_multiple_choice, prepare
from benchscore.rxn.formats import ConditionTable

cells = st.dictionaries(
    st.tuples(st.sampled_from(["A", "B", "C", "D"]), st.sampled_from(["x", "y", "z"])),
    st.one_of(st.just(0.0), st.floats(min_value=0, max_value=100, allow_nan=False), st.integers(0, 100).map(float)),
    min_size=1,
    max_size=12,
)


def _table(grid):
    return ConditionTable.model_validate({
        "table_id": "p", "source": {"dataset": "d"}, "reaction": {"s": "C"}, "condition_keys": ["solvent", "base"],
        "yield_measure": "yield",
        "rows": [{"conditions": {"solvent": a, "base": b}, "yield": y} for (a, b), y in grid.items()],
    })


@settings(max_examples=60)
@given(cells, st.integers(0, 10_000), st.integers(2, 5))
def test_mc_invariants(grid, seed, max_options):
    p = prepare(_table(grid))
    b = build_multiple_choice([p], seed=seed, max_options=max_options)
    eff = {r.values: r.effective for r in p.rows}
    for qtype, samples in b.samples.items():
        for q in samples:
            fixed = q["input"]["fixed_conditions"] or {}
            combos = [tuple({**fixed, **o}[k] for k in p.varying) for o in q["options"]]
            assert all(cmb in eff for cmb in combos)  # every option is a real experiment
            assert len(set(combos)) == len(combos) >= 2 and len(combos) <= max_options
            scores = [eff[cmb] for cmb in combos]
            best = max(scores)
            assert best > 0 and q["meta"]["best_effective_score"] == best
            assert q["answer"] == [i for i, s in enumerate(scores) if s >= best * (1 - c.TIE_TOLERANCE)]
            for r in q["input"].get("reference_conditions", []):
                rc = tuple(r["conditions"][k] for k in p.varying)
                assert eff[rc] < c.REFERENCE_MAX_RELATIVE * best
                if qtype.startswith("single"):
                    assert rc not in combos
    for qtype in b.samples:
        assert len(b.samples[qtype]) + sum(b.skipped.get(qtype, {}).values()) == (
            len(p.varying) if qtype.startswith("single") else 1) or not p.varying


@settings(max_examples=60)
@given(cells, st.integers(0, 10_000))
def test_fib_invariants(grid, seed):
    p = prepare(_table(grid))
    b = build_fill_in_blank([p], seed=seed)
    eff = {r.values: r.effective for r in p.rows}
    for s in b.samples["all_blank"] + b.samples["all_blank_reference"]:
        cands = s["input"]["candidate_values"]
        legal = {tuple(cands[k][x["indices"][k]]["value"] for k in s["query_keys"]): x["relative_score"]
                 for x in s["meta"]["legal_combinations"]}
        best = max(eff.values())
        assert all(abs(legal[v] - eff[v] / best) < 1e-12 for v in legal)
        refs = {tuple(r["conditions"][k] for k in s["query_keys"]) for r in s["input"].get("reference_conditions", [])}
        assert not refs & set(legal)
        assert set(legal) | refs == set(eff)
