"""examples/mira: the expected outputs are exactly what the README's commands produce."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
from mira_helpers import DATA, run

EX = Path(__file__).resolve().parents[2] / "examples" / "mira"


def test_examples_match_bundled_demo_data() -> None:
    for name in ("contract.json", "repetitions.jsonl", "repetitions_incomplete.jsonl", "deviations.json",
                 "observations.jsonl", "judge_calibration.jsonl"):
        assert (EX / name).read_bytes() == (DATA / name).read_bytes(), name


def test_expected_outputs_reproduce(tmp_path: Path, pinned_time) -> None:
    out = tmp_path / "expected"
    out.mkdir()
    for reps, name in (("repetitions.jsonl", "score.json"), ("repetitions_incomplete.jsonl", "score_incomplete.json")):
        calibrated = ("--judge-calibration", EX / "judge_calibration.jsonl") if name == "score.json" else ()
        res = run("score", "--contract", EX / "contract.json", "--repetitions", EX / reps,
                  "--deviations", EX / "deviations.json", *calibrated, "--output", out / name, "--quiet")
        assert res.exit_code == (1 if "incomplete" in name else 0), res.output  # 1: incomplete, still written
    assert run("project", "--score", out / "score.json", "--output", out / "public.json").exit_code == 0
    assert run("calibrate", "--contract", EX / "contract.json", "--observations", EX / "observations.jsonl",
               "--output", out / "contract_calibrated.json").exit_code == 0
    for name in ("score.json", "score_incomplete.json", "public.json", "contract_calibrated.json"):
        assert (out / name).read_bytes() == (EX / "expected" / name).read_bytes(), name


def test_local_judge_script_flow(tmp_path: Path) -> None:
    assert run("judge-packets", "--contract", EX / "contract.json", "--repetitions", EX / "repetitions_unjudged.jsonl",
               "--output-dir", tmp_path / "packets").exit_code == 0
    proc = subprocess.run([sys.executable, str(EX / "judge_locally.py"), str(tmp_path / "packets"),
                           str(tmp_path / "verdicts.json")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = run("score", "--contract", EX / "contract.json", "--repetitions", EX / "repetitions_unjudged.jsonl",
              "--verdicts", tmp_path / "verdicts.json", "--output", tmp_path / "s.json", "--quiet")
    assert res.exit_code == 0, res.output
    s = orjson.loads((tmp_path / "s.json").read_bytes())
    assert s["status"] == "complete"
    assert {r["id"]: r["status"] for r in s["repetitions"]}["ADV-01#3"] == "pass"  # the stand-in judge says pass


def _readme_quickstart() -> str:
    section = (EX.parents[1] / "docs" / "mira.md").read_text()
    return section.split("## Quick start", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]


def test_readme_quickstart_writes_the_expected_outputs(tmp_path: Path) -> None:
    """The Mira README's quick-start block, pasted from the repository root, writes exactly examples/mira/expected/."""
    script = _readme_quickstart().replace("out/mira-demo", str(tmp_path / "mira-demo")).replace(
        "out/mira", str(tmp_path / "mira-out"))
    root = EX.parents[1]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(["bash", "-euc", script], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "mira-out"
    for name in ("score.json", "score_incomplete.json", "public.json", "contract_calibrated.json"):
        assert (out / name).read_bytes() == (EX / "expected" / name).read_bytes(), name
    assert orjson.loads((out / "score_judged.json").read_bytes())["status"] == "complete"


def test_the_private_score_does_not_copy_the_contracts_credentials(tmp_path: Path) -> None:
    """Credentials are needed to run a case, never to score it: not even the private score carries them."""
    from click.testing import CliRunner

    from benchscore.cli import cli

    out = tmp_path / "s.json"
    result = CliRunner().invoke(cli, ["mira", "score", "--contract", str(EX / "contract.json"), "--repetitions",
                                      str(EX / "repetitions.jsonl"), "--output", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert b"demo-not-a-real-token" in (EX / "contract.json").read_bytes()
    assert b"demo-not-a-real-token" not in out.read_bytes() and b'"credentials"' not in out.read_bytes()
