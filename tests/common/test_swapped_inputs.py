"""Issue 39 point 4: two inputs of different formats given to each other's options are named as swapped
(``benchscore.common.swapped``), in one line, exit 2, nothing written; anything else keeps its own refusal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchscore.cli import cli

EX = Path(__file__).resolve().parents[2] / "examples"
MIRA, TCS, RXN = EX / "mira", EX / "tcsexam" / "seed-example", EX / "rxn"
MC_SET = RXN / "expected" / "multiple_choice_all_varying.json"


def _refusal(tmp_path: Path, *args: object) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert not list((tmp_path / "out").iterdir())
    return lines[0]


@pytest.fixture
def out(tmp_path):
    (tmp_path / "out").mkdir()
    return tmp_path / "out"


@pytest.mark.parametrize(("args", "first", "second"), [
    (["mira", "score", "--contract", MIRA / "repetitions.jsonl", "--repetitions", MIRA / "contract.json",
      "--output", "{out}/s.json"], "--contract", "--repetitions"),
    (["mira", "score", "--contract", MIRA / "contract.json", "--repetitions", MIRA / "deviations.json",
      "--deviations", MIRA / "repetitions.jsonl", "--output", "{out}/s.json"], "--repetitions", "--deviations"),
    (["mira", "judge-packets", "--contract", MIRA / "repetitions_unjudged.jsonl", "--repetitions",
      MIRA / "contract.json", "--output-dir", "{out}/p"], "--contract", "--repetitions"),
    (["tcsexam", "solver-score", "--task", "maxcut-mqlib", "--records", TCS / "reference.json", "--reference",
      TCS / "records.json", "--output", "{out}/t.json"], "--reference", "--records"),
    (["tcsexam", "score", "--suite", TCS / "cohort.json", "--attempts", TCS / "attempts.csv", "--cohort",
      TCS / "suite.json", "--output", "{out}/i.json"], "--suite", "--cohort"),
    (["rxn", "eval-mc", "--dataset", RXN / "predictions_mc.json", "--prediction", MC_SET, "--output", "{out}/e.json"],
     "--dataset", "--prediction"),
], ids=["mira score", "mira score deviations", "mira judge-packets", "tcsexam solver-score", "tcsexam score",
        "rxn eval-mc"])
def test_swapped_inputs_are_named_as_swapped(tmp_path, out, args, first, second):
    """Before: the first field the wrong format lacks (``field '(root)': Input should be an object``, ``field
    'question_type': Field required``, ``malformed JSON: unexpected content after document``)."""
    line = _refusal(tmp_path, *(str(a).replace("{out}", str(out)) for a in args))
    assert f"{first} and {second} look swapped" in line, line
    assert "looks like" in line and "what" in line


def test_the_other_file_is_named_when_it_looks_like_the_first(tmp_path, out):
    line = _refusal(tmp_path, "mira", "score", "--contract", MIRA / "repetitions.jsonl", "--repetitions",
                    MIRA / "contract.json", "--output", out / "s.json")
    assert line.startswith(f"error: {MIRA / 'repetitions.jsonl'}: looks like Mira repetition records (what "
                           "--repetitions takes), not a Mira contract, and --repetitions ")
    assert f"{MIRA / 'contract.json'} like a Mira contract" in line


def test_a_file_of_no_declared_kind_keeps_its_own_refusal(tmp_path, out):
    """Observations given as repetitions-like JSONL to calibrate: no option of calibrate takes repetitions."""
    line = _refusal(tmp_path, "mira", "calibrate", "--contract", MIRA / "contract.json", "--observations",
                    MIRA / "repetitions.jsonl", "--output", out / "c.json")
    assert "swapped" not in line and "observation_id" in line


def test_a_damaged_file_of_its_own_kind_is_not_called_swapped(tmp_path, out):
    bad = tmp_path / "contract.json"
    shutil.copyfile(MIRA / "contract.json", bad)
    bad.write_text(bad.read_text().replace('"cases"', '"cases_x"', 1).replace('"benchmark_id"', '"benchmark_id"', 1))
    line = _refusal(tmp_path, "mira", "score", "--contract", bad, "--repetitions", MIRA / "repetitions.jsonl",
                    "--output", out / "s.json")
    assert "swapped" not in line
