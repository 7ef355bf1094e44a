"""benchscore.stats.ranks: simultaneous rank sets by the max-t multiplier bootstrap with stepdown.

The streamed implementation must make the decisions of the plain algorithm (csranks' csdiffmeans with
stepdown over every ordered pair, held in memory here) draw for draw; its paired standard error must be
the one compare's paired tests report; it must never hold draws x pairs; its sets must cover every true
rank at once in at least 95 % of seeded boards (the grid in rank_grid.py; ``BENCHSCORE_CALIBRATION=thorough``
runs the whole grid and rewrites the table in docs/statistics.md); and the harness must fail a method
without the multiplicity correction, so it can fail.
"""

from __future__ import annotations

import math
import os
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import rank_grid as RG
from hypothesis import given, settings
from hypothesis import strategies as st

from benchscore.stats import paired as P
from benchscore.stats import ranks as K

THOROUGH = os.environ.get("BENCHSCORE_CALIBRATION") == "thorough"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"
START, END = "<!-- rank-sets-table:start -->", "<!-- rank-sets-table:end -->"


def direct(u: np.ndarray, theta: np.ndarray, draws: int, rng: np.random.Generator, alpha: float = 0.05,
           stepdown: bool = True) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """csranks' procedure, literally: every ordered pair (j, k), j != k, and every draw held at once
    (float64); per step the maximum of (Z_j - Z_k) / sigma_jk over the pairs in play, its critical value,
    the rejections T_jk > c, until a step rejects nothing; the rank bounds from the rejections."""
    n = theta.size
    z = K.multiplier_draws(u, draws, rng)
    cov = u.T @ u
    v = np.diag(cov)
    s2 = v[:, None] + v[None, :] - 2 * cov
    sd = np.where(s2 > 1e-12 * (v[:, None] + v[None, :]), np.sqrt(np.maximum(s2, 0)), 0.0)
    j, k = np.nonzero(~np.eye(n, dtype=bool))
    diff = theta[j] - theta[k]
    s = sd[j, k]
    apart = np.abs(diff) > 1e-12 * np.maximum(1, np.maximum(abs(theta[j]), abs(theta[k])))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(s > 0, diff / np.where(s > 0, s, 1), np.where(apart, np.sign(diff) * np.inf, 0.0))
        e = np.where(s > 0, (z[:, j] - z[:, k]) / np.where(s > 0, s, 1), 0.0)
    alive = np.ones(j.size, dtype=bool)
    crits = []
    while True:
        c = K.critical_value(e[:, alive].max(axis=1), alpha)
        crits.append(c)
        new = alive & (t > c)
        alive &= ~new
        if not new.any() or not stepdown:
            break
    rejected = ~alive
    return 1 + np.bincount(k[rejected], minlength=n), n - np.bincount(j[rejected], minlength=n), crits


