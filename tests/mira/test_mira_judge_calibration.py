"""Judges measured before their verdicts count (issue 36), for Mira.

Real runs of ``mira judge`` against the local OpenAI-compatible server answering as a judge with a known
confusion matrix (:class:`benchscore.common.testserver.ConfusionJudge`), then ``mira judge-report`` and
``mira score --judge-calibration``: the report's table is the one the judge was built to give, kappa is
scikit-learn's, the contract's numbers stay exactly as without a calibration set, and the corrected Task
Success and Reliability equal an independent recomputation of the prediction-powered estimate.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from mira_helpers import run, write_json, write_jsonl

from benchscore.cli import cli
from benchscore.common.testserver import ConfusionJudge, OpenAITestServer
from benchscore.mira.judge import build_packets
from benchscore.mira.records import load_contract, load_repetitions

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mira"
ENV = {"SOURCE_DATE_EPOCH": "1767225600"}
CASES = 12


def _contract() -> dict:
    return {"benchmark_id": "judge-cal", "contract_version": "1", "cases": [
        {"case_id": f"C{k:02d}", "intent": "answer", "difficulty": "easy", "prompt": f"Question {k}?",
         "scoring_class": "automated_scored", "planned_repetitions": 3, "t_soft_s": 100.0,
         "criteria": [{"id": "done", "weight": 0.5, "scorer": "deterministic"},
                      {"id": "right", "weight": 0.5, "scorer": "judge", "question": "Is the answer right?"}]}
        for k in range(CASES)]}


def _truth(case: int, rep: int) -> str:
    return "pass" if (case * 3 + rep) % 3 != 0 else "fail"


@pytest.fixture
def run_dir(tmp_path: Path) -> dict:
    """A run of 12 cases x 3 repetitions (36 judge packets), the truth of each packet, a calibration set of 24."""
    contract = write_json(tmp_path / "contract.json", _contract())
    records = [{"case_id": f"C{k:02d}", "repetition": r, "execution_mode": "adapted", "terminal_state": "completed",
                "elapsed_s": 50.0, "deterministic_results": {"done": True},
                "evidence": {"answer": f"answer of case {k} repetition {r}"}}
               for k in range(CASES) for r in (1, 2, 3)]
    reps = write_jsonl(tmp_path / "reps.jsonl", records)
    loaded = load_contract(contract)
    packets = build_packets(loaded.sha256, loaded.cases, load_repetitions(reps, loaded).records)
    truth = {p["evidence"]["answer"]: _truth(int(p["case_id"][1:]), p["repetition"]) for p in packets}
    calibration = [p for i, p in enumerate(packets) if i % 3 != 2]  # 24 of the 36, spread over the cases
    cal = write_jsonl(tmp_path / "cal.jsonl", [{**p, "known_verdict": truth[p["evidence"]["answer"]],
                                                "reason": "checked by hand"} for p in calibration])
    assert run("judge-packets", "--contract", contract, "--repetitions", reps, "--output-dir",
               tmp_path / "packets").exit_code == 0
    return {"dir": tmp_path, "contract": contract, "reps": reps, "cal": cal, "truth": truth, "packets": packets,
            "calibration": calibration}


def _judge(args: list, judge: ConfusionJudge, model: str = "m"):
    with OpenAITestServer(models=[model], responder=judge) as srv:
        return CliRunner().invoke(cli, ["mira", "judge", *map(str, args), "--base-url", srv.base_url, "--model", model],
                                  env=ENV, catch_exceptions=False)


def test_a_judge_of_known_errors_is_measured_by_its_table(run_dir):
    judge = ConfusionJudge(run_dir["truth"], sensitivity=0.875, specificity=0.75, seed=3)
    d = run_dir["dir"]
    got = _judge(["--calibration", run_dir["cal"], "--output", d / "v_cal.json", "--report", d / "report.json"], judge)
    assert got.exit_code == 0, got.output
    report = orjson.loads((d / "report.json").read_bytes())
    cal_texts = [p["evidence"]["answer"] for p in run_dir["calibration"]]
    expected = {(k, g): sum(1 for t in cal_texts if run_dir["truth"][t] == k and judge.answers[t] == g)
                for k in ("pass", "fail") for g in ("pass", "fail")}
    table = report["agreement"]["table"]
    assert (table["true_pass"], table["false_fail"], table["false_pass"], table["true_fail"]) == (
        expected[("pass", "pass")], expected[("pass", "fail")], expected[("fail", "pass")], expected[("fail", "fail")])
    from sklearn.metrics import cohen_kappa_score

    known = [run_dir["truth"][t] for t in cal_texts]
    given = [judge.answers[t] for t in cal_texts]
    assert report["agreement"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(known, given), abs=1e-12)
    assert report["agreement"]["kappa"]["ci95"] is not None  # 24 known verdicts: an interval
    assert report["provenance"]["command"].startswith("benchscore mira judge-report")
    assert "kappa" in got.output and "sensitivity" in got.output
    # judge-report recomputes the same report from the verdicts file, and verify reproduces it
    again = CliRunner().invoke(cli, ["mira", "judge-report", "--calibration", str(run_dir["cal"]), "--verdicts",
                                     str(d / "v_cal.json"), "--output", str(d / "report2.json")], env=ENV)
    assert again.exit_code == 0, again.output
    first, second = orjson.loads((d / "report.json").read_bytes()), orjson.loads((d / "report2.json").read_bytes())
    assert {k: v for k, v in first.items() if k != "provenance"} == {k: v for k, v in second.items() if k != "provenance"}
    for name in ("report.json", "report2.json"):  # (one at a time: verify re-runs one command once)
        verified = CliRunner().invoke(cli, ["verify", str(d / name)], env=ENV)
        assert verified.exit_code == 0 and "1 reproduced" in verified.output, verified.output


def test_scores_carry_their_judge_and_the_contract_numbers_stay(run_dir):
    judge = ConfusionJudge(run_dir["truth"], sensitivity=0.8, specificity=0.6, seed=5)
    d = run_dir["dir"]
    assert _judge(["--packets", d / "packets", "--output", d / "verdicts.json"], judge).exit_code == 0
    common = ["score", "--contract", run_dir["contract"], "--repetitions", run_dir["reps"], "--verdicts",
              d / "verdicts.json"]
    plain = run(*common, "--output", d / "plain.json")
    calibrated = run(*common, "--judge-calibration", run_dir["cal"], "--output", d / "calibrated.json")
    assert plain.exit_code == 0 and calibrated.exit_code == 0, calibrated.output
    a, b = orjson.loads((d / "plain.json").read_bytes()), orjson.loads((d / "calibrated.json").read_bytes())
    for key in ("overall", "cases", "repetitions", "diagnostic_untimed", "status", "missing"):
        assert a[key] == b[key], key  # the contract's numbers, exactly as the contract computes them
    assert a["judge"]["status"] == "not_calibrated" and a["judge"]["words"].startswith("judge not calibrated")
    assert "judge not calibrated" in plain.output
    judged = b["judge"]
    assert judged["status"] in ("measured", "not_decided_by_a_measured_judge")
    assert judged["model"] == "m" and judged["agreement"]["known"] == 24
    # the corrected numbers, recomputed independently: 24 known repetitions (< 100: lambda 1), 12 judge-only
    given = {(p["case_id"], p["repetition"]): judge.answers[p["evidence"]["answer"]] for p in run_dir["packets"]}
    truth = {(p["case_id"], p["repetition"]): run_dir["truth"][p["evidence"]["answer"]] for p in run_dir["packets"]}
    known = {(p["case_id"], p["repetition"]) for p in run_dir["calibration"]}
    for name, value in (("task_success", lambda v: 0.5 + 0.5 * (v == "pass")), ("reliability", lambda v: v == "pass")):
        rect = [value(truth[k]) - value(given[k]) for k in known]
        r_bar = sum(rect) / len(rect)
        total = sum(value(truth[k]) if k in known else value(given[k]) + r_bar for k in given)
        scale = 100.0 if name == "reliability" else 1.0
        c = judged["corrected"][name]
        assert c["value"] == pytest.approx(total / len(given) * scale, abs=1e-12)
        assert c["contract_value"] == b["overall"][name]["value"]
        assert (c["lam"], c["known"], c["judge_only"], c["fixed"], c["ci_method"]) == (1.0, 24, 12, 0, "ppi_plus_plus")
        assert c["ci95"][0] <= c["value"] <= c["ci95"][1]
    assert "corrected for the judge's errors" in calibrated.output


def test_a_judge_that_always_answers_pass_says_so(tmp_path: Path):
    """The three local models judged all 8 demo packets pass: the bundled calibration set shows what that is."""
    cal = EXAMPLES / "judge_calibration.jsonl"
    packets = [orjson.loads(line) for line in cal.read_bytes().splitlines()]
    judge = ConfusionJudge({p["evidence"]["final_answer"]: p["known_verdict"] for p in packets}, specificity=0.0)
    got = _judge(["--calibration", cal, "--output", tmp_path / "v.json", "--report", tmp_path / "r.json"], judge)
    assert got.exit_code == 0, got.output
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    a = report["agreement"]
    assert a["always_answers"] == "pass" and a["answers"] == {"pass": 1.0, "fail": 0.0, "judge_failed": 0.0}
    assert a["kappa"]["value"] == 0.0 and a["percent_agreement"] == 0.75 and a["measured"] is False
    assert "this judge always answers pass" in got.output


def test_the_bundled_set_with_the_demo_judge(tmp_path: Path):
    out = tmp_path / "s.json"
    got = run("score", "--contract", EXAMPLES / "contract.json", "--repetitions", EXAMPLES / "repetitions.jsonl",
              "--judge-calibration", EXAMPLES / "judge_calibration.jsonl", "--output", out)
    assert got.exit_code == 0, got.output
    judge = orjson.loads(out.read_bytes())["judge"]
    assert judge["status"] == "not_decided_by_a_measured_judge"
    assert judge["agreement"]["table"] == {"true_pass": 6, "false_fail": 0, "false_pass": 0, "true_fail": 2}
    assert "8 known verdicts: a calibrated 95 % interval of kappa needs at least 20" in judge["words"]
    assert "not decided by a measured judge" in got.output
    for name in ("task_success", "reliability"):  # every judged repetition has a known verdict: nothing to estimate
        c = judge["corrected"][name]
        assert c["value"] == pytest.approx(c["contract_value"]) and c["judge_only"] == 0


def _bad(args: list, tmp_path: Path, message: str) -> None:
    out = tmp_path / "bad.json"
    got = CliRunner().invoke(cli, ["mira", *map(str, args), "--output", str(out)], env=ENV)
    assert got.exit_code == 2, got.output
    lines = [line for line in got.output.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], got.output
    assert "Traceback" not in got.output and not out.exists()


def test_bad_calibration_sets_are_one_line_exit_2(run_dir, tmp_path: Path):
    d = run_dir["dir"]
    rows = [orjson.loads(line) for line in run_dir["cal"].read_bytes().splitlines()]
    score = ["score", "--contract", run_dir["contract"], "--repetitions", run_dir["reps"], "--judge-calibration"]
    twice = write_jsonl(d / "twice.jsonl", [*rows, rows[0]])
    _bad([*score, twice], tmp_path, "line 25: field 'packet_id': packet 'C00.r1.right' appears twice (first on line 1)")
    edited = write_jsonl(d / "edited.jsonl", [{**rows[0], "evidence": {"answer": "something else"}}, *rows[1:]])
    _bad([*score, edited], tmp_path, "line 1: field 'sha256': packet content does not match its sha256")
    other = [{**r, "known_verdict": "maybe"} if i == 3 else r for i, r in enumerate(rows)]
    _bad([*score, write_jsonl(d / "other.jsonl", other)], tmp_path, "line 4: field 'known_verdict'")
    fewer = write_jsonl(d / "fewer.jsonl", [r for r in (orjson.loads(x) for x in run_dir["reps"].read_bytes().splitlines())
                                            if r["case_id"] != "C00"])
    _bad(["score", "--contract", run_dir["contract"], "--repetitions", fewer, "--judge-calibration", run_dir["cal"]],
         tmp_path, "line 1: field 'packet_id': packet 'C00.r1.right' is not a packet of these repetitions")
    _bad(["judge-report", "--calibration", run_dir["cal"], "--verdicts",
          write_json(d / "none.json", {"model": "m", "verdicts": [], "provenance": {}})],
         tmp_path, "no verdict for calibration packet 'C00.r1.right'")
