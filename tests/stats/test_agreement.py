"""A judge's agreement with known verdicts (issue 36): sensitivity, specificity, Cohen's kappa and their intervals.

Pinned against scikit-learn's ``cohen_kappa_score`` (an independent implementation), checked by hypothesis for
the properties kappa must have, and calibrated by the seeded grid of ``judge_grid.py`` (judges of sensitivity and
specificity 0.6-0.99, 20-400 known verdicts): the kappa interval holds the judge's true kappa at least 93 % of the
time in every cell checked, and the grid fails the interval a symmetric (Jeffreys) posterior gives, so it can fail.
``BENCHSCORE_CALIBRATION=thorough`` runs every cell of the grid and prints the table.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from judge_grid import COVERAGE_MIN, Cell, grid, kappa_cell

from benchscore.stats import agreement as A
from benchscore.stats.intervals import NoInterval, beside

THOROUGH = os.environ.get("BENCHSCORE_CALIBRATION") == "thorough"
tables = st.tuples(*[st.integers(0, 60)] * 4).map(lambda t: A.Confusion(*t))


def _labels(c: A.Confusion) -> tuple[list[str], list[str]]:
    known = ["pass"] * c.known_pass + ["fail"] * c.known_fail
    judged = ["pass"] * c.true_pass + ["fail"] * c.false_fail + ["pass"] * c.false_pass + ["fail"] * c.true_fail
    return known, judged


def test_a_worked_table():
    c = A.Confusion(true_pass=20, false_fail=5, false_pass=10, true_fail=15)
    # p_o = 35/50 = 0.7; p_e = (25 x 30 + 25 x 20) / 50^2 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    assert A.cohen_kappa(c) == pytest.approx(0.4, abs=1e-15)
    assert A.sensitivity(c) == 0.8 and A.specificity(c) == 0.6 and A.percent_agreement(c) == 0.7
    assert A.confusion(*_labels(c)) == c


def test_a_judge_that_always_answers_pass_has_kappa_0_and_is_not_measured():
    c = A.confusion(["pass"] * 18 + ["fail"] * 6, ["pass"] * 24)
    assert A.percent_agreement(c) == 0.75  # raw agreement looks good ...
    assert A.cohen_kappa(c) == 0.0  # ... kappa does not
    block = A.agreement(c)
    assert A.always_answers(c) == "pass"
    assert block["measured"] is False and block["measured_reason"] == "this judge always answers pass"
    assert block["specificity"]["value"] == 0.0


def test_kappa_is_undefined_when_chance_agreement_is_1():
    c = A.Confusion(true_pass=25, false_fail=0, false_pass=0, true_fail=0)
    assert A.cohen_kappa(c) is None
    block = A.agreement(c)
    assert block["kappa"]["ci95"] is None and "undefined" in block["kappa"]["ci_reason"]
    assert block["measured"] is False


def test_below_20_known_verdicts_kappa_has_no_interval_and_the_reason_says_so():
    c = A.Confusion(6, 0, 0, 2)
    with pytest.raises(NoInterval, match="8 known verdicts: a calibrated 95 % interval of kappa needs at least 20"):
        A.kappa_interval(c, rng=np.random.default_rng(0))
    block = A.agreement(c)
    assert block["kappa"]["value"] == 1.0 and block["kappa"]["ci95"] is None
    assert block["measured"] is False and "kappa has no interval" in block["measured_reason"]
    assert block["specificity"]["ci_reason"] == "2 known fails: a calibrated 95 % interval needs at least 3"


def test_a_judge_that_beats_chance_is_measured():
    block = A.agreement(A.Confusion(true_pass=30, false_fail=3, false_pass=4, true_fail=23))
    low, high = block["kappa"]["ci95"]
    assert 0 < low < block["kappa"]["value"] < high <= 1
    assert block["measured"] is True and "lies above 0" in block["measured_reason"]


def test_the_interval_is_reproducible_from_its_seed():
    c = A.Confusion(12, 3, 4, 9)
    assert A.agreement(c, seed=3) == A.agreement(c, seed=3)
    assert A.agreement(c, seed=3)["kappa"] != A.agreement(c, seed=4)["kappa"]


@given(tables)
def test_kappa_agrees_with_scikit_learn(c):
    from sklearn.metrics import cohen_kappa_score

    kappa = A.cohen_kappa(c)
    if kappa is None:
        return
    known, judged = _labels(c)
    assert kappa == pytest.approx(cohen_kappa_score(known, judged), abs=1e-12)


@given(tables)
def test_kappa_properties(c):
    kappa = A.cohen_kappa(c)
    swapped_raters = A.Confusion(c.true_pass, c.false_pass, c.false_fail, c.true_fail)
    swapped_labels = A.Confusion(c.true_fail, c.false_pass, c.false_fail, c.true_pass)
    if kappa is None:
        assert A.cohen_kappa(swapped_raters) is None
        return
    assert -1.0 <= kappa <= 1.0 + 1e-12
    assert A.cohen_kappa(swapped_raters) == pytest.approx(kappa, abs=1e-12)  # symmetric in the two raters
    assert A.cohen_kappa(swapped_labels) == pytest.approx(kappa, abs=1e-12)  # pass and fail are only names
    perfect = c.false_fail == 0 and c.false_pass == 0
    assert (kappa == pytest.approx(1.0)) == perfect
    for share in (A.sensitivity(c), A.specificity(c), A.percent_agreement(c)):
        assert share is None or 0.0 <= share <= 1.0


@given(tables.filter(lambda c: c.n >= A.MIN_KNOWN))
def test_the_kappa_interval_is_an_interval_inside_minus_1_and_1(c):
    got = A.kappa_interval(c, rng=np.random.default_rng(1), draws=2000)
    assert -1.0 <= got.low <= got.high <= 1.0
    assert got.low < got.high or A.cohen_kappa(c) is None


def test_beside_knows_the_method():
    got = beside(lambda: A.kappa_interval(A.Confusion(10, 2, 3, 9), rng=np.random.default_rng(0), draws=500))
    assert got["ci_method"] == "dirichlet_split"


# --- calibration by simulation -------------------------------------------------------------------------------

#: the cells the default run checks: the hardest of the grid (a near-perfect judge with few known verdicts,
#: rare classes, a poor judge) and one large one; the thorough run checks them all
SELECTION = [Cell(0.99, 0.99, 0.5, 20), Cell(0.95, 0.99, 0.5, 20), Cell(0.99, 0.99, 0.1, 50),
             Cell(0.6, 0.6, 0.1, 20), Cell(0.8, 0.6, 0.1, 100), Cell(0.95, 0.8, 0.5, 400), Cell(0.6, 0.99, 0.9, 20)]


def test_the_kappa_interval_holds_its_level_over_the_grid():
    cells = grid() if THOROUGH else SELECTION
    reps = 1000 if THOROUGH else 300
    rows = []
    for cell in cells:
        got = kappa_cell(cell, reps, seed=36)
        rows.append((cell, got))
        assert got["kappa_coverage"] >= COVERAGE_MIN, (cell, got)
    if THOROUGH:
        worst = min(r[1]["kappa_coverage"] for r in rows)
        print(f"\nkappa dirichlet_split: {len(rows)} cells x {reps}: worst coverage {worst:.3f}, mean "
              f"{np.mean([r[1]['kappa_coverage'] for r in rows]):.3f}")


def test_sensitivity_and_specificity_intervals_hold_their_level():
    for cell in (Cell(0.99, 0.6, 0.5, 20), Cell(0.8, 0.95, 0.1, 50), Cell(0.6, 0.8, 0.9, 400)):
        got = kappa_cell(cell, 1000, seed=37, draws=200)
        assert got["sensitivity_coverage"] >= COVERAGE_MIN, (cell, got)
        assert got["specificity_coverage"] >= COVERAGE_MIN, (cell, got)


def test_the_grid_fails_a_symmetric_posterior_interval():
    """The grid can fail: the equal-tailed interval of kappa under the Jeffreys posterior (Dirichlet(1/2, ...)),
    the obvious Bayesian choice, covers a near-perfect judge's kappa far less than 93 % with 20 known verdicts."""

    def jeffreys(c: A.Confusion, rng: np.random.Generator) -> tuple[float, float]:
        draws = A.kappa_of_cells(rng.dirichlet(np.array(c.cells(), dtype=float) + 0.5, size=4000))
        low, high = np.nanquantile(draws, [0.025, 0.975])
        return float(low), float(high)

    got = kappa_cell(Cell(0.99, 0.99, 0.5, 20), 300, seed=36, interval=jeffreys)
    assert got["kappa_coverage"] < COVERAGE_MIN, got
