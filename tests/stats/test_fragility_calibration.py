"""issue 38 point 1: how often ``differs`` is said, and said without being fragile, under skewed nulls, and
whether the studentised sign-flip statistic would do better than today's (the mean's) at no more than 5
points of power under symmetric shifts.

The skewed nulls: one model gains ``+gain`` on a share ``q`` of the units and loses ``0.04 +- 0.02`` on the
rest, ``gain = 0.04 (1 - q) / q`` (true mean difference 0): q = 20 % (mild), 10 % (the issue's, +0.36),
5 % (strong, +0.76), at 8, 10, 13, 14, 20 and 40 units. The shifts: differences ``N(2.5 / sqrt(n), 1)``.

``BENCHSCORE_CALIBRATION=thorough`` draws 400 data sets a cell and rewrites the table in
docs/statistics.md (between ``<!-- fragility-table:start -->`` and ``<!-- fragility-table:end -->``);
the default run draws a few cells and checks what the table's reading rests on.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import numpy as np
import pytest

from benchscore.stats import fragility as F
from benchscore.stats import paired as P
from benchscore.stats.compare import _verdict

THOROUGH = os.environ.get("BENCHSCORE_CALIBRATION") == "thorough"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"
UNITS = (8, 10, 13, 14, 20, 40)
SKEWS = {"mild (20 % gain +0.16)": 0.20, "the issue's (10 % gain +0.36)": 0.10, "strong (5 % gain +0.76)": 0.05}
RESAMPLES = 2000
ALPHA = 0.05


def skewed_null(rng: np.random.Generator, n: int, q: float) -> np.ndarray:
    """Paired differences a - b: ``+0.04 (1 - q) / q`` on a share q of units, ``-N(0.04, 0.02)`` elsewhere."""
    gain = 0.04 * (1 - q) / q
    return np.where(rng.random(n) < q, gain, -rng.normal(0.04, 0.02, size=n))


def _units(diff: np.ndarray) -> P.Units:
    n = diff.size
    return P.Units(diff + 1.0, np.ones(n), np.ones(n), np.ones(n), np.zeros(n, dtype=np.int64), np.ones(1))


def _differs(u: P.Units, seed: int) -> tuple[bool, float]:
    r = P.infer_pair(u, resamples=RESAMPLES, rng=np.random.default_rng(seed))
    verdict, _ = _verdict(r.p_value, r.smallest_attainable_p, ALPHA, 1, None, r.n_units)
    return verdict == "differs", r.difference


def studentised_sign_flip(x: np.ndarray, rng: np.random.Generator, resamples: int = RESAMPLES) -> float:
    """The two-sided sign-flip p-value of the studentised mean ``T = mean / (sd / sqrt(n))`` (each sign
    pattern's own sd): exact under symmetry, asymptotically valid without it. Every pattern when
    ``2^n <= resamples``, else ``resamples`` random ones counted with the observed."""
    n = x.size
    if 2**n <= resamples:
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        signs = 1.0 - 2.0 * ((codes >> np.arange(n)) & 1)
        adj = 0
    else:
        signs = rng.choice((-1.0, 1.0), size=(resamples, n))
        adj = 1
    y = signs * x
    m = y.mean(axis=1)
    sd = y.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, m / sd * np.sqrt(n), np.sign(m) * np.inf)
    sd0 = x.std(ddof=1)
    t0 = x.mean() / sd0 * np.sqrt(n) if sd0 > 0 else np.sign(x.mean()) * np.inf
    tol = 1e-9 * max(1.0, abs(t0)) if np.isfinite(t0) else 0.0
    ge = np.sum(t >= t0 - tol) + adj
    le = np.sum(t <= t0 + tol) + adj
    return float(min(1.0, 2.0 * min(ge, le) / (t.size + adj)))


def cell(n: int, q: float | None, draws: int, seed: int) -> dict[str, float]:
    """One cell: the share of draws today's test says differs, says it not fragile, and the studentised
    statistic says differs (``q`` None: the shift, for power)."""
    rng = np.random.default_rng([seed, n, int(1000 * (q or 0))])
    differs = robust = student = 0
    for k in range(draws):
        x = skewed_null(rng, n, q) if q is not None else rng.normal(2.5 / np.sqrt(n), 1.0, size=n)
        u = _units(x)
        got, d = _differs(u, k)
        student += studentised_sign_flip(x, np.random.default_rng(k)) < ALPHA
        if not got:
            continue
        differs += 1
        if q is None:
            continue

        def still(v: P.Units, k=k, sign=d > 0) -> bool:
            ok, dv = _differs(v, k)
            return ok and (dv > 0) == sign

        robust += not F.fragility(u, still).fragile
    return {"differs": differs / draws, "not_fragile": robust / draws, "studentised": student / draws}


def test_a_sample_where_no_unit_gains_separates_and_rests_on_many_units():
    """Why no statistic or fragility rule meets the issue's goal at 8-13 units: with probability 0.9^n no
    unit of the skewed null gains (43 % at 8 units, 25 % at 13), and such a sample is every unit losing
    about 0.04, exactly what a true shift of -0.04 gives. Both statistics separate it (every sign
    pattern is less extreme), and it takes removing 3 of 8 units (down to 5, where 2/32 > 0.05) to
    change the verdict: not fragile."""
    rng = np.random.default_rng(38)
    x = -rng.normal(0.04, 0.02, size=8)
    u = _units(x)
    assert _differs(u, 0)[0] and studentised_sign_flip(x, rng) == pytest.approx(2 / 256)
    got = F.fragility(u, lambda v: _differs(v, 0)[0] and _differs(v, 0)[1] < 0)
    assert (got.units_to_change, got.method, got.fragile) == (3, "exact", False)
    assert 0.9**8 == pytest.approx(0.430, abs=5e-4) and 0.9**13 == pytest.approx(0.254, abs=5e-4)


def test_the_skewed_null_at_8_units_separates_in_about_the_issues_share():
    """The issue measured 47 % differs at 8 units; most of it is the 43 % of samples without a gain."""
    got = cell(8, 0.10, 200 if not THOROUGH else 400, seed=1)
    assert 0.38 <= got["differs"] <= 0.56 and got["not_fragile"] >= 0.9 * 0.9**8


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


@pytest.mark.skipif(not THOROUGH, reason="BENCHSCORE_CALIBRATION=thorough: 400 draws a cell, rewrites the docs' table")
def test_write_the_fragility_table():
    draws = 400
    rows = []
    for name, q in SKEWS.items():
        for n in UNITS:
            got = cell(n, q, draws, seed=38)
            rows.append(f"| {name} | {n} | {_pct((1 - q) ** n)} | {_pct(got['differs'])} "
                        f"| {_pct(got['not_fragile'])} | {_pct(got['studentised'])} |")
    power = []
    for n in UNITS:
        got = cell(n, None, draws, seed=38)
        power.append(f"| {n} | {2.5 / np.sqrt(n):.3f} | {_pct(got['differs'])} | {_pct(got['studentised'])} |")
    stamp = datetime.date.today().isoformat()
    table = "\n".join([
        f"Fragility under skewed nulls (generated {stamp} by `BENCHSCORE_CALIBRATION=thorough pytest "
        f"tests/stats/test_fragility_calibration.py`; {draws} seeded draws a cell, {RESAMPLES} sign patterns past "
        "2^n; a gain on a share q of the units, a loss of 0.04 +- 0.02 on the rest, true mean difference 0):", "",
        "| skew | units | draws without a gain | differs (today's statistic) | differs, not fragile | differs "
        "(studentised sign flip) |", "| --- | ---: | ---: | ---: | ---: | ---: |", *rows, "",
        "Power under symmetric shifts (differences N(2.5 / sqrt(n), 1)):", "",
        "| units | shift | today's statistic | studentised sign flip |", "| ---: | ---: | ---: | ---: |", *power])
    body = DOCS.read_text()
    start, end = "<!-- fragility-table:start -->", "<!-- fragility-table:end -->"
    head, rest = body.split(start)
    _, tail = rest.split(end)
    DOCS.write_text(f"{head}{start}\n{table}\n{end}{tail}")


def test_the_docs_carry_the_fragility_table():
    body = DOCS.read_text()
    assert "<!-- fragility-table:start -->" in body and "<!-- fragility-table:end -->" in body
    table = body.split("<!-- fragility-table:start -->")[1].split("<!-- fragility-table:end -->")[0]
    assert "BENCHSCORE_CALIBRATION=thorough pytest tests/stats/test_fragility_calibration.py" in table
    assert sum(line.startswith("| ") and " | " in line for line in table.splitlines()) >= 3 * len(UNITS) + len(UNITS)
