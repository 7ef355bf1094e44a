"""Issue 10 (the terminal tells the whole truth) and the JSON the HTML report plots (issue 4 of the
task): every FAIL with its reason on one line, every number of the JSON printed, every written file
named, one-line reproduce command, no wrapping when stdout is a pipe; per-scenario failure reasons
and S09's consensus rounds in the matrix JSON."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.common.cli import group
from benchscore.common.terminal import fmt, rounded
from benchscore.swarm.cli_accept import accept, demo_acceptance


def numbers(obj, skip=("provenance",)):
    """Every number (not bool) in a JSON document, outside the ``skip`` keys."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in skip:
                yield from numbers(v, skip)
    elif isinstance(obj, list):
        for v in obj:
            yield from numbers(v, skip)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield obj


def _shown(x) -> set[str]:
    """How the terminal may print a JSON number: rounded to 4 significant digits (issue 18), as a cell or inside
    a JSON value (``100.0`` is ``100`` in a cell and ``100.0`` in JSON)."""
    return {fmt(x), orjson.dumps(rounded(x)).decode()}


def assert_every_number_printed(doc, output: str) -> None:
    missing = sorted({repr(x) for x in numbers(doc) if not any(s in output for s in _shown(x))})
    assert not missing, f"numbers of the JSON not in the terminal output: {missing[:20]}"


def shown_reason(reason: str) -> str:
    """A FAIL reason as the terminal prints it: its condition and failing parts whole; its evidence follows,
    rounded for reading (the JSON keeps every digit)."""
    head, sep, _ = reason.partition("; evidence: ")
    return head + sep


def assert_every_fail_on_one_line(failures: dict[str, str], prefix: str, output: str) -> None:
    lines = output.splitlines()
    for name, reason in failures.items():
        assert reason, name
        hits = [ln for ln in lines if shown_reason(reason) in ln]
        assert hits and any(f"FAIL {prefix}" in ln for ln in hits), (name, reason)


@group("t")
def _cli() -> None:
    pass


_cli.add_command(accept)


@pytest.fixture(scope="module")
def piped_s07(tmp_path_factory):
    """`benchscore swarm accept S07` as a real process whose stdout is a pipe (replay, no Redis)."""
    d = tmp_path_factory.mktemp("piped")
    exe = Path(sys.executable).with_name("benchscore")
    out = d / "out dir" / "s07.json"  # a space: the reproduce command must quote it
    args = [str(exe), "swarm", "accept", "S07", "--store", f"sqlite:///{d}/a.db", "--output", str(out)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300,  # stdout is a pipe
                          env={**os.environ, "COLUMNS": "60"})
    return proc, out, args


def test_piped_s07_fail_rows_carry_condition_and_evidence_on_one_line(piped_s07):
    proc, out, _ = piped_s07
    assert proc.returncode == 1, proc.stderr  # the two Redis checks fail without --redis
    body = orjson.loads(out.read_bytes())
    failures = body["failures"]
    assert set(failures) == {"pheromone_scores_pg_and_redis", "redis_stream_event_volume"}
    assert "no Redis mirror attached to this run" in failures["pheromone_scores_pg_and_redis"]
    assert failures["pheromone_scores_pg_and_redis"].startswith("not met: every step task has P_t > 0")
    assert_every_fail_on_one_line(failures, "S07.", proc.stdout)
    longest = max(len(ln) for ln in proc.stdout.splitlines())
    assert longest > 200  # COLUMNS=60 and a pipe: nothing was wrapped or cut
    assert "…" not in proc.stdout and "..." not in proc.stdout


def test_piped_s07_prints_every_number_of_its_json(piped_s07):
    proc, out, _ = piped_s07
    body = orjson.loads(out.read_bytes())
    assert body["consensus"]["preset"] == "S07_quality" and body["consensus"]["threshold"] == 0.7
    assert_every_number_printed(body, proc.stdout)
    quality = next(c for c in body["checks"] if c["name"] == "all_outputs_pass_quality_gate")["evidence"]["quality"]
    assert set(quality) == {str(k) for k in range(1, 8)} and all("Q" in q and "task_score" in q for q in quality.values())


