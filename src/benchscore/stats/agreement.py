"""How well a judge agrees with known verdicts: sensitivity, specificity and Cohen's kappa, each with its 95 % interval.

A judge answers ``pass`` or ``fail``; a person has decided the *known verdict* of the same packet. The four
counts of the 2 x 2 table (:class:`Confusion`) are all a judge report holds; every number here is a pure
function of them:

- **sensitivity** = true_pass / (true_pass + false_fail): the share of known passes the judge passes;
- **specificity** = true_fail / (true_fail + false_pass): the share of known fails the judge fails;
- **percent agreement** p_o = (true_pass + true_fail) / n;
- **Cohen's kappa** (Cohen 1960) = (p_o - p_e) / (1 - p_e), with p_e = (P_known P_judge + F_known F_judge) / n^2
  the agreement two raters with these margins reach by chance (P: passes, F: fails). A judge that always answers
  ``pass`` has kappa 0 however often the known verdict is ``pass``: raw agreement overstates it, kappa does not.

Intervals (calibrated by the seeded simulations of ``tests/stats/test_agreement.py``, table in docs/statistics.md):

- sensitivity and specificity: ``exact_mid_p`` (:func:`benchscore.stats.intervals.mid_p`) on the known passes and
  the known fails, from :data:`MIN_CLASS` of each;
- kappa: ``dirichlet_split`` (:func:`kappa_interval`): the 2.5 % quantile of kappa under the Dirichlet
  distribution of the four cell probabilities given the counts plus 1 in each disagreement cell and 1/2 in each
  agreement cell, and the 97.5 % quantile given the counts plus 1 in each agreement cell (and 1/100 in each
  disagreement cell): like Clopper and Pearson's interval of a proportion, each end leans the prior away from
  itself, so that few disagreements never make the interval a point near 1. From :data:`MIN_KNOWN` known
  verdicts on (below, the simulations show no method holding 93 %): no interval, and the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .intervals import DEFAULT_SEED, LEVEL, Interval, NoInterval, beside, mid_p, rng_for

#: the fewest known verdicts for an interval of kappa (the calibration grid starts there)
MIN_KNOWN = 20
#: the fewest known passes (known fails) for an interval of sensitivity (specificity)
MIN_CLASS = 3
#: posterior draws per end of the kappa interval (Monte Carlo error of a 2.5 % quantile about 0.002)
DRAWS = 20_000
#: the Dirichlet pseudo-counts of the lower and the upper end: (true_pass, false_fail, false_pass, true_fail)
LOWER_PRIOR = (0.5, 1.0, 1.0, 0.5)
UPPER_PRIOR = (1.0, 0.01, 0.01, 1.0)
VERDICTS = ("pass", "fail")


@dataclass(frozen=True)
class Confusion:
    """The 2 x 2 table of known verdicts (rows) against the judge's (columns)."""

    true_pass: int
    false_fail: int
    false_pass: int
    true_fail: int

    @property
    def n(self) -> int:
        return self.true_pass + self.false_fail + self.false_pass + self.true_fail

    @property
    def known_pass(self) -> int:
        return self.true_pass + self.false_fail

    @property
    def known_fail(self) -> int:
        return self.false_pass + self.true_fail

    @property
    def judge_pass(self) -> int:
        return self.true_pass + self.false_pass

    @property
    def judge_fail(self) -> int:
        return self.false_fail + self.true_fail

    def cells(self) -> tuple[int, int, int, int]:
        return (self.true_pass, self.false_fail, self.false_pass, self.true_fail)


def confusion(known: Sequence[str], judged: Sequence[str]) -> Confusion:
    """The table of paired verdicts (each ``pass`` or ``fail``; a judge's ``judge_failed`` is no verdict and is
    counted by the caller, never here)."""
    if len(known) != len(judged):
        raise ValueError("known and judged verdicts must pair up")
    cells = {(k, j): 0 for k in VERDICTS for j in VERDICTS}
    for k, j in zip(known, judged, strict=True):
        if k not in VERDICTS or j not in VERDICTS:
            raise ValueError(f"a verdict is 'pass' or 'fail', not {k if k not in VERDICTS else j!r}")
        cells[(k, j)] += 1
    return Confusion(cells[("pass", "pass")], cells[("pass", "fail")], cells[("fail", "pass")], cells[("fail", "fail")])


def sensitivity(c: Confusion) -> float | None:
    """true_pass / (true_pass + false_fail); None without a known pass."""
    return c.true_pass / c.known_pass if c.known_pass else None


def specificity(c: Confusion) -> float | None:
    """true_fail / (true_fail + false_pass); None without a known fail."""
    return c.true_fail / c.known_fail if c.known_fail else None


def percent_agreement(c: Confusion) -> float | None:
    """p_o = (true_pass + true_fail) / n; None for an empty table."""
    return (c.true_pass + c.true_fail) / c.n if c.n else None


def kappa_of_cells(cells: np.ndarray) -> np.ndarray:
    """Cohen's kappa of tables (or cell probabilities) in the last axis, ordered (true_pass, false_fail,
    false_pass, true_fail): ``(p_o - p_e) / (1 - p_e)``; NaN where p_e is 1."""
    a, b, c, d = (cells[..., i] for i in range(4))
    n = a + b + c + d
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1.0, (po - pe) / (1.0 - pe), np.nan)


def cohen_kappa(c: Confusion) -> float | None:
    """Cohen's kappa (module docstring); None when chance agreement is 1 (both raters gave one and the same
    answer to every packet: nothing tells agreement from chance)."""
    if c.n == 0:
        return None
    value = float(kappa_of_cells(np.array(c.cells(), dtype=float)))
    return None if value != value else value