def board(seed: int, models: int, units: int, *, groups: int = 3, spread: float = 0.5):
    """0/1 outcomes of ``models`` results on ``units`` questions, in tied groups of ``groups``."""
    rng = np.random.default_rng(seed)
    rates = np.repeat(rng.uniform(0.5 - spread / 2, 0.5 + spread / 2, models // groups + 1), groups)[:models]
    x = (rng.random((units, models)) < rates).astype(float)
    return RG.mean_contributions(x), x.mean(axis=0)


@pytest.mark.parametrize("seed, models, units, groups, spread", [
    (1, 30, 500, 3, 0.5),       # tied groups, many rejections: three steps
    (2, 12, 2000, 1, 0.05),     # near-ties: few rejections
    (3, 40, 300, 40, 0.0),      # every model tied: nothing rejected
    (4, 2, 1000, 1, 0.6),       # two results far apart
    (5, 64, 200, 2, 0.9),       # a wide board
])
def test_the_streamed_steps_make_the_plain_algorithms_decisions(seed, models, units, groups, spread):
    u, theta = board(seed, models, units, groups=groups, spread=spread)
    got = K.rank_sets(u, theta, draws=1000, rng=np.random.default_rng(seed))
    lower, upper, crits = direct(u, theta, 1000, np.random.default_rng(seed))
    assert np.array_equal(got.lower, lower) and np.array_equal(got.upper, upper)
    assert [s.critical_value for s in got.steps] == pytest.approx(crits, rel=1e-5)  # float32 pair pass
    assert all(a.critical_value >= b.critical_value for a, b in zip(got.steps, got.steps[1:], strict=False))
    if seed == 1:
        assert len(got.steps) >= 3  # the stepdown ran past its first step


def test_degenerate_pairs_a_constant_shift_and_identical_results():
    rng = np.random.default_rng(9)
    x = rng.random((400, 5))
    x[:, 1] = x[:, 0]           # identical to result 0: equal, never separated
    x[:, 2] = x[:, 0] - 0.01    # the same minus a constant on every unit: infinitely far apart
    u = RG.mean_contributions(x)
    theta = x.mean(axis=0)
    got = K.rank_sets(u, theta, draws=500, rng=np.random.default_rng(1))
    lower, upper, _ = direct(u, theta, 500, np.random.default_rng(1))
    assert np.array_equal(got.lower, lower) and np.array_equal(got.upper, upper)
    assert not got.separated(0, 1) and got.standard_error(0, 1) == 0.0 and got.statistic(0, 1) == 0.0
    assert got.separated(0, 2) and got.statistic(0, 2) == math.inf and got.p_value(0, 2) == 1 / 501
    assert got.lower[0] == got.lower[1] and got.upper[0] == got.upper[1]


def test_tiles_gathers_and_draw_blocks_do_not_change_a_decision(monkeypatch):
    u, theta = board(11, 37, 400, groups=2, spread=0.4)
    first = K.rank_sets(u, theta, draws=700, rng=np.random.default_rng(3))
    monkeypatch.setattr(K, "_TILE", 7)
    monkeypatch.setattr(K, "_GATHER", 5)
    monkeypatch.setattr(K, "_DRAW_BLOCK", 33)
    again = K.rank_sets(u, theta, draws=700, rng=np.random.default_rng(3))
    assert np.array_equal(first.lower, again.lower) and np.array_equal(first.upper, again.upper)
    assert [s.critical_value for s in first.steps] == [s.critical_value for s in again.steps]
    assert first.steps == again.steps


def test_the_first_step_reports_its_progress_row_block_by_row_block(monkeypatch):
    monkeypatch.setattr(K, "_TILE", 4)
    u, theta = board(16, 18, 100)
    seen: list[tuple[int, int]] = []
    K.rank_sets(u, theta, draws=200, rng=np.random.default_rng(0), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(k, 5) for k in range(1, 6)]


def test_the_same_seed_gives_the_same_sets_and_another_seed_other_draws():
    u, theta = board(12, 25, 300)
    a = K.rank_sets(u, theta, rng=np.random.default_rng(5))
    b = K.rank_sets(u, theta, rng=np.random.default_rng(5))
    c = K.rank_sets(u, theta, rng=np.random.default_rng(6))
    assert a.steps == b.steps and np.array_equal(a.lower, b.lower) and np.array_equal(a.upper, b.upper)
    assert a.steps[0].critical_value != c.steps[0].critical_value


def test_sigma_is_the_paired_standard_error_compare_reports():
    """With strata of unequal weights, pooled rates (den > 1) and a scale, sigma_ij equals infer_pair's."""
    rng = np.random.default_rng(4)
    g, n = 60, 4
    den = rng.integers(1, 6, size=(g, 1)).astype(float) * np.ones((1, n))
    num = rng.binomial(den.astype(int), rng.uniform(0.2, 0.8, size=(1, n))).astype(float)
    stratum = np.repeat(np.arange(3), 20)
    weights = np.array([30.0, 30.0, 10.0])
    u = K.contributions(num, den, stratum, weights, 1.0)
    theta = np.array([P.value(num[:, i], den[:, i], stratum, weights, 1.0) for i in range(n)])
    r = K.rank_sets(u, theta, draws=200, rng=np.random.default_rng(0))
    for i in range(n):
        for j in range(i + 1, n):
            pair = P.Units(num[:, i], den[:, i], num[:, j], den[:, j], stratum, weights, 1.0, (0.0, 100.0))
            inf = P.infer_pair(pair, resamples=100, rng=np.random.default_rng(0))
            assert r.standard_error(i, j) == pytest.approx(inf.standard_error, rel=1e-12)
            assert theta[i] - theta[j] == pytest.approx(inf.difference, abs=1e-12)


def test_draws_by_pairs_are_never_held():
    """600 results and 1,000 draws: draws x pairs would be 719 MB in float32; the whole computation stays
    under 60 MB beside its input."""
    u, theta = board(13, 600, 200, groups=1, spread=0.6)
    tracemalloc.start()
    try:
        K.rank_sets(u, theta, draws=1000, rng=np.random.default_rng(0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 1000 * 600 * 599 // 2 * 4 > 700e6
    assert peak < 60e6, peak


@settings(max_examples=40)
@given(seed=st.integers(0, 2**31), models=st.integers(2, 14), units=st.integers(30, 300),
       groups=st.integers(1, 4), spread=st.floats(0.0, 0.9))
def test_sets_hold_the_estimated_ranks_and_nest_in_alpha_and_the_single_step(
        seed, models, units, groups, spread):
    u, theta = board(seed, models, units, groups=groups, spread=spread)
    r = K.rank_sets(u, theta, draws=300, rng=np.random.default_rng(seed))
    n = theta.size
    assert np.all(1 <= r.lower) and np.all(r.lower <= r.upper) and np.all(r.upper <= n)
    better = (theta[None, :] > theta[:, None]).sum(axis=1)
    worse = (theta[None, :] < theta[:, None]).sum(axis=1)
    assert np.all(r.lower <= 1 + better) and np.all(r.upper >= n - worse)  # the estimated ranks are inside
    for i in range(n):
        for j in range(n):
            if i != j:
                assert (r.p_value(i, j) < r.alpha) == r.separated(i, j)
    wider = K.rank_sets(u, theta, draws=300, rng=np.random.default_rng(seed), alpha=0.01)
    single = K.rank_sets(u, theta, draws=300, rng=np.random.default_rng(seed), stepdown=False)
    for other in (wider, single):
        assert np.all(other.lower <= r.lower) and np.all(other.upper >= r.upper)
    shifted = K.rank_sets(u * 4.0, theta * 4.0 + 7.0, draws=300, rng=np.random.default_rng(seed))
    assert np.array_equal(shifted.lower, r.lower) and np.array_equal(shifted.upper, r.upper)


@settings(max_examples=200)
@given(maxima=st.lists(st.floats(-5, 8), min_size=1, max_size=400), t=st.floats(-5, 9),
       alpha=st.sampled_from([0.01, 0.05, 0.1, 0.2]))
def test_a_statistic_exceeds_the_critical_value_exactly_when_its_monte_carlo_p_is_below_alpha(maxima, t, alpha):
    m = np.array(maxima)
    c = K.critical_value(m, alpha)
    p = (int(np.sum(m >= t)) + 1) / (m.size + 1)
    assert (t > c) == (p < alpha)


def test_the_monte_carlo_error_of_the_critical_value_shrinks_with_the_draws():
    u, theta = board(14, 40, 400, groups=1, spread=0.0)
    few = K.rank_sets(u, theta, draws=250, rng=np.random.default_rng(1)).steps[0]
    many = K.rank_sets(u, theta, draws=4000, rng=np.random.default_rng(1)).steps[0]
    for s in (few, many):
        assert s.mc_interval[0] <= s.critical_value <= s.mc_interval[1] and s.mc_standard_error > 0
    assert many.mc_standard_error < few.mc_standard_error  # about 1/sqrt(draws): a quarter
    assert abs(many.critical_value - few.critical_value) < 4 * few.mc_standard_error


def test_bad_arguments_are_refused():
    u, theta = board(15, 5, 50)
    with pytest.raises(ValueError, match="do not match"):
        K.rank_sets(u[:, :4], theta, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least two"):
        K.rank_sets(u[:, :1], theta[:1], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="alpha"):
        K.rank_sets(u, theta, rng=np.random.default_rng(0), alpha=1.0)


# --- calibration ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_true_rank_is_covered_at_once_in_95_percent_of_boards():
    cells = RG.grid(THOROUGH)
    if THOROUGH:  # the cells are independent and seeded: run them in parallel, largest first
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
            futures = {i: pool.submit(RG.run_cell, cell, sims, 5000 + i) for i, (cell, sims) in
                       sorted(enumerate(cells), key=lambda x: -x[1][0].models * x[1][0].units * x[1][1])}
            results = [futures[i].result() for i in range(len(cells))]
    else:
        results = [RG.run_cell(cell, sims, 5000 + i) for i, (cell, sims) in enumerate(cells)]
    failures = [f"{r.cell.label}: {v}" for r in results if (v := RG.verdict(r))]
    if THOROUGH:
        _write_table(results)
    assert not failures, "\n".join(failures)


def _pairwise_196(u, theta, rng):
    """No multiplicity correction: a pair is separated when |T| > 1.96 (the 'interval overlap' boards)."""
    r = K.rank_sets(u, theta, draws=100, rng=rng, stepdown=False)
    n = theta.size
    lower, upper = np.ones(n, dtype=int), np.full(n, n)
    for i in range(n):
        for j in range(n):
            if i != j and r.statistic(i, j) > 1.959963984540054:
                if theta[j] > theta[i]:
                    lower[i] += 1
                else:
                    upper[i] -= 1
    return lower, upper


def test_the_grid_fails_rank_sets_without_a_multiplicity_correction():
    result = RG.run_cell(RG.RankCell("null", 10, 1000), 100, 77, method=_pairwise_196)
    assert RG.verdict(result) is not None and result.coverage < 0.6, result


def test_true_ranges_count_ties_as_every_rank_they_could_take():
    lo, hi = RG.true_range(np.array([0.7, 0.5, 0.5, 0.2]))
    assert lo.tolist() == [1, 2, 2, 4] and hi.tolist() == [1, 3, 3, 4]
    a = RG.abilities("ties", 50, 1000, np.random.default_rng(0))
    theta = RG.true_values(a)
    assert len(set(theta.tolist())) < 50  # exact ties survive the quadrature


def _write_table(results: list[RG.RankResult]) -> None:
    text = DOCS.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    stamp = time.strftime("%Y-%m-%d")
    rows = ["", f"Rank sets (generated {stamp} by `BENCHSCORE_CALIBRATION=thorough pytest tests/stats/test_ranks.py`; "
                "seeded boards per cell, 1,000 multiplier draws each; a draw covers when every result's set holds "
                "every rank its result could take, all at once):", "",
            "| cell | boards | every true rank covered | (Monte-Carlo se) | mean set width | steps | pairs separated "
            "| meets its claim |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        v = RG.verdict(r)
        claim = "yes" if v is None else f"**no**: {v}"
        if r.cell.units < K.MIN_UNITS:
            claim = (f"none claimed: below {K.MIN_UNITS:,} questions compare separates no pair (every set the "
                     "whole board)" + (f"; the method alone would fall short: {RG.verdict_alone(r)}"
                                       if RG.verdict_alone(r) else ""))
        rows.append(f"| {r.cell.label} | {r.draws} | {100 * r.coverage:.1f} % | {100 * r.se:.1f} | "
                    f"{r.mean_width:.4g} | {r.steps:.2f} | {100 * r.separated:.1f} % | {claim} |")
    DOCS.write_text(head + START + "\n".join(rows) + "\n\n" + END + tail, encoding="utf-8")


def test_the_rank_sets_table_in_the_docs_is_the_generated_one():
    text = DOCS.read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1
    body = text.split(START, 1)[1].split(END, 1)[0]
    assert "BENCHSCORE_CALIBRATION=thorough pytest tests/stats/test_ranks.py" in body
    for models in (10, 100, 1000):
        assert f", {models} models x" in body


# --- compare: the switch, the rows, the two methods where both run -----------------------------------------


def entries(x: np.ndarray, prefix: str = "m"):
    """compare's entries of 0/1 outcomes (``units x models``): one metric, a question per unit."""
    from benchscore.stats import compare as C

    ids = [f"q{i}" for i in range(x.shape[0])]
    return [C.Entry(f"{prefix}{j:03d}", "simulated", {}, [C.Metric(
        "accuracy", float(x[:, j].mean()), dict(zip(ids, [(float(v), 1.0) for v in x[:, j]], strict=True)),
        binary=True, bounds=(0.0, 1.0))]) for j in range(x.shape[1])]


def test_the_switch_is_one_board_size():
    from benchscore.stats import compare as C

    assert C.rank_method(C.EXACT_PAIRS_UP_TO) == "holm_exact"
    assert C.rank_method(C.EXACT_PAIRS_UP_TO + 1) == K.METHOD
    assert C.rank_method(3, "max-t") == K.METHOD and C.rank_method(5000, "holm") == "holm_exact"


def test_past_the_switch_compare_writes_the_rank_sets_and_the_adjacent_pairs():
    from benchscore.stats import compare as C

    rng = np.random.default_rng(21)
    a = np.repeat(np.arange(11) * 0.8, 10)[: C.EXACT_PAIRS_UP_TO + 1] - 4.0  # tiers of ten, far apart
    a = a + rng.normal(0, 0.02, size=a.size)
    x = RG.draw_board(rng, a, 1200)
    doc = C.compare(entries(x), standings=True, detectable_effects=False, seed=3)
    info = doc["rank_sets"]["accuracy"]
    assert info["method"] == K.METHOD and info["draws"] == 1000 and info["units"] == 1200
    assert info["method_reason"].startswith(f"{C.EXACT_PAIRS_UP_TO + 1} results: past {C.EXACT_PAIRS_UP_TO}")
    board = doc["leaderboards"]["accuracy"]
    order = [r["label"] for r in board]
    assert [(c["a"], c["b"]) for c in doc["comparisons"]] == sorted(
        tuple(sorted(p)) for p in zip(order, order[1:], strict=False))  # the adjacent pairs, nothing else
    # the rank sets are the module's, from the same units and seed
    sets = K.rank_sets(RG.mean_contributions(x), x.mean(axis=0), rng=__import__(
        "benchscore.stats.intervals", fromlist=["rng_for"]).rng_for(3, "accuracy", "rank sets"))
    assert info["critical_value"] == sets.critical_value and len(info["steps"]) == len(sets.steps) >= 2
    rows = {r["label"]: r for r in board}
    for j in range(x.shape[1]):
        assert rows[f"m{j:03d}"]["rank_range"] == [sets.lower[j], sets.upper[j]]
        assert rows[f"m{j:03d}"]["groups"] is None
    c = info["critical_value"]
    for pair in doc["comparisons"]:
        (m,) = pair["metrics"]
        excludes = m["ci95"][0] > 0 or m["ci95"][1] < 0
        assert m["test"] == K.METHOD and m["ci_method"] == "max_t_inversion" and m["ci_level"] == 0.95
        assert excludes == (m["verdict"] == "differs") == (m["p_value"] < 0.05) == (abs(m["difference"]) / m[
            "standard_error"] > c), m
        assert "max-t over every pair of 101 results" in m["verdict_reason"]
        sep = pair["b"] not in rows[pair["a"]]["indistinguishable_from"]
        assert sep == (m["verdict"] == "differs")
    assert {m["verdict"] for p in doc["comparisons"] for m in p["metrics"]} == {"differs", "not_separated"}
    C.formats()["benchscore-compare"].model_validate({**doc, "provenance": {}})


def test_below_the_units_floor_compare_says_so_and_separates_nothing():
    from benchscore.stats import compare as C

    x = (np.random.default_rng(2).random((300, 4)) < [0.1, 0.4, 0.6, 0.9]).astype(float)
    doc = C.compare(entries(x), rank_sets="max-t", detectable_effects=False)
    info = doc["rank_sets"]["accuracy"]
    assert info["critical_value"] is None and info["steps"] == []
    assert info["reason"].startswith(f"300 units: the max-t rank sets hold their level from {K.MIN_UNITS} units")
    for r in doc["leaderboards"]["accuracy"]:
        assert r["rank_range"] == [1, 4] and len(r["indistinguishable_from"]) == 3
    for pair in doc["comparisons"]:
        (m,) = pair["metrics"]
        assert m["verdict"] == "cannot_separate_at_this_n" and m["verdict_reason"] == info["reason"]
        assert m["ci95"] == [-1.0, 1.0] and m["minimum_detectable_effect"] is None


def _ranges(doc):
    return {r["label"]: r["rank_range"] for r in doc["leaderboards"]["accuracy"]}


def test_the_two_methods_agree_where_both_run():
    """Tiers far apart, tied inside: the same sets. Boards of the grid's designs (10 results, 1,000
    questions): the same set for at least 90 % of results, never a bound more than one place apart. Where
    they differ, the max-t sets use the correlation between pairs' statistics (narrower with many pairs in
    play) and keep the reverse of a separated pair in play, as the procedure's one-sided hypotheses require
    (wider when nearly every pair is separated: Holm then tests the last pairs alone)."""
    from benchscore.stats import compare as C

    rng = np.random.default_rng(8)
    x = (rng.random((1500, 12)) < np.repeat([0.3, 0.5, 0.7], 4)).astype(float)
    e = entries(x)
    holm = C.compare(e, rank_sets="holm", seed=1, detectable_effects=False)
    max_t = C.compare(e, rank_sets="max-t", seed=1, detectable_effects=False)
    assert _ranges(holm) == _ranges(max_t)
    assert sorted(map(tuple, _ranges(max_t).values())) == [(1, 4)] * 4 + [(5, 8)] * 4 + [(9, 12)] * 4
    for k, design in enumerate(("ties", "spread", "near-ties")):
        got = RG.agreement(design, 10, 1000, 3, 40 + k)
        assert got["identical"] >= 0.9 and got["largest"] <= 1, (design, got)


@pytest.mark.slow
def test_compare_leaderboard_and_verify_run_the_max_t_sets_from_the_command_line(tmp_path):
    """Every Eval Ever instance records (the repository's template record, valid under the published schema)
    of five models x 1,000 questions: `compare --rank-sets max-t` writes the rank sets, `verify` re-runs it
    and reproduces every value (the same seed gives the same draws), `report` draws it, and `leaderboard
    --rank-sets max-t` publishes them (no letters) with its Every Eval Ever records validated."""
    import json
    import sys

    from click.testing import CliRunner

    from benchscore.cli import cli

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "results"))
    from test_results_leaderboard import write_records

    rng = np.random.default_rng(5)
    x = RG.draw_board(rng, np.array([0.0, 0.0, 0.05, 0.6, 1.2]), 1000)
    folder = write_records(tmp_path / "in", {f"model-{j}": x[:, j].astype(int).tolist() for j in range(5)})
    env = {"SOURCE_DATE_EPOCH": "1767225600"}
    metric = "demo-source.demo_bench/score"
    files = [str(f) for f in sorted(folder.iterdir())]  # files, not the folder: verify finds each by sha256
    out = CliRunner().invoke(cli, ["compare", *files, "--metric", metric, "--rank-sets", "max-t",
                                   "--output", str(tmp_path / "cmp.json")], env=env)
    assert out.exit_code == 0, out.output
    doc = json.loads((tmp_path / "cmp.json").read_text())
    info = doc["rank_sets"][metric]
    assert info["method"] == K.METHOD and info["units"] == 1000 and len(doc["comparisons"]) == 4
    assert "critical value" in out.output and "max-t" in out.output
    ranges = {r["label"]: r["rank_range"] for r in doc["leaderboards"][metric]}
    assert ranges["org/model-4"] == [1, 1] and ranges["org/model-3"] == [2, 2]
    assert ranges["org/model-0"] == ranges["org/model-1"] == [3, 5]
    res = CliRunner().invoke(cli, ["verify", str(tmp_path / "cmp.json"), "--search", str(folder)], env=env)
    assert res.exit_code == 0 and ": reproduced: " in res.output, res.output
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "cmp.json"), "--output", str(tmp_path / "r.html")], env=env)
    assert res.exit_code == 0 and "None" not in (tmp_path / "r.html").read_text(), res.output  # no letters: none shown
    site = tmp_path / "site"
    res = CliRunner().invoke(cli, ["leaderboard", str(folder), "--metric", metric, "--rank-sets", "max-t",
                                   "--output-dir", str(site)], env=env)
    assert res.exit_code == 0, res.output
    board = json.loads((site / "leaderboard.json").read_text())
    rows = board["metrics"][0]["rows"]
    assert [r["rank_range"] for r in rows] == sorted(ranges.values()) and all(r["groups"] is None for r in rows)
    assert all(p["test"] == K.METHOD for p in board["metrics"][0]["adjacent_pairs"])
    # the board carries the rank sets it was ranked by, and its page says so (not "the pairs Holm separates")
    assert board["metrics"][0]["rank_sets"] == info
    page = (site / "index.html").read_text()
    assert "max-t bootstrap over every pair" in page and f"{info['critical_value']:.4g}" in page
    assert "pairs Holm separates" not in page
