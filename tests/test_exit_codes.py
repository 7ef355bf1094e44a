"""Issue 18, point 11: one exit-code rule for every command that can give a result short of final.

The rule (README, "What every command shares"): 0 when the result is final (complete, PASS), or needs no
verdict (rxn evaluations, compare, a verify that reproduces); 1 when the command ran and wrote its output
but the result is not final (incomplete, provisional, FAIL, reduced, a verify that differs); 2 bad input,
nothing written. Each case checks the output is written whenever the exit code is 0 or 1.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common.cli import FINAL, exit_for

ROOT = Path(__file__).resolve().parents[1]
MIRA = ROOT / "examples" / "mira"
TCS = ROOT / "examples" / "tcsexam" / "seed-example"
RXN = ROOT / "examples" / "rxn"
SWARM = ROOT / "examples" / "swarm" / "runtime"


def _run(*args) -> tuple[int, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


def _written(path: Path) -> dict:
    assert path.is_file(), f"{path} was not written"
    return orjson.loads(path.read_bytes())


def test_the_rule_itself():
    assert FINAL == {"complete", "PASS"}
    exit_for("complete", "PASS", True)  # returns: exit 0
    for status in ("incomplete", "provisional", "FAIL", "reduced", False):
        with pytest.raises(SystemExit) as exc:
            exit_for("complete", status)
        assert exc.value.code == 1


@pytest.fixture
def seed_example(tmp_path) -> Path:
    folder = tmp_path / "seed-example"
    shutil.copytree(TCS, folder)
    return folder


def _tcsexam(folder: Path, attempts: str, out: Path) -> tuple[int, str]:
    return _run("tcsexam", "score", "--suite", folder / "suite.json", "--attempts", folder / attempts,
                "--cohort", folder / "cohort.json", "--output", out)


def test_tcsexam_score_complete_0_incomplete_1_provisional_1(seed_example, tmp_path, pinned_time):
    code, _ = _tcsexam(seed_example, "attempts.csv", tmp_path / "complete.json")
    assert code == 0 and _written(tmp_path / "complete.json")["status"] == "complete"
    code, out = _tcsexam(seed_example, "attempts-incomplete.csv", tmp_path / "incomplete.json")
    assert code == 1 and _written(tmp_path / "incomplete.json")["status"] == "incomplete"  # it exited 0 before
    assert "status incomplete" in out
    with (seed_example / "attempts.csv").open("a") as f:  # an exclusion without a recorded reason
        f.write("my-model,theorem,thm-a,0,0,0,excluded,valid,original_task_score,,,,\n")
    code, _ = _tcsexam(seed_example, "attempts.csv", tmp_path / "provisional.json")
    assert code == 1 and _written(tmp_path / "provisional.json")["status"] == "provisional"


def test_mira_score_and_project_complete_0_incomplete_1(tmp_path, pinned_time):
    for reps, status, want in (("repetitions.jsonl", "complete", 0), ("repetitions_incomplete.jsonl", "incomplete", 1)):
        score = tmp_path / f"{status}.json"
        code, _ = _run("mira", "score", "--contract", MIRA / "contract.json", "--repetitions", MIRA / reps,
                       "--output", score, "--quiet")
        assert code == want and _written(score)["status"] == status  # incomplete exited 0 before
        code, _ = _run("mira", "project", "--score", score, "--output", tmp_path / f"public-{status}.json", "--quiet")
        assert code == want and _written(tmp_path / f"public-{status}.json")["status"] == status


def test_rxn_evaluations_are_complete_even_with_missing_answers(tmp_path, pinned_time):
    """A missing or invalid answer scores 0 as the testset defines: the evaluation is complete, exit 0."""
    empty = tmp_path / "none.json"
    empty.write_text("{}")
    out = tmp_path / "eval.json"
    code, _ = _run("rxn", "eval-mc", "--dataset", RXN / "expected" / "multiple_choice_all_varying.json",
                   "--prediction", empty, "--output", out)
    doc = _written(out)
    assert code == 0 and doc["overall"]["num_missing"] == doc["overall"]["num_samples"] > 0


def test_swarm_pass_0_reduced_1(tmp_path, pinned_time):
    store = f"sqlite:///{tmp_path / 'run.db'}"
    code, _ = _run("swarm", "run", SWARM / "tasks.jsonl", SWARM / "agents.json", "--store", store, "--run-id", "ex",
                   "--blobs", tmp_path / "blobs", "--output", tmp_path / "run.json")
    assert code == 0 and _written(tmp_path / "run.json")["converged"]
    code, _ = _run("swarm", "audit", "ex", "--store", store, "--output", tmp_path / "audit.json")
    assert code == 0 and _written(tmp_path / "audit.json")["verdict"] == "PASS"
    code, _ = _run("swarm", "budget", "--output", tmp_path / "l02.json")
    assert code == 0 and _written(tmp_path / "l02.json")["L02_PASS"]
    # one task per claim and enough of them that neither worker process can drain them all before
    # the other is scheduled: with 100 tasks in claims of 12, a loaded machine let one process take
    # every task (65 ms), so participating_agents was 1 of 2 and the checks failed
    code, out = _run("swarm", "stress", "--agents", "2", "--tasks", "1000", "--batch", "1", "--store",
                     f"sqlite:///{tmp_path / 'l01.db'}", "--output", tmp_path / "l01.json")
    doc = _written(tmp_path / "l01.json")
    assert code == 1 and doc["L01_verdict"] == "reduced" and doc["checks_pass"]  # it exited 0 before
    code, _ = _run("swarm", "accept", "L02", "--output", tmp_path / "accept-l02.json")
    assert code == 0 and _written(tmp_path / "accept-l02.json")["verdict"] == "PASS"


def test_compare_0_and_verify_0_1_2(tmp_path, pinned_time):
    scores = []
    for name in ("a", "b"):
        scores.append(tmp_path / f"{name}.json")
        assert _run("mira", "score", "--contract", MIRA / "contract.json", "--repetitions", MIRA / "repetitions.jsonl",
                    "--output", scores[-1], "--quiet")[0] == 0
    code, _ = _run("compare", *scores, "--resamples", "200", "--output", tmp_path / "compare.json")
    assert code == 0 and _written(tmp_path / "compare.json")
    assert _run("verify", scores[0])[0] == 0
    doc = orjson.loads(scores[0].read_bytes())
    doc["overall"]["task_success"]["value"] = 0.5
    differs = tmp_path / "differs.json"
    differs.write_bytes(orjson.dumps(doc))
    assert _run("verify", differs)[0] == 1
    doc["provenance"]["arguments"]["--repetitions"]["sha256"] = "0" * 64  # an input that is nowhere
    missing = tmp_path / "missing.json"
    missing.write_bytes(orjson.dumps(doc))
    assert _run("verify", missing)[0] == 2


@pytest.mark.parametrize("args", [
    ("tcsexam", "score", "--suite", TCS / "suite.json", "--attempts", MIRA / "contract.json", "--cohort",
     TCS / "cohort.json", "--output", "{out}"),
    ("mira", "score", "--contract", MIRA / "repetitions.jsonl", "--repetitions", MIRA / "repetitions.jsonl",
     "--output", "{out}"),
    ("rxn", "eval-mc", "--dataset", MIRA / "contract.json", "--prediction", RXN / "predictions_mc.json",
     "--output", "{out}"),
    ("swarm", "stress", "--agents", "0", "--output", "{out}"),
])
def test_bad_input_is_2_and_writes_nothing(args, tmp_path):
    out = tmp_path / "out.json"
    code, _ = _run(*(str(out) if a == "{out}" else a for a in args))
    assert code == 2 and not out.exists()


def test_ctrl_c_that_a_library_turned_into_its_own_error_still_exits_130():
    """pydantic-core, building a validator when SIGINT lands, raises a SchemaError that reads
    "KeyboardInterrupt" (CI saw it in `benchscore demo`): an error after Ctrl-C is the interrupt's."""
    code = """
import os, signal
import click
from benchscore.common.cli import Group

@click.group(cls=Group)
def cli():
    pass

@cli.command()
def work():
    try:
        os.kill(os.getpid(), signal.SIGINT)
    except KeyboardInterrupt as exc:
        raise RuntimeError(f"Error building validator: KeyboardInterrupt: {exc}")  # no chain, as pydantic-core

cli.main(["work"], prog_name="benchscore")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.splitlines() == ["error: interrupted (Ctrl-C); nothing was written"], proc.stderr


def test_python_dash_m_benchscore_is_the_console_script(tmp_path):
    """``python -m benchscore`` runs the same CLI (exit codes included) as the ``benchscore`` script."""
    ok = subprocess.run([sys.executable, "-m", "benchscore", "list"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "rxn" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "benchscore", "compare", str(tmp_path / "missing.json")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "missing.json" in bad.stdout + bad.stderr
    out = tmp_path / "l02.json"  # provenance names the command benchscore, so verify can re-run it
    made = subprocess.run([sys.executable, "-m", "benchscore", "swarm", "budget", "--output", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert orjson.loads(out.read_bytes())["provenance"]["command"] == "benchscore swarm budget"