def kappa_interval(c: Confusion, *, rng: np.random.Generator, level: float = LEVEL,
                   draws: int = DRAWS) -> Interval:
    """The ``dirichlet_split`` interval of Cohen's kappa (module docstring); :class:`NoInterval` below
    :data:`MIN_KNOWN` known verdicts."""
    if c.n < MIN_KNOWN:
        raise NoInterval(f"{c.n} known verdict{'s' * (c.n != 1)}: a calibrated 95 % interval of kappa needs at least "
                         f"{MIN_KNOWN}")
    tail = (1.0 - level) / 2.0
    counts = np.array(c.cells(), dtype=float)
    low = np.nanquantile(kappa_of_cells(rng.dirichlet(counts + LOWER_PRIOR, size=draws)), tail)
    high = np.nanquantile(kappa_of_cells(rng.dirichlet(counts + UPPER_PRIOR, size=draws)), 1.0 - tail)
    return Interval(float(low), float(max(low, high)), "dirichlet_split")


def _share_interval(successes: int, n: int, what: str) -> Interval:
    if n < MIN_CLASS:
        raise NoInterval(f"{n} known {what}{'s' * (n != 1)}: a calibrated 95 % interval needs at least {MIN_CLASS}")
    low, high = mid_p(successes, n)
    return Interval(low, high, "exact_mid_p")


def agreement(c: Confusion, *, seed: int = DEFAULT_SEED, name: str = "judge") -> dict[str, Any]:
    """The agreement block of a judge report: each statistic as ``{"value", "ci95", "ci_method"[, "ci_reason"]}``
    and the verdict on the judge (``measured`` when kappa's interval lies above 0, else
    ``not_decided_by_a_measured_judge`` with the reason)."""
    sens, spec, kappa = sensitivity(c), specificity(c), cohen_kappa(c)

    def stat(value: float | None, compute: Any, method: str, why_null: str) -> dict[str, Any]:
        return {"value": value, **beside(compute, unavailable=why_null if value is None else None, method=method)}

    out = {
        "sensitivity": stat(sens, lambda: _share_interval(c.true_pass, c.known_pass, "pass"), "exact_mid_p",
                            "no known pass: sensitivity is undefined"),
        "specificity": stat(spec, lambda: _share_interval(c.true_fail, c.known_fail, "fail"), "exact_mid_p",
                            "no known fail: specificity is undefined"),
        "kappa": stat(kappa, lambda: kappa_interval(c, rng=rng_for(seed, name, "kappa")), "dirichlet_split",
                      "chance agreement is 1 (the judge and the known verdicts give one and the same answer to "
                      "every packet): kappa is undefined"),
        "percent_agreement": {"value": percent_agreement(c)},
    }
    out["measured"], out["measured_reason"] = judge_measured(out["kappa"], c)
    return out


def agreement_block(known: Sequence[str], given: Sequence[str], *, seed: int = DEFAULT_SEED,
                    name: str = "judge") -> dict[str, Any]:
    """What a judge report says of known verdicts (``pass``/``fail``) against a judge's answers (``pass``,
    ``fail``, or ``judge_failed``: no verdict, counted apart and never in the table): the table, the share of
    each answer and of each known verdict, whether the judge always gives one answer, and :func:`agreement`."""
    pairs = [(k, g) for k, g in zip(known, given, strict=True) if g != "judge_failed"]
    table = confusion([k for k, _ in pairs], [g for _, g in pairs])
    stats = agreement(table, seed=seed, name=name)
    total = len(known)

    def share(count: int) -> float:
        return count / total if total else 0.0

    return {
        "known": table.n,
        "judge_failed": total - table.n,
        "table": {"true_pass": table.true_pass, "false_fail": table.false_fail, "false_pass": table.false_pass,
                  "true_fail": table.true_fail},
        "answers": {a: share(sum(1 for g in given if g == a)) for a in ("pass", "fail", "judge_failed")},
        "known_answers": {a: share(sum(1 for k in known if k == a)) for a in VERDICTS},
        "always_answers": always_answers(table),
        "sensitivity": stats["sensitivity"],
        "specificity": stats["specificity"],
        "kappa": stats["kappa"],
        "percent_agreement": stats["percent_agreement"]["value"],
        "measured": stats["measured"],
        "measured_reason": stats["measured_reason"],
    }


def always_answers(c: Confusion) -> str | None:
    """``pass`` (``fail``) when the judge answered ``pass`` (``fail``) to every packet with a known verdict."""
    if c.n and c.judge_fail == 0:
        return "pass"
    if c.n and c.judge_pass == 0:
        return "fail"
    return None


def judge_measured(kappa: dict[str, Any], c: Confusion) -> tuple[bool, str]:
    """Whether the judge's verdicts count as decided by a measured judge: kappa's 95 % interval lies above 0.
    Returns the answer and its reason in words."""
    constant = always_answers(c)
    if constant is not None:
        return False, f"this judge always answers {constant}"
    if kappa["ci95"] is None:
        return False, f"kappa has no interval ({kappa.get('ci_reason')})"
    low, high = kappa["ci95"]
    if low <= 0.0:
        return False, f"kappa's 95 % interval [{low:.3g}, {high:.3g}] includes 0: the judge is not shown to beat chance"
    return True, f"kappa's 95 % interval [{low:.3g}, {high:.3g}] lies above 0"


__all__ = ["DRAWS", "MIN_CLASS", "MIN_KNOWN", "Confusion", "agreement", "agreement_block", "always_answers", "cohen_kappa", "confusion",
           "judge_measured", "kappa_interval", "kappa_of_cells", "percent_agreement", "sensitivity", "specificity"]
