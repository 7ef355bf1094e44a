"""What a ``differs`` verdict rests on: the fewest units whose removal changes it.

A paired comparison separates two results on ``n`` independent units (:mod:`benchscore.stats.paired`).
Its *fragility* is the fewest units whose removal (the test rerun on the units left, with the same
test, the same resamples and, with three or more results, Holm over the other pairs' p-values as they
were) turns ``differs`` into another verdict (``not_separated``, ``cannot_separate_at_this_n``, or a
difference of the other sign). A verdict is *fragile* when it rests on one unit or on fewer than
:data:`FRAGILE_SHARE` of the units: a reader should not trust a separation that one or two tasks
carry (SWE-bench's board flips on half-splits).

How the fewest units are found (the method is written beside the count):

- first the greedy bound: the units that favour the winner most are removed one by one, the shortest
  such prefix that changes the verdict found by bisection (a handful of reruns): an upper bound;
- then every single unit on the winner's side is removed in turn (up to :data:`LEAVE_ONE_OUT_UNITS`
  units; a unit that favours the loser or neither only widens the gap or leaves the statistic as it is),
  so a count of 1 is always found when there is one (and below 20 units a verdict is fragile exactly
  when one unit carries it);
- ``exact``: up to :data:`EXACT_UNITS` units, every set of 2, 3, ... units below the greedy bound is
  removed in turn, when that takes at most :data:`EXACT_TESTS` reruns: the count is the fewest;
- ``leave_one_out_then_greedy``: a count past one is the greedy bound (fewer other units might do);
- ``greedy``: the greedy bound alone (more units than leave-one-out affords).

Units are ordered by their share of the difference (the winner's side first):
``scale W_s (num_a / D_a,s - num_b / D_b,s)`` (``D``: the stratum's summed denominators), which sum to
``value(a) - value(b)``. A removal that empties a stratum is not made (it changes what the
number is, not how sure we are of it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchscore.stats import paired as P

#: a verdict resting on fewer than this share of its units (or on one unit) is fragile
FRAGILE_SHARE = 0.10
#: up to this many units the fewest units are found exactly (every subset, smallest first)
EXACT_UNITS = 13
#: the most reruns of the test the exact search makes before it falls back to the greedy bound
EXACT_TESTS = 2_000
#: up to this many units every single unit is removed in turn (past it: the greedy bound only; each rerun of
#: a sign-flip test on 100 units with 10,000 patterns takes about 5 ms)
LEAVE_ONE_OUT_UNITS = 100

METHODS = ("exact", "leave_one_out_then_greedy", "greedy")


@dataclass(frozen=True)
class Fragility:
    """``units_to_change``: the fewest units found whose removal changes the verdict (``removed``: their
    positions, winner's side first) out of ``n_units``; ``method`` (:data:`METHODS`) says whether the
    count is exact or an upper bound; ``fragile``: one unit, or fewer than :data:`FRAGILE_SHARE` of them."""

    units_to_change: int
    n_units: int
    removed: tuple[int, ...]
    method: str
    tests: int

    @property
    def share(self) -> float:
        return self.units_to_change / self.n_units

    @property
    def fragile(self) -> bool:
        return is_fragile(self.units_to_change, self.n_units)


def is_fragile(k: int, n: int) -> bool:
    """A verdict resting on ``k`` of ``n`` units is fragile when ``k == 1`` or ``k < FRAGILE_SHARE x n``."""
    return k <= 1 or k < FRAGILE_SHARE * n


def contributions(u: P.Units) -> np.ndarray:
    """Each unit's share of ``value(a) - value(b)`` (see the module doc); they sum to the difference."""
    s = len(u.weights)
    w = u.scale * u.weights
    bot_a = np.bincount(u.stratum, weights=u.den_a, minlength=s)
    bot_b = np.bincount(u.stratum, weights=u.den_b, minlength=s)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = w[u.stratum] * (u.num_a / bot_a[u.stratum] - u.num_b / bot_b[u.stratum])
    return np.nan_to_num(c)


def subset(u: P.Units, keep: np.ndarray) -> P.Units:
    """The units ``keep`` (a boolean mask) of ``u``, strata and weights as they were."""
    return P.Units(u.num_a[keep], u.den_a[keep], u.num_b[keep], u.den_b[keep], u.stratum[keep], u.weights, u.scale,
                   u.bounds)


def fragility(u: P.Units, still_differs: Callable[[P.Units], bool]) -> Fragility:
    """The fewest units of ``u`` whose removal changes a ``differs`` verdict (see the module doc).

    ``still_differs(units)`` reruns the comparison's test on ``units`` and says whether the verdict is
    still ``differs`` with the difference's sign as it was (the caller holds the test, its resamples,
    its seed and Holm's family)."""
    n = u.n
    c = contributions(u)
    sign = 1.0 if float(np.sum(c)) >= 0 else -1.0
    # winner's side first; ties by position (deterministic)
    order = np.lexsort((np.arange(n), -sign * c))
    s = len(u.weights)
    per_stratum = np.bincount(u.stratum, minlength=s)
    tests = 0

    def changes(removed: tuple[int, ...] | np.ndarray) -> bool | None:
        """Whether removing ``removed`` changes the verdict; None when it would empty a stratum."""
        nonlocal tests
        keep = np.ones(n, dtype=bool)
        keep[list(removed)] = False
        if np.any(np.bincount(u.stratum[keep], minlength=s)[per_stratum > 0] == 0):
            return None
        tests += 1
        return not still_differs(subset(u, keep))

    # the greedy bound: the shortest prefix of ``order`` whose removal changes the verdict, by bisection
    # (the verdict of a prefix is taken as monotone in its length; the prefix found is checked)
    top, got = n - 1, None
    while top > 0 and (got := changes(order[:top])) is None:
        top -= 1
    if top <= 0 or not got:
        bound = Fragility(n, n, tuple(order.tolist()), "greedy", tests)  # only removing everything changes it
    else:
        low, high = 0, top  # removing ``low`` units keeps the verdict, removing ``high`` changes it
        while high - low > 1:
            mid = (low + high) // 2
            if changes(order[:mid]):
                high = mid
            else:
                low = mid
        bound = Fragility(high, n, tuple(order[:high].tolist()), "greedy", tests)
    if bound.units_to_change == 1:  # nothing is fewer than one unit
        return Fragility(1, n, bound.removed, "exact", tests)
    if n <= LEAVE_ONE_OUT_UNITS:
        for j in order.tolist():
            if sign * c[j] <= 0:
                break  # the rest favour the loser or neither
            if changes((j,)):
                return Fragility(1, n, (j,), "exact" if n <= EXACT_UNITS else "leave_one_out_then_greedy", tests)
    k_bound = bound.units_to_change
    if n <= EXACT_UNITS and sum(math.comb(n, k) for k in range(2, k_bound)) <= EXACT_TESTS:
        for k in range(2, k_bound):
            for combo in itertools.combinations(order.tolist(), k):
                if changes(combo):
                    return Fragility(k, n, combo, "exact", tests)
        return Fragility(k_bound, n, bound.removed, "exact", tests)
    return Fragility(k_bound, n, bound.removed, "leave_one_out_then_greedy" if n <= LEAVE_ONE_OUT_UNITS else "greedy",
                     tests)
