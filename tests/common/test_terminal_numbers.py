"""Issue 18, point 9: every terminal number is rounded to 4 significant digits, percentages say %, and the
JSON outputs keep every digit."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from pathlib import Path

import orjson
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from benchscore.cli import cli
from benchscore.common.terminal import DIGITS, fmt, interval_cell, metric_cell, number, pct, rounded

ROOT = Path(__file__).resolve().parents[2]
MIRA = ROOT / "examples" / "mira"
TCS = ROOT / "examples" / "tcsexam" / "seed-example"

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


def _significant(text: str) -> int:
    """Significant digits written in a plain or scientific number (trailing zeros of an integer not counted)."""
    mantissa = text.lstrip("-").split("e")[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits if "." in mantissa else digits.rstrip("0")) or 1


@given(finite)
def test_a_number_is_rounded_to_four_significant_digits(x):
    text = number(x)
    assert _significant(text) <= DIGITS, (x, text)
    value = float(text)
    if x == 0:
        assert value == 0
        return
    exponent = math.floor(math.log10(abs(x)))
    assert abs(value - x) <= 0.5 * 10.0 ** (exponent - DIGITS + 1) * (1 + 1e-9), (x, text)
    assert text == text.strip() and "+" not in text.split("e")[0]


@given(st.floats(min_value=1e-4, max_value=1e15, exclude_max=True), st.booleans())
def test_in_range_numbers_have_no_exponent_and_no_trailing_zero(x, negative):
    x = -x if negative else x
    text = number(x)
    assert "e" not in text
    assert not ("." in text and text.endswith("0")) and not text.endswith(".")
    assert Decimal(text) == Decimal(f"{x:.{DIGITS}g}")  # the same value as %g, written without an exponent


def test_examples_from_the_issue():
    assert number(33.33333333333333) == "33.33" and number(0.5700000000000001) == "0.57"
    assert number(0.55) == "0.55" and number(68.71877650519133) == "68.72" and number(1.0) == "1"
    assert number(9.99996) == "10" and number(7692.6) == "7693" and number(1e-9) == "1e-09"
    assert fmt(None) == "-" and fmt(True) == "yes" and fmt(3) == "3" and fmt(131072) == "131072"  # ints exact
    assert pct(33.33333333333333) == "33.33 %" and pct(None) == "-"
    assert metric_cell("reliability", 33.33333333333333) == "33.33 %"
    assert metric_cell("task_success", 0.55) == "0.55"  # a fraction, not a percentage
    assert interval_cell({"ci95": [0.567897888950015, 0.7790851194995891], "ci_method": "cluster_t"}) \
        == "[0.5679, 0.7791] cluster_t"
    assert interval_cell({"ci95": [0.0, 74.15816237971963], "ci_method": "wilson"}, percent=True) \
        == "[0, 74.16] % wilson"
    assert rounded({"a": [0.5970149253731343, 2], "b": "x"}) == {"a": [0.597, 2], "b": "x"}


_LONG_FLOAT = re.compile(r"\d\.\d{6,}|\d{6,}\.\d")  # more digits than reading needs


def _floats(doc):
    if isinstance(doc, float):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            if k != "provenance":
                yield from _floats(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _floats(v)


def test_mira_score_prints_rounded_numbers_and_percentages_and_the_json_keeps_every_digit(tmp_path, pinned_time):
    out = tmp_path / "score.json"
    r = CliRunner().invoke(cli, ["mira", "score", "--contract", str(MIRA / "contract.json"), "--repetitions",
                                 str(MIRA / "repetitions.jsonl"), "--deviations", str(MIRA / "deviations.json"),
                                 "--judge-calibration", str(MIRA / "judge_calibration.jsonl"), "--output", str(out)])
    assert r.exit_code == 0, r.output
    doc = orjson.loads(out.read_bytes())
    assert doc["overall"]["reliability"]["value"] == 33.33333333333333  # full precision in the JSON
    assert out.read_bytes() == (MIRA / "expected" / "score.json").read_bytes()  # the JSON is unchanged
    assert re.search(r"^reliability\s+33\.33 %$", r.stdout, re.M), r.stdout
    assert re.search(r"^task_success\s+0\.55$", r.stdout, re.M)
    assert re.search(r"^pass_at_1\s+66\.67 %$", r.stdout, re.M)
    assert not _LONG_FLOAT.search(r.stdout.split("deviations")[0]), _LONG_FLOAT.search(r.stdout)
    assert any(len(repr(f)) > 8 for f in _floats(doc))  # the test would see unrounded numbers


def test_tcsexam_score_prints_rounded_numbers(tmp_path, pinned_time):
    out = tmp_path / "index.json"
    r = CliRunner().invoke(cli, ["tcsexam", "score", "--suite", str(TCS / "suite.json"), "--attempts",
                                 str(TCS / "attempts.csv"), "--cohort", str(TCS / "cohort.json"), "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == (TCS / "expected" / "index.json").read_bytes()
    assert not _LONG_FLOAT.search(r.stdout), _LONG_FLOAT.search(r.stdout)
    assert "55.5" in r.stdout


def test_compare_and_verify_print_rounded_numbers(tmp_path, pinned_time):
    """compare and verify printed raw floats (0.6734915042248021); both round now, and verify still shows
    a difference it finds (with as many digits as it takes)."""
    run = CliRunner().invoke
    scores = []
    for reps in ("repetitions.jsonl", "repetitions_incomplete.jsonl"):
        scores.append(tmp_path / f"{reps}.json")
        run(cli, ["mira", "score", "--contract", str(MIRA / "contract.json"), "--repetitions", str(MIRA / reps),
                  "--output", str(scores[-1]), "--quiet"])
    twin = tmp_path / "twin.json"
    twin.write_bytes(scores[0].read_bytes())
    r = run(cli, ["compare", str(scores[0]), str(twin), "--resamples", "200", "--output",
                  str(tmp_path / "c.json")])
    assert r.exit_code == 0, r.output
    assert not _LONG_FLOAT.search(r.stdout), _LONG_FLOAT.search(r.stdout)
    assert re.search(r"^reliability\s+cannot separate at this n\s+33\.33 %\s+33\.33 %\s+0 %",
                     r.stdout, re.M), r.stdout
    doc = orjson.loads(scores[0].read_bytes())
    doc["overall"]["task_success"]["value"] = 0.55000001  # differs in the 8th digit
    changed = tmp_path / "changed.json"
    changed.write_bytes(orjson.dumps(doc))
    r = run(cli, ["verify", str(changed), "--search", str(MIRA)])
    assert r.exit_code == 1, r.output
    line = next(li for li in r.stdout.splitlines() if "task_success" in li)
    assert "0.55000001 in the file, 0.55 recomputed" in line, line
