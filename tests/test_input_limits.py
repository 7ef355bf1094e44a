"""Issue 15, points 5 and 6 end to end: the same refusals, in one line, from every command.

- Deep nesting: the issue's inputs (``'['*255 + ']'*255`` to the mira commands, ``'['*1000 + ']'*1000``
  to tcsexam ``solver-score --records`` and ``reference build``) were tracebacks; each is now the one
  line of the common limit (``MAX_DEPTH``), the same for every command. (The fuzz test feeds every
  input of every command such values too.)
- Inputs that are not regular files, through the real console script: a FIFO hung every command but
  ``swarm accept --junit``, a link to ``/dev/zero`` read without end, a link loop was a traceback.
  Each run has a timeout and an address-space limit, so a regression fails instead of hanging or
  eating the machine's memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common.readers import MAX_DEPTH

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
MIRA, SEED, RXN = EX / "mira", EX / "tcsexam" / "seed-example", EX / "rxn"
RUNS = ROOT / "src" / "benchscore" / "tcsexam" / "data" / "demo" / "runs" / "demo-maxcut"
DEEP_LINE = f"nested deeper than {MAX_DEPTH} levels (arrays and objects inside each other); the limit is the same"

#: command, the input to spoil, depth (the issue's cases)
DEEP = [
    (["mira", "score", "--contract", "{x}", "--repetitions", str(MIRA / "repetitions.jsonl"), "--output", "{out}"], 255),
    (["mira", "score", "--contract", str(MIRA / "contract.json"), "--repetitions", "{x}", "--output", "{out}"], 255),
    (["mira", "score", "--contract", str(MIRA / "contract.json"), "--repetitions", str(MIRA / "repetitions.jsonl"),
      "--deviations", "{x}", "--output", "{out}"], 255),
    (["mira", "calibrate", "--contract", str(MIRA / "contract.json"), "--observations", "{x}", "--output", "{out}"], 255),
    (["mira", "judge-packets", "--contract", str(MIRA / "contract.json"), "--repetitions", "{x}", "--output-dir",
      "{out}"], 255),
    (["mira", "project", "--score", "{x}", "--output", "{out}"], 255),
    (["tcsexam", "solver-score", "--task", "maxcut-mqlib", "--records", "{x}", "--reference",
      str(SEED / "reference.json"), "--output", "{out}"], 1000),
    (["tcsexam", "solver-score", "--task", "maxcut-mqlib", "--records", str(SEED / "records.json"), "--reference",
      "{x}", "--output", "{out}"], 1000),
    (["tcsexam", "reference", "build", "--id", "t", "--suite", "demo-lite", "--task", "demo-maxcut", "--kind",
      "objective", "--direction", "maximize", "--output", "{out}", "{x}", str(RUNS / "k3-run-2.json"),
      str(RUNS / "k3-run-3.json")], 1000),
    (["rxn", "eval-mc", "--dataset", "{x}", "--prediction", str(RXN / "predictions_mc.json"), "--output", "{out}"], 1000),
    (["swarm", "run", "{x}", str(EX / "swarm" / "runtime" / "agents.json"), "--store", "sqlite:///{out}.db",
      "--output", "{out}"], 255),
    (["report", "{x}", "--output", "{out}"], 255),
]


@pytest.mark.parametrize(("args", "depth"), DEEP, ids=[" ".join(a[:2]) + f" {a.index('{x}')}" for a, _ in DEEP])
def test_deep_nesting_is_the_same_one_line_for_every_command(tmp_path, args, depth):
    x = tmp_path / "deep.json"
    x.write_text("[" * depth + "]" * depth)
    out = tmp_path / "out" / "o.json"
    result = CliRunner().invoke(cli, [a.format(x=x, out=out) for a in args])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.stderr == f"error: {x}: line 1: {DEEP_LINE} for every input\n", result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.json"]


BENCHSCORE = [sys.executable, "-c", "from benchscore.cli import main; main()"]
#: commands whose first input is replaced by a non-regular file ({x}); the rest are valid
NON_REGULAR = {
    "mira project": ["mira", "project", "--score", "{x}", "--output", "{out}/p.json"],
    "tcsexam solver-score": ["tcsexam", "solver-score", "--task", "maxcut-mqlib", "--records", "{x}", "--reference",
                             str(SEED / "reference.json"), "--output", "{out}/s.json"],
    "tcsexam score": ["tcsexam", "score", "--suite", str(SEED / "suite.json"), "--attempts", "{x}", "--cohort",
                      str(SEED / "cohort.json"), "--output", "{out}/i.json"],
    "rxn convert-csv": ["rxn", "convert-csv", "--csv", "{x}", "--output", "{out}/t.json"],
    "rxn convert-currybo": ["rxn", "convert-currybo", "--source", "{x}", "--output-dir", "{out}/c"],
    "swarm run": ["swarm", "run", "{x}", str(EX / "swarm" / "runtime" / "agents.json"), "--store",
                  "sqlite:///{out}/r.db", "--output", "{out}/r.json"],
    "swarm accept --junit": ["swarm", "accept", "l02", "--junit", "{x}", "--output", "{out}/a.json"],
    "report": ["report", "{x}", "--output", "{out}/r.html"],
    # the inspect_ai log readers (inspect_ai is in the test extra)
    "mira from-inspect": ["mira", "from-inspect", "{x}", "--contract", str(MIRA / "inspect" / "contract.json"),
                          "--mapping", str(MIRA / "inspect" / "mapping.json"), "--output", "{out}/r.jsonl"],
    "rxn eval-mc --from-inspect": ["rxn", "eval-mc", "--dataset", str(RXN / "expected" / "multiple_choice_all_varying.json"),
                                   "--from-inspect", "{x}", "--output", "{out}/e.json"],
}
KINDS = {"fifo": "is a FIFO (named pipe), not a regular file",
         "dev_zero": "is a character device (a symbolic link to /dev/zero), not a regular file",
         "loop": "symbolic link loop (too many levels of symbolic links)"}


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (6 * 1024**3, 6 * 1024**3))  # a read of /dev/zero fails, not the machine


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", sorted(NON_REGULAR))
def test_a_non_regular_input_is_refused_by_the_real_command(tmp_path, command, kind):
    x = tmp_path / "input"
    if kind == "fifo":
        os.mkfifo(x)
    elif kind == "dev_zero":
        x.symlink_to("/dev/zero")
    else:
        x.symlink_to(x.name)
    out = tmp_path / "out"
    proc = subprocess.run([*BENCHSCORE, *(a.format(x=x, out=out) for a in NON_REGULAR[command])],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, preexec_fn=_limits)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr.splitlines() == [f"error: {x}: {KINDS[kind]}" + (
        "; inputs must be regular files" if kind != "loop" else "")], proc.stderr
    assert not out.exists()
