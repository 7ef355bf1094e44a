"""`benchscore compare` on inspect_ai logs written by real inspect_ai runs (docs/results.md).

``inspect/run_plan.py`` runs a quiz of eight samples (four topics, two samples each) x 3 epochs for
real with the offline ``mockllm`` provider, once per "model" of controlled accuracy (which epochs of
which sample answer wrongly or error is set by the plan). Every number below is worked out by hand
from the plan, under each errors policy, and the reductions are checked against those inspect_ai
itself wrote into the log.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

pytestmark = [pytest.mark.inspect, pytest.mark.usefixtures("inspect_ai_installed")]

RUNNER = Path(__file__).resolve().parent / "inspect" / "run_plan.py"
TOPICS = ["algebra", "algebra", "geometry", "geometry", "logic", "logic", "history", "history"]
SAMPLES = [{"id": f"s{i}", "input": f"Question {i}: what is {i} squared?", "target": str(i * i),
            "topic": TOPICS[i - 1]} for i in range(1, 9)]
MODELS = {
    # s2 errors in one epoch; s7 is wrong in one
    "strong": {"wrong": {"s7": 1}, "errors": {"s2": 1}},
    # no error: wrong on every epoch of s3 and s7, on two of s4
    "middle": {"wrong": {"s3": 3, "s4": 2, "s7": 3}},
    # s1 errors in every epoch; wrong on s3, s4, s7, s8 always, on s5 once
    "weak": {"wrong": {"s3": 3, "s4": 3, "s5": 1, "s7": 3, "s8": 3}, "errors": {"s1": 3}},
}
PLANS = [
    {"task": "quiz", "epochs": 3, "samples": SAMPLES, "models": MODELS},
    {"task": "quiz", "epochs": 3, "reducer": "at_least_2", "samples": SAMPLES,
     "models": {k: MODELS[k] for k in ("strong", "middle")}},
    # one target changed: another dataset
    {"task": "quiz", "epochs": 3, "samples": [dict(s, target="changed") if s["id"] == "s5" else s for s in SAMPLES],
     "models": {"other": {}}},
    # an error stops the run: the log's status is 'error'
    {"task": "quiz", "epochs": 3, "samples": SAMPLES, "fail_on_error": True, "models": {"broken": {"errors": {"s1": 1}}}},
]

# per sample, the match value of each epoch, worked out from MODELS (None: the epoch errored)
OUTCOMES = {
    "strong": {"s2": [None, 1, 1], "s7": [0, 1, 1]},
    "middle": {"s3": [0, 0, 0], "s4": [0, 0, 1], "s7": [0, 0, 0]},
    "weak": {"s1": [None, None, None], "s3": [0, 0, 0], "s4": [0, 0, 0], "s5": [0, 1, 1], "s7": [0, 0, 0],
             "s8": [0, 0, 0]},
}


def epochs_of(model: str, sid: str) -> list[int | None]:
    return OUTCOMES[model].get(sid, [1, 1, 1])


def as_wrong(model: str, sid: str) -> float:
    return sum(v or 0 for v in epochs_of(model, sid)) / 3


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("results-inspect")
    (root / "plans.json").write_text(json.dumps(PLANS))
    env = dict(os.environ, INSPECT_LOG_LEVEL="error", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(RUNNER), str(root / "plans.json"), str(root / "logs")],
                          capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {"main": root / "logs" / "0", "at_least_2": root / "logs" / "1", "changed": root / "logs" / "2",
            "error": root / "logs" / "3"}


def log_of(folder: Path, model: str) -> Path:
    from inspect_ai.log import read_eval_log

    found = [p for p in sorted(folder.glob("*.eval")) if read_eval_log(str(p), header_only=True).eval.model ==
             f"mockllm/{model}"]
    assert len(found) == 1, (folder, model)
    return found[0]


def compare(*args) -> tuple[int, str, dict | None]:
    out = None
    res = CliRunner().invoke(cli, ["compare", *map(str, args)])
    for a, b in zip(args, args[1:], strict=False):
        if a == "--output" and Path(b).exists():
            out = orjson.loads(Path(b).read_bytes())
    return res.exit_code, res.output, out


def metric(doc: dict, a: str, b: str, name: str) -> dict:
    pair = next(c for c in doc["comparisons"] if {c["a"], c["b"]} == {f"mockllm/{a}", f"mockllm/{b}"})
    row = next(m for m in pair["metrics"] if m["name"] == name)
    if pair["a"] != f"mockllm/{a}":  # orient as asked
        row = dict(row, a=row["b"], b=row["a"], difference=-row["difference"],
                   counts={"a": row["counts"]["b"], "b": row["counts"]["a"]},
                   items_that_differ_most=[dict(r, a=r["b"], b=r["a"]) for r in row["items_that_differ_most"]])
    return row


def test_a_folder_of_logs_is_compared_sample_by_sample_with_errors_counted_as_wrong(tmp_path, logs):
    code, text, doc = compare(logs["main"], "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, text
    assert doc["kind"] == "inspect_ai results"
    assert sorted(doc["results"]) == ["mockllm/middle", "mockllm/strong", "mockllm/weak"]
    assert doc["same"]["epoch reducers"] == {"quiz/match": "mean", "quiz/graded/right": "mean"}
    assert doc["same"]["errors"] == "as-wrong" and doc["same"]["unit"] == "sample"
    assert doc["same"]["tasks"] == {"quiz": {"task args": {}, "epochs": 3}}
    # the dict scorer's 'length' (values outside [0, 1]) has no wrong value for an errored sample
    assert "quiz/graded/length" in doc["not_compared"] and "outside [0, 1]" in doc["not_compared"]["quiz/graded/length"]
    ids = [s["id"] for s in SAMPLES]
    mean = {m: sum(as_wrong(m, i) for i in ids) / 8 for m in MODELS}
    assert mean["strong"] == pytest.approx(22 / 24) and mean["middle"] == pytest.approx(16 / 24)
    assert mean["weak"] == pytest.approx(8 / 24)
    for name in ("quiz/match", "quiz/graded/right"):  # a boolean value reads as C / I does
        row = metric(doc, "strong", "weak", name)
        assert row["a"] == pytest.approx(mean["strong"]) and row["b"] == pytest.approx(mean["weak"])
        assert row["difference"] == pytest.approx(mean["strong"] - mean["weak"])
        assert row["n_items"] == 8 and row["n_units"] == 8
        assert row["counts"]["a"] == {"samples": 8, "sample_epochs": 24, "scored": 23, "errored": 1, "unscored": 0,
                                      "missing": 0, "limited": 0, "retried": 0, "edited": 0, "undefined": 0,
                                      "excluded": 0, "errors": "as-wrong", "retries": "last-attempt",
                                      "status": "success"}
        assert row["counts"]["b"]["scored"] == 21 and row["counts"]["b"]["errored"] == 3
        differ = {r["item"]: (r["a"], r["b"]) for r in row["items_that_differ_most"]}
        for sid, (x, y) in differ.items():
            assert (x, y) == (pytest.approx(as_wrong("strong", sid)), pytest.approx(as_wrong("weak", sid)))
        assert set(differ) == {i for i in ids if as_wrong("strong", i) != as_wrong("weak", i)}
    board = doc["leaderboards"]["quiz/match"]
    assert [r["label"] for r in board] == ["mockllm/strong", "mockllm/middle", "mockllm/weak"]
    assert all(r["counts"]["errors"] == "as-wrong" for r in board)
    assert "23 scored, 1 errored, 0 unscored" in text  # beside the number in the terminal too


def test_inspect_ai_drops_the_errored_samples_benchscore_counts_them(logs):
    from inspect_ai.log import read_eval_log

    weak = read_eval_log(str(log_of(logs["main"], "weak")))
    (match,) = [s for s in weak.results.scores if s.name == "match"]
    # inspect_ai's accuracy leaves s1 (errored in every epoch) out of its denominator: 7 samples
    assert match.metrics["accuracy"].value == pytest.approx((1 + 0 + 0 + 2 / 3 + 1 + 0 + 0) / 7)
    # its reductions of the samples without errors are the ones benchscore computes
    middle = read_eval_log(str(log_of(logs["main"], "middle")))
    (red,) = [r for r in middle.reductions if r.scorer == "match"]
    assert {str(s.sample_id): s.value for s in red.samples} == pytest.approx(
        {s["id"]: as_wrong("middle", s["id"]) for s in SAMPLES})


def test_exclude_pair_drops_an_errored_sample_from_every_result(tmp_path, logs):
    code, text, doc = compare(logs["main"], "--errors", "exclude-pair", "--resamples", "200",
                              "--output", tmp_path / "c.json")
    assert code == 0, text
    kept = [s["id"] for s in SAMPLES if s["id"] not in ("s1", "s2")]  # s2 errored for strong, s1 for weak
    row = metric(doc, "strong", "middle", "quiz/match")
    assert row["n_items"] == 6
    assert row["a"] == pytest.approx(sum(as_wrong("strong", i) for i in kept) / 6)
    assert row["b"] == pytest.approx(sum(as_wrong("middle", i) for i in kept) / 6)
    assert row["counts"]["a"]["excluded"] == 2 and row["counts"]["a"]["scored"] == 18
    assert row["counts"]["b"]["excluded"] == 2 and row["counts"]["b"]["errored"] == 0
    # the length values are compared now: no errored sample is left to count as wrong
    length = metric(doc, "strong", "weak", "quiz/graded/length")
    assert length["a"] == pytest.approx(sum(len(SAMPLES[int(i[1:]) - 1]["target"]) for i in kept) / 6
                                        + (len("nonsense") - len("49")) / 3 / 6)
    assert "2 samples excluded" in text


def test_refuse_names_the_first_errored_sample(logs):
    code, text, _ = compare(logs["main"], "--errors", "refuse")
    assert code == 2
    assert text.count("\n") == 1 and "errored (" in text and "HTTP 503" in text and "--errors refuse" in text


def test_cluster_makes_a_metadata_field_the_unit(tmp_path, logs):
    code, text, doc = compare(log_of(logs["main"], "strong"), log_of(logs["main"], "middle"), "--cluster", "topic",
                              "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, text
    row = metric(doc, "strong", "middle", "quiz/match")
    assert row["n_items"] == 8 and row["n_units"] == 4
    assert doc["same"]["unit"] == "metadata field 'topic'"
    units = {r["item"]: r["unit"] for r in row["items_that_differ_most"]}
    assert units == {sid: TOPICS[int(sid[1:]) - 1] for sid in units}
    code, text, _ = compare(log_of(logs["main"], "strong"), log_of(logs["main"], "middle"), "--cluster", "nope")
    assert code == 2 and "metadata.nope" in text


def test_the_declared_reducer_reduces_the_epochs_and_is_named(tmp_path, logs):
    from inspect_ai.log import read_eval_log

    code, text, doc = compare(logs["at_least_2"], "--metric", "quiz/match", "--resamples", "200",
                              "--output", tmp_path / "c.json")
    assert code == 0, text
    assert doc["same"]["epoch reducers"] == {"quiz/match": "at_least_2"}

    def at_least_2(model: str, sid: str) -> float:
        return 1.0 if sum(v or 0 for v in epochs_of(model, sid)) >= 2 else 0.0

    row = metric(doc, "strong", "middle", "quiz/match")
    assert row["a"] == pytest.approx(sum(at_least_2("strong", s["id"]) for s in SAMPLES) / 8)  # s2: 2 of 3 right
    assert row["b"] == pytest.approx(sum(at_least_2("middle", s["id"]) for s in SAMPLES) / 8)
    assert row["test"] == "mcnemar_exact"  # every reduced value is 0 or 1
    middle = read_eval_log(str(log_of(logs["at_least_2"], "middle")))
    (red,) = [r for r in middle.reductions if r.scorer == "match"]
    assert red.reducer == "at_least_2"
    assert {str(s.sample_id): s.value for s in red.samples} == {s["id"]: at_least_2("middle", s["id"]) for s in SAMPLES}


def test_results_of_another_dataset_are_refused_naming_the_sample(tmp_path, logs):
    strong, other = log_of(logs["main"], "strong"), log_of(logs["changed"], "other")
    code, text, _ = compare(strong, other)
    assert code == 2 and text.count("\n") == 1
    assert "different datasets: sample 's5'" in text and "--intersection" in text
    code, text, doc = compare(strong, other, "--intersection", "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, text
    row = metric(doc, "strong", "other", "quiz/match")
    assert row["n_items"] == 7
    assert doc["intersection"]["quiz/match"]["dropped"] == {"mockllm/strong": ["s5"]}


def test_a_run_that_ended_in_error_is_not_final(tmp_path, logs):
    """Issue 35: a log whose status is not success makes the output not final (exit 1, written, marked beside
    every number), with --intersection as without it; the samples its run planned and never logged are
    missing, under --errors."""
    from inspect_ai.log import read_eval_log

    strong, broken = log_of(logs["main"], "strong"), log_of(logs["error"], "broken")
    held = len(read_eval_log(str(broken)).samples)
    assert held < 24  # the run stopped at the error
    for extra in ((), ("--intersection",)):
        out = tmp_path / f"c{len(extra)}.json"
        code, text, doc = compare(strong, broken, *extra, "--resamples", "200", "--output", out)
        assert code == 1, text
        row = metric(doc, "strong", "broken", "quiz/match")
        assert row["n_items"] == 8  # every planned sample, the unlogged ones missing (as-wrong: 0)
        counts = row["counts"]["b"]
        assert counts["status"] == "error" and "HTTP 503" in counts["status_error"]
        assert counts["sample_epochs"] == held and counts["missing"] == 24 - held
        assert "NOT FINAL: the run ended with status error" in text and "HTTP 503" in text
        assert "mockllm/broken: NOT FINAL" in text
    # the report's summary row of that comparison says so too, never "complete"
    from benchscore.common.html import Output
    from benchscore.publish.compare_figures import summary_rows

    (srow,) = summary_rows(Output(out, out.name, "", orjson.loads(out.read_bytes()), "compare"))
    assert srow.status == "not final" and srow.reason.startswith("NOT FINAL: mockllm/broken ended error")


def test_a_benchscore_output_and_a_log_are_refused_together(tmp_path, logs):
    out = tmp_path / "out.json"
    out.write_text('{"format": "x"}')
    code, text, _ = compare(out, log_of(logs["main"], "strong"))
    assert code == 2 and "results of one evaluation" in text


def _eval_set_of(folder: Path, logs: list[Path]) -> list[str]:
    """An eval-set folder as inspect_ai's eval_set leaves it: the logs and the manifest naming each task id."""
    from inspect_ai.log import read_eval_log

    folder.mkdir()
    ids = []
    for log in logs:
        shutil.copy2(log, folder / log.name)
        ids.append(read_eval_log(str(log), header_only=True).eval.task_id)
    (folder / "eval-set.json").write_text(json.dumps({"eval_set_id": "set-1", "tasks": [
        {"task_id": i, "name": "quiz", "model": "m"} for i in [*ids, "never-ran"]]}))  # a task with no log
    return ids


