"""CLI wiring: demo, reproducible output, bad input (one line, exit 2, nothing written), calibrate, schema, subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from mira_helpers import DATA, run, write_json, write_jsonl
from pydantic import TypeAdapter, ValidationError

from benchscore.cli import cli as umbrella
from benchscore.mira import formats as F
from benchscore.mira.cli import FORMATS, demo
from benchscore.mira.scoring import effective_derivation

VENV_BIN = Path(sys.executable).parent


def _score_args(tmp_path: Path, reps: Path | None = None, contract: Path | None = None) -> list:
    return ["score", "--contract", contract or DATA / "contract.json", "--repetitions", reps or DATA / "repetitions.jsonl",
            "--deviations", DATA / "deviations.json", "--output", tmp_path / "out.json"]


def test_demo_runs_and_covers_every_status(tmp_path: Path) -> None:
    demo(tmp_path / "mira")
    out = orjson.loads((tmp_path / "mira" / "score.json").read_bytes())
    statuses = {r["status"] for r in out["repetitions"]}
    assert {"pass", "late_complete", "partial", "fail", "post_cutoff_completion", None} <= statuses
    assert {r["execution_mode"] for r in out["repetitions"]} == {"canonical", "adapted", "noncanonical", "invalid"}
    assert out["status"] == "complete"
    inc = orjson.loads((tmp_path / "mira" / "score_incomplete.json").read_bytes())
    assert inc["status"] == "incomplete" and inc["missing"][0]["case_id"] == "ADV-03"
    for name in ("public.json", "contract_calibrated.json"):
        assert (tmp_path / "mira" / name).exists()


def test_seed_deviation_is_carried_unchanged(tmp_path: Path) -> None:
    assert run(*_score_args(tmp_path), "--quiet").exit_code == 0
    out = orjson.loads((tmp_path / "out.json").read_bytes())
    text = out["deviations"][0]["text"]
    assert text.startswith("ADV-02 rep-1 was judged in a separate fresh blank ChatGPT thread.")
    assert "recorded as a methodology deviation." in text
    assert out["deviations"] == orjson.loads((DATA / "deviations.json").read_bytes())["deviations"]
    run("project", "--score", tmp_path / "out.json", "--output", tmp_path / "pub.json")
    assert orjson.loads((tmp_path / "pub.json").read_bytes())["deviations"] == out["deviations"]


def test_seed_formal_run_51_adapted_repetitions_are_all_valid_comparable(tmp_path: Path) -> None:
    """Seed: "当前 Formal run 的 51/51 repetitions 均为 adapted 且 valid comparable" (adapted is not penalised)."""
    cases = [{"case_id": f"K{i:02d}", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "automated_scored",
              "criteria": [{"id": "c", "weight": 1, "scorer": "deterministic"}], "t_soft_s": 60} for i in range(17)]
    reps = [{"case_id": c["case_id"], "repetition": n, "execution_mode": "adapted", "terminal_state": "completed",
             "elapsed_s": 30, "deterministic_results": {"c": True}} for c in cases for n in (1, 2, 3)]
    c = write_json(tmp_path / "c.json", {"benchmark_id": "mira", "contract_version": "0.1", "cases": cases})
    r = write_jsonl(tmp_path / "r.jsonl", reps)
    assert run("score", "--contract", c, "--repetitions", r, "--output", tmp_path / "o.json", "--quiet").exit_code == 0
    out = orjson.loads((tmp_path / "o.json").read_bytes())
    assert out["status"] == "complete"
    assert out["overall"]["valid_comparable_repetition_count"]["value"] == 51
    assert out["overall"]["task_success"]["value"] == 1.0  # adapted is not automatically penalised
    assert out["overall"]["stable_at_3"]["value"] == 100.0


def test_same_inputs_give_byte_identical_output(tmp_path: Path, pinned_time) -> None:
    assert run(*_score_args(tmp_path), "--quiet").exit_code == 0
    first = (tmp_path / "out.json").read_bytes()
    assert run(*_score_args(tmp_path), "--quiet").exit_code == 0
    assert (tmp_path / "out.json").read_bytes() == first
    out = orjson.loads(first)
    assert out["provenance"]["created_at"] == "2026-01-01T00:00:00Z"
    assert set(out["provenance"]["inputs"]) == {"contract", "repetitions", "deviations"}
    F.ScoreOutput.model_validate(out)


def test_every_number_has_a_derivation(tmp_path: Path) -> None:
    assert run(*_score_args(tmp_path), "--quiet").exit_code == 0
    out = orjson.loads((tmp_path / "out.json").read_bytes())
    metrics = [(c["derivation"], m) for c in out["cases"] for m in c["metrics"].values()]
    metrics += [(out["overall_derivation"], m) for m in out["overall"].values()]
    metrics += [(out["diagnostic_untimed_derivation"], m) for m in out["diagnostic_untimed"].values()]
    for shared, m in metrics:
        d = effective_derivation(shared, m["derivation"])
        assert d["formula"] in out["formulas"]
        assert all(reason in out["exclusion_reasons"] for reason in d["excluded"].values())
    # a case names the repetitions its metrics used and why the others were left out, once
    adv1 = next(c for c in out["cases"] if c["case_id"] == "ADV-01")
    left_out = {"ADV-01#4": "noncanonical", "ADV-01#5": "beyond_planned"}
    assert adv1["derivation"] == {"used": ["ADV-01#1", "ADV-01#2", "ADV-01#3"], "excluded": left_out}
    assert adv1["metrics"]["reliability"]["derivation"] == {"formula": "reliability"}
    d = effective_derivation(adv1["derivation"], adv1["metrics"]["reliability"]["derivation"])
    assert d["used"] == ["ADV-01#1", "ADV-01#2", "ADV-01#3"]
    assert d["excluded"] == left_out
    # Pass@1 narrows the case's repetitions to the first; the others are left out as not_first
    d = effective_derivation(adv1["derivation"], adv1["metrics"]["pass_at_1"]["derivation"])
    assert d["used"] == ["ADV-01#1"]
    assert d["excluded"] == {"ADV-01#2": "not_first", "ADV-01#3": "not_first", **left_out}
    adv3 = next(c for c in out["cases"] if c["case_id"] == "ADV-03")
    assert effective_derivation(adv3["derivation"], adv3["metrics"]["task_success"]["derivation"])["excluded"] == {
        "ADV-03#3": "invalid"}
    assert effective_derivation(adv3["derivation"], adv3["metrics"]["pass_at_1"]["derivation"])["used"] == ["ADV-03#1"]
    # overall metrics name cases (each case names its repetitions), and why every other case was left out
    assert out["overall_derivation"]["used"] == [c["case_id"] for c in out["cases"]
                                                 if c["scoring_class"] == "automated_scored"]
    assert out["overall_derivation"]["excluded"] == {"scoring_class:diagnostic_untimed": "other_scoring_class"}
    assert all(m["derivation"] == {"formula": "overall." + name} for name, m in out["overall"].items())
    # no metric repeats a repetition id the case already names
    for c in out["cases"]:
        for m in c["metrics"].values():
            assert len(m["derivation"].get("used", ())) <= 1


def test_incomplete_case_derivation_names_every_repetition_once(tmp_path: Path) -> None:
    assert run(*_score_args(tmp_path, DATA / "repetitions_incomplete.jsonl"), "--quiet").exit_code == 1  # incomplete
    out = orjson.loads((tmp_path / "out.json").read_bytes())
    adv3 = next(c for c in out["cases"] if c["case_id"] == "ADV-03")
    shared = adv3["derivation"]
    assert shared["used"] == [] and shared["excluded"]["ADV-03"] == "case_incomplete"
    ids = {r["id"] for r in out["repetitions"] if r["case_id"] == "ADV-03"}
    assert set(shared["excluded"]) == ids | {"ADV-03"}
    for m in adv3["metrics"].values():
        assert m["value"] is None and set(m["derivation"]) == {"formula"}
    assert out["overall_derivation"] == {"used": [], "excluded": {
        "ADV-03": "case_incomplete", "scoring_class:diagnostic_untimed": "other_scoring_class"}}


BAD_LINES = [
    (b'{"case_id": "ADV-01", "repetition": 1,\n', "line 1", "malformed JSON"),
    (b'{"case_id": "ADV-01", "case_id": "ADV-02", "repetition": 1, "execution_mode": "adapted", "terminal_state": "failed"}\n',
     "line 1", "duplicate key"),
    (b'{"case_id": "ADV-02", "repetition": 1, "execution_mode": "adapted", "terminal_state": "completed", "elapsed_s": NaN}\n',
     "line 1", "NaN and Infinity are not allowed"),
    (b'{"case_id": "ADV-02\xff", "repetition": 1}\n', "line 1", "UTF-8"),
    (b'["not", "an", "object"]\n', "line 1", "Input should be an object"),
    (b'{"case_id": "ADV-02", "repetition": 0, "execution_mode": "adapted", "terminal_state": "failed"}\n', "line 1",
     "greater than or equal to 1"),
    (b'{"case_id": "ADV-02", "repetition": 1, "execution_mode": "weird", "terminal_state": "failed"}\n', "line 1",
     "execution_mode"),
    (b'{"case_id": "ADV-02", "repetition": 1, "terminal_state": "failed"}\n', "line 1", "required field is missing"),
    (b'{"case_id": "ADV-02", "repetition": 1, "execution_mode": "adapted", "terminal_state": "failed", "extra": 1}\n',
     "line 1", "Extra inputs"),
    (b'{"case_id": "ADV-02", "repetition": 1, "execution_mode": "adapted", "terminal_state": "completed", '
     b'"deterministic_results": {"space-freed": true, "nothing-else-removed": true}}\n', "line 1", "needs elapsed_s"),
    (b'{"case_id": "ADV-02", "repetition": 1, "execution_mode": "adapted", "terminal_state": "failed", '
     b'"deterministic_results": {"space-freed": 1, "nothing-else-removed": true}}\n', "line 1", "valid boolean"),
]


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_no_repetition_at_all_is_every_planned_repetition_missing(tmp_path: Path, content: bytes) -> None:
    """An empty file says no repetition ran (mira from-inspect writes one for an all-cancelled log): the score
    is incomplete with every planned repetition missing (exit 1), not a refused input."""
    reps = tmp_path / "none.jsonl"
    reps.write_bytes(content)
    res = run(*_score_args(tmp_path, reps=reps))
    assert res.exit_code == 1, res.output
    out = orjson.loads((tmp_path / "out.json").read_bytes())
    assert out["status"] == "incomplete" and out["repetitions"] == []
    assert all(c["status"] == "incomplete" and c["valid_comparable_repetition_count"] == 0 for c in out["cases"])


@pytest.mark.parametrize(("content", "record", "message"), BAD_LINES)
def test_bad_repetitions_one_line_exit_2_nothing_written(tmp_path: Path, content: bytes, record, message) -> None:
    reps = tmp_path / "bad.jsonl"
    reps.write_bytes(content)
    res = run(*_score_args(tmp_path, reps=reps))
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {reps}"), res.stderr
    if record:
        assert f": {record}:" in lines[0]
    assert message in lines[0]
    assert not (tmp_path / "out.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


def test_line_numbers_survive_blank_whitespace_and_crlf_lines(tmp_path: Path) -> None:
    good = (DATA / "repetitions.jsonl").read_bytes().splitlines()
    bad = b'{"case_id": "NOPE", "repetition": 1, "execution_mode": "adapted", "terminal_state": "failed"}'
    for sep, filler in ((b"\n", b""), (b"\n", b"   "), (b"\r\n", None)):
        rows = [good[0], good[1]] + ([filler] if filler is not None else []) + [good[2], bad]
        reps = tmp_path / "r.jsonl"
        reps.write_bytes(sep.join(rows) + sep)
        res = run(*_score_args(tmp_path, reps=reps))
        assert res.exit_code == 2
        assert f": line {len(rows)}: field 'case_id': unknown case" in res.stderr, (sep, filler, res.stderr)
    reps.write_bytes(b"\n".join(good[:2] + [b"  ", b""] + good[2:]) + b"\n")  # blank lines are skipped
    assert run(*_score_args(tmp_path, reps=reps), "--quiet").exit_code == 0


def _contract_with(**changes) -> dict:
    c = orjson.loads((DATA / "contract.json").read_bytes())
    c["cases"][0].update(changes)
    return c


@pytest.mark.parametrize(("contract", "message"), [
    ({**_contract_with(), "cases": _contract_with()["cases"] * 2}, "appears twice"),
    (_contract_with(criteria=[{"id": "a", "weight": 1, "scorer": "judge"}]), "frozen binary question"),
    (_contract_with(criteria=[{"id": "a", "weight": 1, "scorer": "deterministic", "question": "q"}]), "no judge question"),
    (_contract_with(criteria=[{"id": "a", "weight": 0.5, "scorer": "deterministic"},
                              {"id": "a", "weight": 0.5, "scorer": "deterministic"}]), "criterion id 'a' appears twice"),
    (_contract_with(t_soft_s=-5), "greater than 0"),
    (_contract_with(scoring_class="diagnostic_untimed"), "has no t_soft_s"),
    (_contract_with(planned_repetitions=0), "greater than or equal to 1"),
])
def test_bad_contract(tmp_path: Path, contract: dict, message: str) -> None:
    c = write_json(tmp_path / "c.json", contract)
    res = run(*_score_args(tmp_path, contract=c))
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1 and message in res.stderr, res.stderr
    assert not (tmp_path / "out.json").exists()


def _weights_contract(weights: list[float]) -> dict:
    crit = [{"id": f"c{i}", "weight": w, "scorer": "deterministic"} for i, w in enumerate(weights)]
    return {"benchmark_id": "w", "contract_version": "1", "cases": [
        {"case_id": "T", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "automated_scored",
         "criteria": crit, "t_soft_s": 10}]}


def test_three_equal_thirds_are_accepted_and_a_full_success_is_exactly_one(tmp_path: Path) -> None:
    """Issue 9 item 9: weights 0.3333333333333333 x 3 (decimal sum 0.9999999999999999) are within 1e-9 of 1;
    a repetition satisfying every criterion scores raw_success exactly 1.0, and so do its case and the overall."""
    c = write_json(tmp_path / "c.json", _weights_contract([0.3333333333333333] * 3))
    rep = {"case_id": "T", "execution_mode": "adapted", "terminal_state": "completed", "elapsed_s": 5}
    r = write_jsonl(tmp_path / "r.jsonl", [
        {**rep, "repetition": 1, "deterministic_results": {"c0": True, "c1": True, "c2": True}},
        {**rep, "repetition": 2, "deterministic_results": {"c0": True, "c1": True, "c2": True}},
        {**rep, "repetition": 3, "deterministic_results": {"c0": True, "c1": True, "c2": False}},
    ])
    res = run("score", "--contract", c, "--repetitions", r, "--output", tmp_path / "o.json", "--quiet")
    assert res.exit_code == 0, res.stderr
    out = orjson.loads((tmp_path / "o.json").read_bytes())
    reps = {x["id"]: x for x in out["repetitions"]}
    assert reps["T#1"]["raw_success"] == 1.0 and reps["T#1"]["official_task_success"] == 1.0
    assert reps["T#1"]["status"] == "pass" and "raw_success 1.0;" in reps["T#1"]["derivation"]
    assert reps["T#3"]["raw_success"] == 0.6666666666666666 and reps["T#3"]["status"] == "partial"
    assert out["cases"][0]["metrics"]["task_success"]["value"] == (1.0 + 1.0 + 0.6666666666666666) / 3


@pytest.mark.parametrize(("weights", "decimal_sum"), [
    ([0.5, 0.4], "0.9"),
    ([0.333333] * 3, "0.999999"),
    ([0.7, 0.2, 0.1000001], "1.0000001"),
    ([0.5, 0.500000002], "1.000000002"),
])
def test_weights_not_summing_to_one_quote_the_decimal_sum(tmp_path: Path, weights, decimal_sum) -> None:
    c = write_json(tmp_path / "c.json", _weights_contract(weights))
    r = write_jsonl(tmp_path / "r.jsonl", [{"case_id": "T", "repetition": 1, "execution_mode": "adapted",
                                            "terminal_state": "failed"}])
    res = run("score", "--contract", c, "--repetitions", r, "--output", tmp_path / "o.json")
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0] == (f"error: {c}: cases[0] (T): field '(root)': Value error, criterion weights sum to {decimal_sum} "
                        "(the decimal sum of the weights as written); expected 1 within 1e-9")
    assert not (tmp_path / "o.json").exists()


def test_bad_deviations(tmp_path: Path) -> None:
    d = write_json(tmp_path / "d.json", {"deviations": [{"id": "x", "text": "a"}, {"id": "x", "text": "b"}]})
    args = _score_args(tmp_path)
    args[args.index("--deviations") + 1] = d
    res = run(*args)
    assert res.exit_code == 2 and "deviation id 'x' appears twice" in res.stderr


def test_calibrate(tmp_path: Path) -> None:
    res = run("calibrate", "--contract", DATA / "contract.json", "--observations", DATA / "observations.jsonl",
              "--output", tmp_path / "c2.json")
    assert res.exit_code == 0, res.output
    c2 = orjson.loads((tmp_path / "c2.json").read_bytes())
    assert c2["calibration_policy"] == {"policy": "mira-tsoft/v1", "min_observations": 5, "max_cv": 0.25,
                                        "multiplier": 1.5, "round_up_to_s": 1.0}
    cases = {c["case_id"]: c for c in c2["cases"]}
    assert cases["ADV-01"]["t_soft_s"] == 99.0  # median 66 x 1.5
    assert cases["ADV-02"]["t_soft_s"] == 60.0  # median 40 x 1.5; the non-comparable observation is left out
    assert "1 observations left out" in cases["ADV-02"]["calibration"]["note"]
    assert cases["ADV-03"]["t_soft_s"] == 30.0
    # DIAG-01: 4 completed observations, too few and unstable -> diagnostic_untimed
    assert cases["DIAG-01"]["scoring_class"] == "diagnostic_untimed" and cases["DIAG-01"]["t_soft_s"] is None
    F.Contract.model_validate(c2)
    assert set(c2["provenance"]["inputs"]) == {"contract", "observations"}
    assert c2["provenance"]["calibration_policy"] == "mira-tsoft/v1"
    # the calibrated contract scores
    res = run("score", "--contract", tmp_path / "c2.json", "--repetitions", DATA / "repetitions.jsonl",
              "--output", tmp_path / "o.json", "--quiet")
    assert res.exit_code == 0, res.output


def test_calibrate_policy_file_and_bad_observations(tmp_path: Path) -> None:
    pol = write_json(tmp_path / "p.json", {"policy": "mira-tsoft/v1", "min_observations": 3, "max_cv": 2.0,
                                           "multiplier": 2.0, "round_up_to_s": 5.0})
    res = run("calibrate", "--contract", DATA / "contract.json", "--observations", DATA / "observations.jsonl",
              "--policy", pol, "--output", tmp_path / "c2.json")
    assert res.exit_code == 0, res.output
    c2 = orjson.loads((tmp_path / "c2.json").read_bytes())
    diag = next(c for c in c2["cases"] if c["case_id"] == "DIAG-01")
    assert diag["scoring_class"] == "automated_scored" and diag["t_soft_s"] == 750.0  # median 375 x 2
    obs = write_jsonl(tmp_path / "o.jsonl", [{"case_id": "ADV-01", "observation_id": "a", "elapsed_s": 1, "completed": True},
                                             {"case_id": "ADV-01", "observation_id": "a", "elapsed_s": 2, "completed": True}])
    res = run("calibrate", "--contract", DATA / "contract.json", "--observations", obs, "--output", tmp_path / "c3.json")
    assert res.exit_code == 2 and "line 2" in res.stderr and "appears twice" in res.stderr
    assert not (tmp_path / "c3.json").exists()


def test_formats_have_schemas() -> None:
    for name, model in FORMATS.items():
        assert name.startswith("mira-")
        assert model.model_json_schema()["type"] == "object"
    res = CliRunner().invoke(umbrella, ["schema", "mira-repetition"])
    assert res.exit_code == 0 and '"execution_mode"' in res.output


def test_hot_path_dict_validation_matches_the_model() -> None:
    """The TypeAdapter used on the hot path checks the same fields as the RepetitionRecord format."""
    assert set(F.RepetitionRecordDict.__annotations__) - {"__pydantic_config__"} == set(F.RepetitionRecord.model_fields)
    required = {k for k, f in F.RepetitionRecord.model_fields.items() if f.is_required()}
    assert required == set(F.REQUIRED_RECORD_KEYS)
    full = {"case_id": "A", "repetition": 1, "execution_mode": "adapted", "terminal_state": "failed",
            "elapsed_s": 1.0, "deterministic_results": {}, "judge_verdicts": {}, "hard_fail_events": [],
            "interventions": [], "governance_events": [], "post_cutoff_completion": False, "evidence": {},
            "raw_trajectory": None, "source": None}
    assert set(full) == set(F.RepetitionRecord.model_fields)
    adapter = TypeAdapter(F.RepetitionRecordDict)
    for key in full:
        partial = {k: v for k, v in full.items() if k != key}
        model_ok = _accepts(F.RepetitionRecord.model_validate, partial)
        dict_ok = _accepts(adapter.validate_python, partial)
        assert model_ok == dict_ok == (key not in required), key
    for key, wrong in [("repetition", "1"), ("elapsed_s", "1"), ("post_cutoff_completion", 1), ("evidence", {"a": 1}),
                       ("judge_verdicts", {"q": "yes"}), ("interventions", [{"kind": "help"}]),
                       ("source", {"tool": "inspect_ai"}), ("source", {"tool": "other", "log": "l", "log_sha256": "s",
                        "eval_id": "e", "run_id": "r", "task": "t", "model": "m", "inspect_ai_version": None,
                        "sample_id": 1, "epoch": 1, "mapping_sha256": "x"})]:
        bad = {**full, key: wrong}
        assert not _accepts(F.RepetitionRecord.model_validate, bad), key
        assert not _accepts(adapter.validate_python, bad), key


def _accepts(fn, data) -> bool:
    try:
        fn(data)
    except ValidationError:
        return False
    return True


def test_console_script_subprocess(tmp_path: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}
    proc = subprocess.run([str(VENV_BIN / "benchscore"), "mira", *map(str, _score_args(tmp_path))], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads((tmp_path / "out.json").read_bytes())["status"] == "complete"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": "NOPE", "repetition": 1, "execution_mode": "adapted", "terminal_state": "failed"}\n')
    proc = subprocess.run([str(VENV_BIN / "benchscore"), "mira", *map(str, _score_args(tmp_path / "x", reps=bad))],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: {bad}: line 1: field 'case_id': unknown case 'NOPE'; "
                                   "the contract has no such case_id")
    assert "Traceback" not in proc.stderr and not (tmp_path / "x").exists()


def test_deviations_are_carried_exactly_as_written(tmp_path: Path) -> None:
    devs = [{"text": "no affects key, text first", "id": "d-1"}]
    d = write_json(tmp_path / "d.json", devs)
    args = _score_args(tmp_path)
    args[args.index("--deviations") + 1] = d
    assert run(*args, "--quiet").exit_code == 0
    out = (tmp_path / "out.json").read_bytes()
    assert orjson.loads(out)["deviations"] == devs
    assert b'"text": "no affects key, text first",\n      "id": "d-1"' in out  # same keys, same order
    assert run("project", "--score", tmp_path / "out.json", "--output", tmp_path / "p.json").exit_code == 0
    assert orjson.loads((tmp_path / "p.json").read_bytes())["deviations"] == devs


def test_calibrate_uses_the_contracts_own_policy(tmp_path: Path) -> None:
    """Without --policy, calibrate applies the contract's frozen calibration_policy, not silent defaults."""
    contract = orjson.loads((DATA / "contract.json").read_bytes())
    contract["calibration_policy"] = {"policy": "mira-tsoft/v1", "min_observations": 3, "max_cv": 2.0,
                                      "multiplier": 2.0, "round_up_to_s": 5.0}
    c = write_json(tmp_path / "c.json", contract)
    res = run("calibrate", "--contract", c, "--observations", DATA / "observations.jsonl", "--output", tmp_path / "c2.json")
    assert res.exit_code == 0, res.output
    c2 = orjson.loads((tmp_path / "c2.json").read_bytes())
    assert c2["calibration_policy"] == contract["calibration_policy"]
    cases = {x["case_id"]: x for x in c2["cases"]}
    assert cases["DIAG-01"]["scoring_class"] == "automated_scored" and cases["DIAG-01"]["t_soft_s"] == 750.0
    assert cases["ADV-01"]["t_soft_s"] == 135.0  # ceil(2 x 66 / 5) x 5
    # an explicit --policy still wins over the contract's
    pol = write_json(tmp_path / "p.json", {"policy": "mira-tsoft/v1"})
    res = run("calibrate", "--contract", c, "--observations", DATA / "observations.jsonl", "--policy", pol,
              "--output", tmp_path / "c3.json")
    assert res.exit_code == 0, res.output
    c3 = orjson.loads((tmp_path / "c3.json").read_bytes())
    assert c3["calibration_policy"]["min_observations"] == 5
    assert {x["case_id"]: x["t_soft_s"] for x in c3["cases"]}["ADV-01"] == 99.0


def test_importing_the_cli_is_cheap_and_formats_stay_available() -> None:
    """Issue 10 item 7: `import benchscore.mira.cli` loads no pydantic, numpy, rich or orjson (the commands
    import what they need); `benchscore.mira` is lazy too; FORMATS still serves `benchscore schema`."""
    code = (
        "import sys, benchscore.mira.cli as c, benchscore.mira as m\n"
        "heavy = sorted(n for n in ('pydantic', 'numpy', 'rich', 'orjson', 'httpx', 'scipy') if n in sys.modules)\n"
        "loaded = sorted(n for n in sys.modules if n.startswith('benchscore.mira.') and n != 'benchscore.mira.cli')\n"
        "print(heavy, loaded)\n"
        "assert m.score is not None and c.FORMATS['mira-score'].__name__ == 'ScoreOutput'\n"
        "assert 'pydantic' in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[] []"
    from benchscore import mira

    assert sorted(mira.__all__) == sorted(name for name in mira.__all__ if getattr(mira, name) is not None)
