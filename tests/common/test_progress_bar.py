"""The progress bar of long reads (benchscore.common.progress, issue 37 point 2): drawn after a couple of seconds
for a person watching, never into a pipe, a file or click's CliRunner."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common import progress as P

DATA = Path(__file__).resolve().parents[1] / "results" / "data" / "every_eval_ever"
RECORDS = [DATA / "helm_mmlu_openai_gpt2_samples.jsonl", DATA / "helm_hellaswag_pythia-1b-v0_samples.jsonl"]


def _spy(monkeypatch) -> list:
    drawn: list = []
    real = P.Progress._draw

    def draw(self):
        drawn.append((self.description, self.done, self.count))
        real(self)

    monkeypatch.setattr(P.Progress, "_draw", draw)
    monkeypatch.setattr(P, "DELAY", 0.0)
    return drawn


def _records(folder: Path) -> list[Path]:
    """Every Eval Ever instance records of three models on one quiz of 1,000 samples (the max-t rank sets need as many) (upstream schema 0.3.0)."""
    folder.mkdir()
    paths = []
    for k, model in enumerate(("alpha", "beta", "gamma")):
        lines = [json.dumps({
            "schema_version": "0.3.0", "evaluation_id": f"quiz/{model}", "model_id": f"org/{model}",
            "evaluation_name": "quiz", "sample_id": f"s{i:02d}", "sample_hash": hashlib.sha256(b"%d" % i).hexdigest(),
            "interaction_type": "single_turn", "input": {"raw": f"question {i}", "reference": [str(i)]},
            "output": {"raw": [str(i)]}, "answer_attribution": [],
            "evaluation": {"score": float(i % (k + 2) == 0), "is_correct": i % (k + 2) == 0}}) for i in range(1000)]
        paths.append(folder / f"{model}_samples.jsonl")
        paths[-1].write_text("\n".join(lines) + "\n")
    return paths


def test_compare_draws_no_bar_under_click_s_runner_and_would_for_a_person(monkeypatch, tmp_path):
    drawn = _spy(monkeypatch)
    records = _records(tmp_path / "records")
    res = CliRunner().invoke(cli, ["compare", *map(str, records), "--resamples", "200"])
    assert res.exit_code == 0, res.output
    assert drawn == []  # stdout is not a terminal
    monkeypatch.setattr(P, "watched", lambda: True)  # a person watching: the same run draws its bars
    res = CliRunner().invoke(cli, ["compare", *map(str, records), "--resamples", "200"])
    assert res.exit_code == 0, res.output
    names = [d[0] for d in drawn]
    assert names[0] == "reading results" and drawn[0][2] > 0  # files read, samples counted
    assert any(n.startswith("paired tests of quiz/") for n in names), names  # the bootstrap of the pairs
    res = CliRunner().invoke(cli, ["compare", *map(str, records), "--resamples", "200", "--rank-sets", "max-t",
                                   "--draws", "100"])
    assert res.exit_code == 0, res.output
    assert any(d[0].startswith("rank sets of quiz/") for d in drawn), drawn  # the max-t bootstrap


def test_the_bar_waits_for_its_delay_and_counts_files_and_samples():
    with P.Progress("reading", unit="samples", delay=3600, enabled=True) as bar:
        bar.advance(1, count=10)
        assert not bar.drawing  # a short run draws nothing
    with P.Progress("reading", total=2, unit="samples", delay=0, enabled=True) as bar:
        bar.advance(1, count=10)
        bar.advance(1, count=5)
        assert bar.drawing and (bar.done, bar.count) == (2, 15)
    assert not bar.drawing  # removed on exit
    with P.Progress("reading", delay=0, enabled=False) as bar:
        bar.advance(1, count=10)
        assert not bar.drawing


def test_watched_needs_stdout_and_stderr_to_be_terminals(monkeypatch):
    class Stream:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    for out, err, expected in ((True, True, True), (False, True, False), (True, False, False)):
        monkeypatch.setattr(sys, "stdout", Stream(out))
        monkeypatch.setattr(sys, "stderr", Stream(err))
        assert P.watched() is expected


def test_a_pipe_gets_no_bar(tmp_path):
    """The real console script with stdout into a pipe and stderr a file: no bar, no control codes."""
    code = ("import sys; from benchscore.common import progress as P; P.DELAY = 0.0; "
            "from benchscore.cli import main; sys.argv = ['benchscore', 'compare', *sys.argv[1:]]; main()")
    proc = subprocess.run([sys.executable, "-c", code, *map(str, RECORDS)], capture_output=True, text=True,
                          timeout=120)
    assert "reading results" not in proc.stderr and "\x1b[" not in proc.stderr, proc.stderr