def test_an_eval_set_folder_gives_the_final_log_of_each_task_and_names_the_older(tmp_path, logs):
    import time

    main = sorted(logs["main"].glob("*.eval"))
    _eval_set_of(tmp_path / "set", main)
    older = tmp_path / "set" / "2000-01-01T00-00-00-00-00_quiz_older.eval"  # an earlier attempt of one task
    shutil.copyfile(log_of(logs["main"], "strong"), older)
    os.utime(older, (time.time() - 3600, time.time() - 3600))
    code, text, doc = compare(tmp_path / "set", "--resamples", "200", "--output", tmp_path / "set.json")
    assert code == 0, text
    assert "older logs of the task not read: 2000-01-01T00-00-00-00-00_quiz_older.eval" in text
    assert "eval set set-1: no log of task(s) never-ran" in text  # said, not silently dropped
    code, text, plain = compare(logs["main"], "--resamples", "200", "--output", tmp_path / "plain.json")
    assert code == 0, text
    assert doc["leaderboards"] == plain["leaderboards"]
    assert [c["metrics"] for c in doc["comparisons"]] == [c["metrics"] for c in plain["comparisons"]]


def test_logs_on_an_s3_compatible_server_are_compared_as_local_ones(tmp_path, logs, s3_server, monkeypatch):
    import boto3
    import fsspec.config

    url, env = s3_server
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
    client.create_bucket(Bucket="bucket")
    for log in sorted(logs["main"].glob("*.eval")):
        client.upload_file(str(log), "bucket", f"runs/{log.name}")
    fsspec.config.conf.clear()
    fsspec.config.set_conf_env(fsspec.config.conf)
    code, text, remote = compare("s3://bucket/runs/", "--resamples", "200", "--output", tmp_path / "r.json")
    assert code == 0, text
    code, text, local = compare(logs["main"], "--resamples", "200", "--output", tmp_path / "l.json")
    assert remote["leaderboards"] == local["leaderboards"]
    assert [c["metrics"] for c in remote["comparisons"]] == [c["metrics"] for c in local["comparisons"]]
    code, text, _ = compare("s3://bucket/runs/nope.eval")
    assert code == 2 and "s3://bucket/runs/nope.eval" in text and "not found" in text
