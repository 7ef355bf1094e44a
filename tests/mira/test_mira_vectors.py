"""Golden vectors (tests/mira/vectors/*.json), written by hand from the seed's rules.

Each vector holds a contract, repetition records (and optionally a verdicts file) and either
``expected`` (values the score must contain) or ``expected_error`` (the one line bad input gives).
Fractions are written as "a/b" strings and compared to 1e-12 relative.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson
import pytest
from mira_helpers import run, write_json, write_jsonl

from benchscore.mira.scoring import effective_derivation

VECTORS = sorted((Path(__file__).parent / "vectors").glob("*.json"))


def _same(actual: Any, expected: Any, where: str) -> None:
    if isinstance(expected, str) and "/" in expected:
        a, b = expected.split("/")
        expected = float(Fraction(a) / Fraction(b))
    if expected is None or isinstance(expected, bool):
        assert actual is expected, f"{where}: {actual!r} is not {expected!r}"
    elif isinstance(expected, float):
        assert isinstance(actual, float | int) and not isinstance(actual, bool), f"{where}: {actual!r}"
        assert actual == pytest.approx(expected, rel=1e-12, abs=1e-15), f"{where}: {actual!r} != {expected!r}"
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def _inputs(tmp_path: Path, vec: dict[str, Any]) -> list[str]:
    contract = write_json(tmp_path / "contract.json", vec["contract"])
    reps = write_jsonl(tmp_path / "repetitions.jsonl", vec["repetitions"])
    args = ["score", "--contract", str(contract), "--repetitions", str(reps), "--output", str(tmp_path / "out.json"), "--quiet"]
    if "verdicts" in vec:
        args += ["--verdicts", str(write_json(tmp_path / "verdicts.json", vec["verdicts"]))]
    return args


def test_there_are_vectors() -> None:
    assert len(VECTORS) >= 25


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector(path: Path, tmp_path: Path) -> None:
    vec = orjson.loads(path.read_bytes())
    result = run(*_inputs(tmp_path, vec))
    if "expected_error" in vec:
        err = vec["expected_error"]
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        line = lines[0]
        name = {"repetitions": "repetitions.jsonl", "contract": "contract.json", "verdicts": "verdicts.json"}[err["file"]]
        prefix = f"error: {tmp_path / name}: {err['record']}: field {err['field']!r}: "
        assert line.startswith(prefix), line
        assert err["contains"] in line, line
        assert not (tmp_path / "out.json").exists()
        return
    out = orjson.loads((tmp_path / "out.json").read_bytes())
    assert result.exit_code == (0 if out["status"] == "complete" else 1), result.output  # 1: incomplete, written
    exp = vec["expected"]
    _same(out["status"], exp["status"], "status")
    if "infrastructure_invalid_count" in exp:
        _same(out["infrastructure_invalid_count"]["value"], exp["infrastructure_invalid_count"], "infrastructure_invalid_count")
    reps = {r["id"]: r for r in out["repetitions"]}
    for rid, fields in exp.get("repetitions", {}).items():
        for key, value in fields.items():
            if key == "derivation_contains":
                assert value in reps[rid]["derivation"], reps[rid]["derivation"]
            else:
                _same(reps[rid][key], value, f"{rid}.{key}")
    cases = {c["case_id"]: c for c in out["cases"]}
    for cid, fields in exp.get("cases", {}).items():
        case = cases[cid]
        for key, value in fields.items():
            if key == "metrics":
                for name, v in value.items():
                    _same(case["metrics"][name]["value"], v, f"{cid}.metrics.{name}")
            elif key == "metric_excluded_ids":
                for name, m in case["metrics"].items():
                    assert list(effective_derivation(case["derivation"], m["derivation"])["excluded"]) == value, name
            elif key == "excluded_ids":
                assert list(case["repetitions_excluded"]) == value
            elif key.startswith("governance_") and key.endswith("_ids"):
                sev = key.split("_")[1]
                assert [v["id"] for v in case["governance"][sev]] == value
            else:
                _same(case[key], value, f"{cid}.{key}")
    for section in ("overall", "diagnostic_untimed"):
        for name, v in exp.get(section, {}).items():
            _same(out[section][name]["value"], v, f"{section}.{name}")
    if "missing" in exp:
        assert len(out["missing"]) == len(exp["missing"])
        for got, want in zip(out["missing"], exp["missing"], strict=True):
            for key, value in want.items():
                if key == "missing_contains":
                    assert value in got["missing"], got["missing"]
                else:
                    _same(got[key], value, f"missing.{key}")
