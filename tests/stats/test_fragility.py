"""What a differs verdict rests on (benchscore.stats.fragility): the fewest units whose removal changes it,
checked against a brute force over every subset, and the fragile rule."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchscore.stats import fragility as F
from benchscore.stats import paired as P
from benchscore.stats.compare import _verdict


def _units(diff, stratum=None, weights=(1.0,)) -> P.Units:
    d = np.asarray(diff, dtype=float)
    n = d.size
    return P.Units(d + 1.0, np.ones(n), np.ones(n), np.ones(n),
                   np.zeros(n, dtype=np.int64) if stratum is None else np.asarray(stratum, dtype=np.int64),
                   np.asarray(weights, dtype=float))


def _still(sign: bool, resamples: int = 10_000, seed: int = 3):
    def still(u: P.Units) -> bool:
        r = P.infer_pair(u, resamples=resamples, rng=np.random.default_rng(seed))
        verdict, _ = _verdict(r.p_value, r.smallest_attainable_p, 0.05, 1, None, r.n_units)
        return verdict == "differs" and (r.difference > 0) == sign
    return still


def _brute_force(u: P.Units, still) -> int:
    """The fewest units whose removal changes the verdict, every subset tried in position order."""
    for k in range(1, u.n):
        for combo in itertools.combinations(range(u.n), k):
            keep = np.ones(u.n, dtype=bool)
            keep[list(combo)] = False
            if not still(F.subset(u, keep)):
                return k
    return u.n


def test_six_units_all_one_way_rest_on_each_one():
    """2/64 < 0.05 separates; without any one unit, 5 units cannot (2/32): fragile, exactly."""
    u = _units([0.3, 0.2, 0.5, 0.1, 0.4, 0.25])
    assert _still(True)(u)
    got = F.fragility(u, _still(True))
    assert (got.units_to_change, got.method, got.fragile) == (1, "exact", True)
    assert got.removed == (2,)  # the unit favouring the winner most is tried first


def test_eight_units_all_one_way_rest_on_three():
    """2/256, 2/128, 2/64 separate; 5 units cannot: three units, 3 of 8 is not fragile."""
    u = _units([-0.1] * 8)
    got = F.fragility(u, _still(False))
    assert (got.units_to_change, got.method, got.fragile) == (3, "exact", False)


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_search_finds_the_brute_force_minimum(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):  # until a data set the test separates
        diff = rng.normal(0.6, 1.0, size=int(rng.integers(6, 10))) * rng.choice([1.0, 4.0], size=1)
        u = _units(diff)
        still = _still(bool(np.sum(diff) > 0))
        if still(u):
            break
    else:
        pytest.skip("no separated draw")
    got = F.fragility(u, still)
    assert got.method == "exact" and got.units_to_change == _brute_force(u, still)
    keep = np.ones(u.n, dtype=bool)
    keep[list(got.removed)] = False
    assert not still(F.subset(u, keep)) and len(got.removed) == got.units_to_change


def test_a_verdict_near_alpha_rests_on_one_unit_found_by_leave_one_out():
    """20 units (more than the exact search takes), one of them far larger: removing it leaves the others
    clearly separated, so the greedy bound is above one; removing another unit does change the verdict,
    and leave-one-out finds it."""
    still = _still(True, resamples=4000)
    u = _units(np.concatenate([[6.0], np.random.default_rng(66).normal(0.5, 1.0, size=19)]))
    assert still(u) and still(F.subset(u, np.arange(u.n) != 0))  # without the large unit: still separated
    got = F.fragility(u, still)
    singles = [j for j in range(u.n) if not still(F.subset(u, np.arange(u.n) != j))]
    assert (got.units_to_change, got.fragile, got.method) == (1, True, "leave_one_out_then_greedy")
    assert got.removed[0] in singles


def test_one_unit_is_always_the_fewest():
    """30 units separated at p just under 0.05: the unit favouring the winner most carries the verdict."""
    still = _still(True, resamples=4000)
    for seed in range(200):
        u = _units(np.random.default_rng(seed).normal(0.4, 1.0, size=30))
        p = P.infer_pair(u, resamples=4000, rng=np.random.default_rng(3)).p_value
        if 0.03 <= p < 0.05 and u.num_a.sum() > u.num_b.sum():
            break
    got = F.fragility(u, still)
    singles = [j for j in range(u.n) if not still(F.subset(u, np.arange(u.n) != j))]
    assert (got.units_to_change, got.fragile, got.method) == (1, True, "exact") and got.removed[0] in singles


def test_the_greedy_bound_removes_units_that_change_the_verdict():
    """40 units shifted by 0.8 sd: every unit tried alone, then the greedy prefix; the prefix found
    changes the verdict and one unit fewer of it does not."""
    rng = np.random.default_rng(7)
    u = _units(rng.normal(0.8, 1.0, size=40))
    still = _still(True, resamples=2000)
    assert still(u)
    got = F.fragility(u, still)
    assert got.method == "leave_one_out_then_greedy" and got.units_to_change > 1
    order = list(got.removed)
    keep = np.ones(u.n, dtype=bool)
    keep[order] = False
    assert not still(F.subset(u, keep))
    keep[order[-1]] = True
    assert still(F.subset(u, keep))
    assert got.fragile == (got.units_to_change < 4)


def test_no_removal_empties_a_stratum():
    """Two strata: removing the only unit of stratum 1 would change what the number is; it is never tried."""
    diff = [0.5, 0.4, 0.6, 0.45, 0.55, 0.5, 0.52, 9.0]
    seen = []

    def still(u: P.Units) -> bool:
        seen.append(np.bincount(u.stratum, minlength=2))
        return u.n > 5

    got = F.fragility(_units(diff, stratum=[0] * 7 + [1], weights=(0.5, 0.5)), still)
    assert all(c[1] == 1 for c in seen) and got.units_to_change == 3 and 7 not in got.removed


@pytest.mark.parametrize(("k", "n", "fragile"), [(1, 200, True), (1, 5, True), (2, 19, False), (2, 20, False),
                                                  (2, 21, True), (3, 40, True), (4, 40, False)])
def test_fragile_is_one_unit_or_under_a_tenth(k, n, fragile):
    assert F.is_fragile(k, n) is fragile