def test_piped_s07_names_every_file_and_a_one_line_reproduce_command(piped_s07):
    proc, out, args = piped_s07
    wrote = [ln.removeprefix("wrote: ") for ln in proc.stdout.splitlines() if ln.startswith("wrote: ")]
    assert sorted(wrote) == sorted(str(p) for p in (out, out.with_name("s07.model-io.json"),
                                                    out.with_name("s07.model-io.md")))
    assert all(Path(p).is_file() for p in wrote)
    repro = [ln for ln in proc.stdout.splitlines() if ln.startswith("reproduce: ")]
    assert len(repro) == 1
    assert shlex.split(repro[0].removeprefix("reproduce: ")) == ["benchscore", "swarm", "accept", "S07",
                                                                   "--output", args[-1], "--store", args[5]]


@pytest.fixture(scope="module")
def matrix_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("matrix")
    out = d / "m.json"
    r = CliRunner().invoke(_cli, ["accept", "all", "--quick", "--store", f"sqlite:///{d}/a.db", "--output", str(out)])
    return r, orjson.loads(out.read_bytes()), out


def test_matrix_terminal_prints_every_number_and_every_fail_reason(matrix_run):
    r, m, out = matrix_run
    assert r.exit_code == 1, r.output
    assert_every_number_printed(m, r.output)
    fails = [c for c in m["checks"] if c["verdict"] == "FAIL"]
    assert {c["id"] for c in fails} >= {"S07.pheromone_scores_pg_and_redis", "L01",
                                         "A02_unit_and_deterministic_scenarios.unit_tests_report"}
    for c in fails:
        assert c["reason"] and any(shown_reason(c["reason"]) in ln and "FAIL" in ln for ln in r.output.splitlines()), \
            c["id"]
    for label in ("S07 (replay): FAIL", "S08 (replay): FAIL: replay", "S07 | replay | FAIL", "L01 | not_run | FAIL",
                  "S08_model_io_report_audit | replay | FAIL | replay",
                  "S07_live_external_github_code_reasoning | replay | FAIL"):
        assert label in r.output
    wrote = {ln.removeprefix("wrote: ") for ln in r.output.splitlines() if ln.startswith("wrote: ")}
    assert wrote == {str(out), str(out.with_suffix(".md")), str(out.with_name("m.model-io.json")),
                     str(out.with_name("m.model-io.md"))}


def test_matrix_json_carries_failure_reasons_and_the_consensus_rounds(matrix_run):
    _, m, out = matrix_run
    assert m["scenarios"]["S07"]["failures"]["pheromone_scores_pg_and_redis"].startswith("not met:")
    assert m["scenarios"]["L01"]["failures"] == {"scenario": m["scenarios"]["L01"]["reason"].join(("not_run: ", ""))}
    assert m["scenarios"]["S09"]["failures"] == {} and m["scenarios"]["S09"]["verdict"] == "PASS"
    for c in m["checks"]:
        assert c["condition"] and (c["reason"] == "") == (c["verdict"] == "PASS"), c["id"]
    s09 = m["consensus"]["S09"]
    assert (s09["preset"], s09["threshold"], s09["min_margin"], s09["evaporation"]) == ("S09_questioning", 0.7, 0.2, 0.85)
    assert len(s09["rounds"]) >= 2 and not s09["rounds"][0]["converged"] and s09["rounds"][-1]["converged"]
    assert all({"leader_share", "margin", "scores", "leader"} <= set(r) for r in s09["rounds"])
    s07 = m["consensus"]["S07"]
    assert (s07["preset"], s07["threshold"], s07["min_margin"], s07["min_rounds"]) == ("S07_quality", 0.7, 0.25, 2)
    md = out.with_suffix(".md").read_text()
    assert "| S07 | **replay** | FAIL |" in md and "| S09 | **local** | PASS |" in md
    assert "## Failures" in md and "no Redis mirror attached to this run" in md
    assert "## S09 consensus (S09_questioning: threshold 0.7, min_margin 0.2" in md


def test_demo_prints_fail_reasons_files_and_reproduce(tmp_path, capsys):
    demo_acceptance(tmp_path)
    text = capsys.readouterr().out
    m = orjson.loads((tmp_path / "acceptance-matrix.json").read_bytes())
    for c in m["checks"]:
        if c["verdict"] == "FAIL":
            assert any(shown_reason(c["reason"]) in ln for ln in text.splitlines()), c["id"]
    assert f"wrote: {tmp_path / 'acceptance-matrix.md'}" in text
    repro = [ln for ln in text.splitlines() if ln.startswith("reproduce: ")]
    assert len(repro) == 1 and "--output" in repro[0]
