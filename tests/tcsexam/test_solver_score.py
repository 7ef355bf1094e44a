"""tcsexam solver-score: the seed's example, every rule, named references, reproducible output."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from tcsexam_helpers import ISSUE_REFERENCE, assert_one_line_error, run, write_json

from benchscore.common.terminal import fmt
from benchscore.tcsexam.formats import SolverScoreOutput

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tcsexam" / "seed-example"


def seed_files(tmp_path, records=None, reference=None):
    ref = write_json(tmp_path / "ref.json", reference or ISSUE_REFERENCE)
    rec = write_json(
        tmp_path / "records.json",
        records
        if records is not None
        else [{"instance": "g1", "status": "ok", "A": 12}, {"instance": "g2", "status": "timeout"}],
    )
    return ref, rec


def score(tmp_path, ref, rec, task="maxcut-mqlib"):
    out = tmp_path / "out.json"
    return run("solver-score", "--task", task, "--records", rec, "--reference", ref, "--output", out), out


def test_seed_example_half_then_quarter(tmp_path):
    ref, rec = seed_files(tmp_path)
    result, out = score(tmp_path, ref, rec)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    SolverScoreOutput.model_validate(data)
    assert data["relative_score"] == 0.25
    assert data["instances"]["g1"] == {
        "score": 0.5,
        "A": 12.0,
        "mu": 12.0,
        "scale": 2.0,
        "z": 0.0,
        "status": "ok",
    }
    assert data["instances"]["g2"]["score"] == 0.0 and data["instances"]["g2"]["z"] is None
    assert data["reference_id"] == "paper-k3-fixed-260925"
    assert len(data["reference_sha256"]) == 64
    assert data["provenance"]["metric_id"] == "fixed_reference_relative"
    assert data["provenance"]["reference"]["sha256"] == data["reference_sha256"]


def test_unscored_records_are_reported_and_excluded(tmp_path):
    ref, rec = seed_files(
        tmp_path,
        records=[
            {"instance": "g9", "status": "ok", "A": 999},
            {"instance": "g1", "status": "ok", "A": 12},
            {"instance": "new", "status": "crash"},
            {"instance": "g2", "status": "ok", "A": 5.75},
        ],
    )
    result, out = score(tmp_path, ref, rec)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["unscored_instances"] == ["g9", "new"]
    assert list(data["instances"]) == ["g1", "g2"]
    assert data["relative_score"] == 0.5


@pytest.mark.parametrize("status", ["timeout", "invalid", "certificate_failed", "crash"])
def test_completed_failures_score_zero(tmp_path, status):
    ref, rec = seed_files(
        tmp_path,
        records=[
            {"instance": "g1", "status": status, "A": 100},
            {"instance": "g2", "status": "ok", "A": 5.75},
        ],
    )
    result, out = score(tmp_path, ref, rec)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["instances"]["g1"]["score"] == 0.0
    assert data["relative_score"] == 0.25


def test_minimize_direction(tmp_path):
    reference = copy.deepcopy(ISSUE_REFERENCE)
    reference["tasks"]["maxcut-mqlib"]["direction"] = "minimize"
    ref, rec = seed_files(
        tmp_path,
        reference=reference,
        records=[{"instance": "g1", "status": "ok", "A": 10}, {"instance": "g2", "status": "ok", "A": 5.75}],
    )
    result, out = score(tmp_path, ref, rec)
    data = json.loads(out.read_text())
    assert data["instances"]["g1"]["z"] == 1.0
    assert data["instances"]["g1"]["score"] == pytest.approx(0.8413447460685429)


def test_solve_task(tmp_path):
    reference = {
        "reference_id": "r",
        "suite": "lite",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": {
            "sat": {"kind": "solve", "direction": "maximize", "instances": {"p1": [1, 0, 1], "p2": [1, 1, 1]}}
        },
    }
    ref, rec = seed_files(
        tmp_path,
        reference=reference,
        records=[
            {"instance": "p1", "status": "ok", "solved": True},
            {"instance": "p2", "status": "ok", "A": 1},
        ],
    )
    result, out = score(tmp_path, ref, rec, task="sat")
    data = json.loads(out.read_text())
    assert data["instances"]["p2"]["score"] == 0.5  # equal to mu = 1 (s = 0: relative floor, scale 0.02)
    assert data["instances"]["p2"]["scale"] == 0.02
    assert data["instances"]["p1"]["score"] > 0.5


BAD_RECORDS = [
    (
        "missing scorable instance",
        [{"instance": "g1", "status": "ok", "A": 12}],
        ("instance", "'g2'", "have no record"),
    ),
    (
        "duplicate instance",
        [
            {"instance": "g1", "status": "ok", "A": 12},
            {"instance": "g1", "status": "ok", "A": 11},
            {"instance": "g2", "status": "timeout"},
        ],
        ("record 2", "duplicate instance name 'g1'"),
    ),
    (
        "infra_error",
        [{"instance": "g1", "status": "infra_error"}, {"instance": "g2", "status": "timeout"}],
        ("record 1", "field 'status'", "infra_error"),
    ),
    (
        "missing status",
        [{"instance": "g1", "status": "missing"}, {"instance": "g2", "status": "timeout"}],
        ("record 1", "field 'status'", "'missing'"),
    ),
    (
        "unknown status",
        [{"instance": "g1", "status": "ok", "A": 12}, {"instance": "g2", "status": "oom"}],
        ("record 2", "unknown status 'oom'"),
    ),
    (
        "ok without A",
        [{"instance": "g1", "status": "ok"}, {"instance": "g2", "status": "timeout"}],
        ("record 1", "field 'A'"),
    ),
    (
        "A as a string",
        [{"instance": "g1", "status": "ok", "A": "12"}, {"instance": "g2", "status": "timeout"}],
        ("record 1", "field 'A'"),
    ),
    (
        "solved on an objective task",
        [{"instance": "g1", "status": "ok", "solved": True}, {"instance": "g2", "status": "timeout"}],
        ("record 1", "field 'solved'"),
    ),
    ("not a list", {"g1": 12}, ("expected a JSON list",)),
]


@pytest.mark.parametrize("label,records,fragments", BAD_RECORDS, ids=[b[0] for b in BAD_RECORDS])
def test_bad_records_exit_2_one_line_and_write_nothing(tmp_path, label, records, fragments):
    ref, rec = seed_files(tmp_path, records=records)
    result, out = score(tmp_path, ref, rec)
    assert_one_line_error(result, "records.json", *fragments)
    assert not out.exists()


def test_nan_in_records_is_refused(tmp_path):
    ref, rec = seed_files(tmp_path)
    rec.write_text('[{"instance": "g1", "status": "ok", "A": NaN}, {"instance": "g2", "status": "timeout"}]')
    result, out = score(tmp_path, ref, rec)
    assert_one_line_error(result, "records.json", "NaN")
    assert not out.exists()


def test_unknown_task_and_missing_files(tmp_path):
    ref, rec = seed_files(tmp_path)
    result, out = score(tmp_path, ref, rec, task="tsp")
    assert_one_line_error(result, "task 'tsp' is not in reference")
    result, out = score(tmp_path, ref, tmp_path / "nope.json")
    assert_one_line_error(result, "nope.json", "file not found")
    assert not out.exists()


def test_named_reference_without_data_dir_says_so_in_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("TCSEXAM_DATA", raising=False)
    _, rec = seed_files(tmp_path)
    for name in ("lite", "full"):
        result, out = score(tmp_path, name, rec)
        assert_one_line_error(
            result, f"official TCSExam {name!r} reference is not public", "--reference PATH", "tcsexam demo"
        )
        assert not out.exists()


def test_named_reference_resolves_from_the_data_dir(tmp_path, monkeypatch):
    data = tmp_path / "data"
    write_json(data / "references" / "lite.json", ISSUE_REFERENCE)
    _, rec = seed_files(tmp_path)
    out = tmp_path / "o.json"
    result = run(
        "solver-score",
        "--task",
        "maxcut-mqlib",
        "--records",
        rec,
        "--reference",
        "lite",
        "--data-dir",
        data,
        "--output",
        out,
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(out.read_text())["relative_score"] == 0.25
    monkeypatch.setenv("TCSEXAM_DATA", str(data))
    out.unlink()
    result = run(
        "solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", "lite", "--output", out
    )
    assert result.exit_code == 0, result.stderr
    result = run(
        "solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", "full", "--output", out
    )
    assert_one_line_error(result, "references/full.json does not exist")


def test_output_is_byte_identical_and_matches_the_committed_example(tmp_path, pinned_time, monkeypatch):
    monkeypatch.chdir(EXAMPLE.parents[2])
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    args = [
        "solver-score",
        "--task",
        "maxcut-mqlib",
        "--records",
        "examples/tcsexam/seed-example/records.json",
        "--reference",
        "examples/tcsexam/seed-example/reference.json",
        "--output",
    ]
    assert run(*args, out1).exit_code == 0
    assert run(*args, out2).exit_code == 0
    assert out1.read_bytes() == out2.read_bytes()
    assert out1.read_bytes() == (EXAMPLE / "expected" / "maxcut-relative.json").read_bytes()


def test_record_order_does_not_change_the_output(tmp_path):
    recs = [{"instance": "g2", "status": "ok", "A": 6}, {"instance": "g1", "status": "ok", "A": 13}]
    ref, rec = seed_files(tmp_path, records=recs)
    _, out = score(tmp_path, ref, rec)
    first = json.loads(out.read_text())
    write_json(rec, list(reversed(recs)))
    _, out = score(tmp_path, ref, rec)
    second = json.loads(out.read_text())
    assert first["instances"] == second["instances"] and first["relative_score"] == second["relative_score"]


def test_output_that_is_an_input_is_refused(tmp_path):
    ref, rec = seed_files(tmp_path)
    before = rec.read_bytes()
    result = run(
        "solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", ref, "--output", rec
    )
    assert_one_line_error(result, "--output is also an input")
    assert rec.read_bytes() == before
    result = run(
        "reference",
        "build",
        "--id",
        "x",
        "--suite",
        "s",
        "--task",
        "t",
        "--kind",
        "objective",
        "--direction",
        "maximize",
        "--output",
        rec,
        rec,
    )
    assert_one_line_error(result, "--output is also an input")


# ---- many --records in one call (a leaderboard re-scored in one process) -------------------------


def leaderboard(tmp_path, n_models=3):
    """records/MODEL/maxcut/attempt-1.json for a few models: the same file name in each folder."""
    ref = write_json(tmp_path / "ref.json", ISSUE_REFERENCE)
    files = []
    for k in range(n_models):
        recs = [{"instance": "g1", "status": "ok", "A": 10 + k}, {"instance": "g2", "status": "ok", "A": 5 + k / 4}]
        if k == 1:
            recs.append({"instance": "g9", "status": "ok", "A": 1})  # an unscored instance
        files.append(write_json(tmp_path / "records" / f"model-{k}" / "maxcut" / "attempt-1.json", recs))
    return ref, files


def batch(ref, files, out_dir, *extra):
    args = ["solver-score", "--task", "maxcut-mqlib", "--reference", ref, "--output-dir", out_dir, *extra]
    for f in files:
        args += ["--records", f]
    return run(*args)


def test_many_records_files_one_output_each_equal_to_single_calls(tmp_path, pinned_time):
    ref, files = leaderboard(tmp_path)
    out_dir = tmp_path / "scores"
    result = batch(ref, files, out_dir)
    assert result.exit_code == 0, result.stderr
    written = sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file())
    # named after each records file, keeping the folders below the records' deepest common folder
    assert written == [f"model-{k}/maxcut/attempt-1.json" for k in range(3)]
    for k, rec in enumerate(files):
        single = tmp_path / f"single-{k}.json"
        one = run("solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", ref, "--output", single)
        assert one.exit_code == 0, one.stderr
        # equal but for how each was made (issue 16: provenance records the command and its arguments)
        batch_doc, single_doc = (json.loads(p.read_text()) for p in (out_dir / f"model-{k}" / "maxcut" / "attempt-1.json",
                                                                      single))
        assert batch_doc["provenance"].pop("command") == single_doc["provenance"].pop("command")
        assert batch_doc["provenance"].pop("arguments") != single_doc["provenance"].pop("arguments")
        assert batch_doc == single_doc
        data = json.loads(single.read_text())
        # every number of each output is in the terminal output, with the unscored instance names
        assert fmt(data["relative_score"]) in result.stdout  # rounded for reading (4 significant digits)
        line = next(x for x in result.stdout.splitlines() if x.startswith(str(rec)))
        assert line.split()[1:4] == [fmt(data["relative_score"]), str(data["scored_instance_count"]),
                                     str(len(data["unscored_instances"]))]
        rec = data["intervals"]["relative_score"]  # issue 16: the interval beside it (none below 3 instances)
        if rec["ci95"]:
            assert line.endswith(f"[{fmt(rec['ci95'][0])}, {fmt(rec['ci95'][1])}] {rec['ci_method']}")
        else:
            assert rec["ci_reason"].split(":")[0] in line
    assert f"{files[1]}: unscored_instances g9" in result.stdout
    assert "paper-k3-fixed-260925" in result.stdout
    assert json.loads(single.read_text())["reference_sha256"] in result.stdout


def test_a_single_records_file_into_an_output_dir(tmp_path):
    ref, files = leaderboard(tmp_path, n_models=1)
    result = batch(ref, files, tmp_path / "scores")
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in (tmp_path / "scores").iterdir()] == ["attempt-1.json"]


def test_the_reference_is_loaded_once_for_many_records_files(tmp_path, monkeypatch):
    from benchscore.tcsexam import commands

    calls = []
    real = commands.load_reference
    monkeypatch.setattr(commands, "load_reference", lambda path: calls.append(path) or real(path))
    ref, files = leaderboard(tmp_path, n_models=4)
    assert batch(ref, files, tmp_path / "scores").exit_code == 0
    assert len(calls) == 1


@pytest.mark.parametrize("bad", [
    [{"instance": "g1", "status": "ok", "A": 12}],  # g2 has no record
    [{"instance": "g1", "status": "infra_error"}, {"instance": "g2", "status": "timeout"}],
    "not json",
])
def test_one_bad_records_file_refuses_the_whole_call_and_writes_nothing(tmp_path, bad):
    ref, files = leaderboard(tmp_path)
    if isinstance(bad, str):
        files[2].write_text(bad)
    else:
        write_json(files[2], bad)
    out_dir = tmp_path / "scores"
    result = batch(ref, files, out_dir)
    assert_one_line_error(result, "model-2")
    assert not out_dir.exists()


def test_an_existing_output_dir_keeps_its_files_when_the_call_is_refused(tmp_path):
    ref, files = leaderboard(tmp_path)
    out_dir = tmp_path / "scores"
    assert batch(ref, files, out_dir).exit_code == 0
    before = {p: p.read_bytes() for p in out_dir.rglob("*")if p.is_file()}
    write_json(files[0], [{"instance": "g1", "status": "missing"}])
    assert_one_line_error(batch(ref, files, out_dir), "model-0")
    assert {p: p.read_bytes() for p in out_dir.rglob("*") if p.is_file()} == before
    assert not [p for p in out_dir.rglob("*") if p.name.endswith(".tmp")]


def test_batch_usage_errors_are_one_line(tmp_path):
    ref, files = leaderboard(tmp_path)
    base = ["solver-score", "--task", "maxcut-mqlib", "--reference", ref]
    two = ["--records", files[0], "--records", files[1]]
    assert_one_line_error(run(*base, *two, "--output", tmp_path / "o.json"), "--output-dir")
    assert_one_line_error(run(*base, "--records", files[0]), "--output")
    assert_one_line_error(
        run(*base, "--records", files[0], "--output", tmp_path / "o.json", "--output-dir", tmp_path / "d"),
        "--output-dir",
    )
    assert_one_line_error(batch(ref, [files[0], files[0]], tmp_path / "d"), "given twice")
    assert not (tmp_path / "o.json").exists() and not (tmp_path / "d").exists()


def test_a_batch_output_that_would_replace_an_input_is_refused(tmp_path):
    ref, files = leaderboard(tmp_path, n_models=2)
    before = {f: f.read_bytes() for f in files}
    # outputs keep the records' paths below their common folder: records/ as --output-dir hits them
    assert_one_line_error(batch(ref, files, tmp_path / "records"), "is also an input")
    assert {f: f.read_bytes() for f in files} == before
    # a reference given by path among the outputs
    ref_here = write_json(tmp_path / "d" / "model-0" / "maxcut" / "attempt-1.json", ISSUE_REFERENCE)
    ref_before = ref_here.read_bytes()
    assert_one_line_error(batch(ref_here, files, tmp_path / "d"), "is also an input")
    assert ref_here.read_bytes() == ref_before
    assert not (tmp_path / "d" / "model-1").exists()


def test_an_output_that_is_the_reference_named_from_the_data_folder_is_refused(tmp_path):
    # the common checks cover a path given as a name (no domain check needed)
    data = tmp_path / "data"
    ref = write_json(data / "references" / "lite.json", ISSUE_REFERENCE)
    before = ref.read_bytes()
    _, rec = seed_files(tmp_path)
    result = run("solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", "lite",
                 "--data-dir", data, "--output", ref)
    assert_one_line_error(result, "inputs are never modified")
    assert ref.read_bytes() == before
    # a reference given by path is a plain string option: no command replaces a file it did not write, and with
    # --force the domain refuses it as the --output
    ref2 = write_json(tmp_path / "ref2.json", ISSUE_REFERENCE)
    result = run("solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", ref2, "--output", ref2)
    assert_one_line_error(result, "holds a file benchscore did not write")
    result = run("solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", ref2, "--output", ref2,
                 "--force")
    assert_one_line_error(result, "--output is also an input")
    assert ref2.read_bytes() == before


def test_ctrl_c_during_a_batch_exits_130_and_writes_nothing(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    ref, files = leaderboard(tmp_path)
    out_dir = tmp_path / "scores"
    args = ["solver-score", "--task", "maxcut-mqlib", "--reference", str(ref), "--output-dir", str(out_dir)]
    for f in files:
        args += ["--records", str(f)]
    # the command runs with the common reader blocking in its read of the reference (a FIFO did this
    # before; inputs that are not regular files are refused now), so it is certainly running
    blocking = ("import os, time\nfrom benchscore.common import readers\nreal = readers._read_at_most\n"
                "def blocked(fd, size, cap):\n"
                "    if os.path.samestat(os.fstat(fd), os.stat(os.environ['BLOCK'])):\n"
                "        open(os.environ['BLOCK'] + '.reading', 'w').close()\n        time.sleep(3600)\n"
                "    return real(fd, size, cap)\nreaders._read_at_most = blocked\n"
                "from benchscore.tcsexam.cli import main\nmain()\n")
    proc = subprocess.Popen([sys.executable, "-c", blocking, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=dict(os.environ, BLOCK=str(ref)))
    try:
        deadline = time.monotonic() + 60
        while not Path(f"{ref}.reading").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.splitlines() == ["error: interrupted (Ctrl-C); nothing was written"]
    assert not out_dir.exists()


def test_a_write_failure_in_a_batch_moves_no_output_into_place(tmp_path):
    ref, files = leaderboard(tmp_path)
    out_dir = tmp_path / "scores"
    out_dir.mkdir()
    (out_dir / "model-1").write_text("a file where a folder is needed")
    result = batch(ref, files, out_dir)
    assert_one_line_error(result, "cannot write")
    assert sorted(p.name for p in out_dir.rglob("*") if p.is_file()) == ["model-1"]
