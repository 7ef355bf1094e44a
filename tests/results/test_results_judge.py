"""``compare`` / ``leaderboard`` ``--judge-calibration`` on a model-graded inspect_ai task run for real (issue 36).

``inspect/run_graded.py`` runs ``model_graded_qa`` with a ``mockllm`` grader whose errors are set in advance
(it grades a few samples of each model the wrong way), for two models of known accuracy. A person's known
values for 24 of the 40 samples of each model are the truth; every number below is recomputed here from the
plan: the grader's table and kappa (scikit-learn), the corrected value (prediction-powered, lambda 1 below 100
known values) and the corrected difference of the pair.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

pytestmark = [pytest.mark.inspect, pytest.mark.usefixtures("inspect_ai_installed")]

RUNNER = Path(__file__).resolve().parent / "inspect" / "run_graded.py"
SAMPLES = [{"id": f"q{i:02d}", "input": f"Question q{i:02d}: what is {i} plus {i}?", "target": str(2 * i)}
           for i in range(1, 41)]
MODELS = {"a": {"wrong": [f"q{i:02d}" for i in range(1, 13)], "flipped": ["q01", "q05", "q20", "q33"]},
          "b": {"wrong": [f"q{i:02d}" for i in range(5, 25)], "flipped": ["q06", "q30"]}}
KNOWN = [s["id"] for k, s in enumerate(SAMPLES) if k % 5 not in (1, 3)]  # 24 of the 40
METRIC = "graded/model_graded_qa"


def truth(model: str, sid: str) -> float:
    return 0.0 if sid in MODELS[model]["wrong"] else 1.0


def graded(model: str, sid: str) -> float:
    return 1.0 - truth(model, sid) if sid in MODELS[model]["flipped"] else truth(model, sid)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("graded")
    (root / "plan.json").write_text(json.dumps({"samples": SAMPLES, "models": MODELS}))
    env = dict(os.environ, INSPECT_LOG_LEVEL="error", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(RUNNER), str(root / "plan.json"), str(root / "logs")],
                          capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return root / "logs"


@pytest.fixture
def calibration(tmp_path) -> Path:
    rows = [{"result": f"mockllm/{m}", "metric": METRIC, "sample_id": sid, "known_value": truth(m, sid),
             "reason": "read by a person"} for m in MODELS for sid in KNOWN]
    path = tmp_path / "known.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def _corrected(model: str) -> float:
    r_bar = sum(truth(model, s) - graded(model, s) for s in KNOWN) / len(KNOWN)
    ids = [s["id"] for s in SAMPLES]
    return sum(truth(model, s) if s in KNOWN else graded(model, s) + r_bar for s in ids) / len(ids)


def test_compare_corrects_each_result_for_its_grader_and_compares_the_corrected_values(logs, calibration, tmp_path):
    out = tmp_path / "cmp.json"
    res = CliRunner().invoke(cli, ["compare", str(logs), "--judge-calibration", str(calibration), "--output", str(out)])
    assert res.exit_code == 0, res.output
    doc = orjson.loads(out.read_bytes())
    block = doc["judge"]["metrics"][METRIC]
    from sklearn.metrics import cohen_kappa_score

    for m in MODELS:
        r = block["results"][f"mockllm/{m}"]
        assert r["value"] == pytest.approx(sum(graded(m, s["id"]) for s in SAMPLES) / 40)
        assert r["corrected"] == pytest.approx(_corrected(m), abs=1e-12)
        assert (r["known"], r["judge_only"], r["lam"], r["ci_method"]) == (24, 16, 1.0, "ppi_plus_plus")
        assert r["ci95"][0] <= r["corrected"] <= r["ci95"][1]
        table = r["agreement"]["table"]
        pairs = [(truth(m, s), graded(m, s)) for s in KNOWN]
        assert table == {"true_pass": pairs.count((1.0, 1.0)), "false_fail": pairs.count((1.0, 0.0)),
                         "false_pass": pairs.count((0.0, 1.0)), "true_fail": pairs.count((0.0, 0.0))}
        assert r["agreement"]["kappa"]["value"] == pytest.approx(
            cohen_kappa_score([t for t, _ in pairs], [g for _, g in pairs]), abs=1e-12)
    pair = block["pairs"][0]
    sign = 1.0 if pair["a"] == "mockllm/a" else -1.0
    # the pair on corrected values: the per-sample differences, known where both are known (here the same 24)
    diff = [truth("a", s) - truth("b", s) for s in KNOWN]
    raw = {s["id"]: graded("a", s["id"]) - graded("b", s["id"]) for s in SAMPLES}
    r_bar = sum(d - raw[s] for d, s in zip(diff, KNOWN, strict=True)) / len(KNOWN)
    expected = sum(truth("a", s) - truth("b", s) if s in KNOWN else raw[s] + r_bar for s in raw) / 40
    assert sign * pair["corrected_difference"] == pytest.approx(expected, abs=1e-12)
    assert pair["known_pairs"] == 24 and pair["ci_level"] == 0.95
    assert (pair["verdict"] == "differs") == (pair["ci95"][0] > 0 or pair["ci95"][1] < 0)
    assert doc["provenance"]["inputs"]["judge_calibration"]["name"] == "known.jsonl"
    assert "corrected for the grader's errors" in res.output and "pairs on corrected values" in res.output


def test_the_leaderboard_shows_the_grader_and_the_corrected_values(logs, calibration, tmp_path):
    site = tmp_path / "site"
    res = CliRunner().invoke(cli, ["leaderboard", str(logs), "--judge-calibration", str(calibration),
                                   "--output-dir", str(site)])
    assert res.exit_code == 0, res.output
    board = orjson.loads((site / "leaderboard.json").read_bytes())
    assert board["judge"]["metrics"][METRIC]["results"]["mockllm/a"]["corrected"] == pytest.approx(_corrected("a"))
    page = (site / "index.html").read_text()
    assert "The grader, measured against known values" in page and "kappa" in page


def _refused(args: list, message: str) -> None:
    res = CliRunner().invoke(cli, [*map(str, args)])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x]
    assert lines[-1].startswith("error: ") and message in lines[-1] and "Traceback" not in res.output, res.output


def test_bad_calibration_files_are_one_line_exit_2(logs, tmp_path):
    def file(rows: list) -> Path:
        path = tmp_path / f"k{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
        return path

    good = {"result": "mockllm/a", "metric": METRIC, "sample_id": "q02", "known_value": 1.0}
    _refused(["compare", logs, "--judge-calibration", file([{**good, "result": "mockllm/zz"}])],
             "line 1: field 'result': result 'mockllm/zz' is not compared")
    _refused(["compare", logs, "--judge-calibration", file([{**good, "sample_id": "q99"}])],
             "line 1: field 'sample_id': sample 'q99' is not among the samples compared")
    _refused(["compare", logs, "--judge-calibration", file([good, good])], "line 2: field 'sample_id'")
    _refused(["compare", logs, "--judge-calibration", file([{**good, "known_value": 2.0}])],
             "line 1: field 'known_value': known_value 2.0 lies outside")


def test_contract_outputs_are_refused_with_where_their_judge_is_measured(tmp_path):
    public = Path(__file__).resolve().parents[2] / "examples" / "mira" / "expected" / "public.json"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "public.json").write_bytes(public.read_bytes())
    known = tmp_path / "k.jsonl"
    known.write_bytes(b'{"result": "x", "metric": "task_success", "sample_id": "ADV-01", "known_value": 1}\n')
    _refused(["compare", tmp_path / "a" / "public.json", tmp_path / "b" / "public.json", "--judge-calibration", known],
             "benchscore mira score --judge-calibration")
