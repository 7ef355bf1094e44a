"""The demo, the bundled synthetic data, formats, and the console scripts as real subprocesses."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tcsexam_helpers import run

from benchscore.tcsexam import cli as tcs_cli
from benchscore.tcsexam import commands
from benchscore.tcsexam.formats import IndexOutput, SolverScoreOutput
from benchscore.tcsexam.formulas import tcsexam_index, track_mean

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DATA = ROOT / "src" / "benchscore" / "tcsexam" / "data"


def test_demo_runs_build_score_index(tmp_path, pinned_time):
    out = commands.run_demo(tmp_path / "demo")
    IndexOutput.model_validate(out)
    assert out["suite"] == "demo-lite" and out["solver_reference_id"] == "demo-k3-synthetic-v1"
    a, b = out["models"]["synthetic-model-a"], out["models"]["synthetic-model-b"]
    assert a["status"] == "complete" and a["problems"] == []
    assert b["status"] == "incomplete" and b["index"] is None and len(b["problems"]) == 3
    assert out["status"] == "incomplete"
    # the index is recomputable from the task means written in the output
    means = {t: track_mean(v.values()) for t, v in a["task_means"].items()}
    assert a["index"] == pytest.approx(tcsexam_index(means))
    assert a["coverage"]["total"]["tasks_complete"] == 20
    # the cohort's adoption rule is echoed; raw rewards stay beside the 0/1 conversion
    assert out["adoption_rule"].startswith("SYNTHETIC demo: the first attempts")
    partial = [x for x in a["adopted_attempts"] if x["track"] == "theorem" and x["score"] == 0.0]
    assert partial and all(0 <= x["raw_reward"] < 1 for x in partial)
    assert any(x["raw_reward"] > 0 for x in partial)
    assert all(x["raw_reward"] == x["score"] for x in a["adopted_attempts"] if x["track"] == "construction")
    assert all(x["raw_reward"] is None for x in a["adopted_attempts"] if x["track"] == "solver")
    assert [e["reason"] for e in b["excluded_attempts"]] == [None]
    # every solver score came from a solver-score output against the demo reference
    for task in a["task_means"]["solver"]:
        ev = json.loads(
            (tmp_path / "demo" / "solver-scores" / "synthetic-model-a" / task / "attempt-1.json").read_text()
        )
        SolverScoreOutput.model_validate(ev)
        assert ev["reference_id"] == "demo-k3-synthetic-v1"
        assert "inst-extra" in ev["unscored_instances"]
    ref = json.loads((tmp_path / "demo" / "demo-k3-synthetic-v1.json").read_text())
    assert sorted(ref["tasks"]) == sorted(out["models"]["synthetic-model-a"]["task_means"]["solver"])
    # byte-identical when run again
    commands.run_demo(tmp_path / "again")
    for name in ("index.json", "attempts.csv", "demo-k3-synthetic-v1.json"):
        assert (tmp_path / "demo" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


def test_demo_command_prints_synthetic_label_and_table(tmp_path):
    result = run("demo", "--output-dir", tmp_path / "d")
    assert result.exit_code == 0, result.stderr
    assert "SYNTHETIC" in result.output
    assert "synthetic-model-a" in result.output and "incomplete" in result.output


def test_committed_demo_data_is_what_the_generator_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("generate_demo", DATA / "generate_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    committed = sorted(p.relative_to(DATA / "demo") for p in (DATA / "demo").rglob("*") if p.is_file())
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert committed == fresh
    for rel in committed:
        assert (DATA / "demo" / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel
    suite = json.loads((DATA / "demo" / "suites" / "demo-lite.json").read_text())
    assert [len(v) for v in suite["tracks"].values()] == [5, 5, 5, 5]


def test_formats_are_registered_with_json_schemas():
    assert {
        "tcsexam-reference",
        "tcsexam-cohort",
        "tcsexam-suite",
        "tcsexam-attempt-row",
        "tcsexam-instance-record",
        "tcsexam-solver-score-output",
        "tcsexam-index-output",
    } <= set(tcs_cli.FORMATS)
    for model in tcs_cli.FORMATS.values():
        assert model.model_json_schema()["type"] == "object"


def _env():
    env = dict(os.environ, SOURCE_DATE_EPOCH="1767225600")
    env.pop("TCSEXAM_DATA", None)
    return env


def test_tcsexam_console_script_subprocess(tmp_path):
    out = tmp_path / "maxcut-relative.json"
    ex = ROOT / "examples" / "tcsexam" / "seed-example"
    proc = subprocess.run(
        [
            str(BIN / "tcsexam"),
            "solver-score",
            "--task",
            "maxcut-mqlib",
            "--records",
            str(ex / "records.json"),
            "--reference",
            str(ex / "reference.json"),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (ex / "expected" / "maxcut-relative.json").read_bytes()
    proc = subprocess.run(
        [
            str(BIN / "tcsexam"),
            "score",
            "--suite",
            "lite",
            "--attempts",
            "a.csv",
            "--cohort",
            "c.json",
            "--output",
            str(tmp_path / "x.json"),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    )
    assert "not public" in proc.stderr


def test_benchscore_umbrella_runs_the_tcsexam_demo_subprocess(tmp_path):
    proc = subprocess.run(
        [str(BIN / "benchscore"), "demo", "--only", "tcsexam", "--output-dir", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "out" / "tcsexam" / "index.json").read_text())["suite"] == "demo-lite"
