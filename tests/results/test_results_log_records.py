"""The results room counts everything a log records (issue 35, point 4), on real runs of the real tools.

``inspect/run_plan.py`` runs the quiz for real with the offline ``mockllm`` provider (every output sets
``usage``), with what a log can record besides scores: samples inspect_ai retried after an error (a
solver that fails once, ``retry_on_error``), a custom epoch reducer (``Epochs(3, second_best())``), a
score edited after the run with inspect_ai's own ``edit_score`` (author and reason), an eval set whose
first attempt of a task ended in error and was retried, runs whose every sample errored, the
counting reducers (``mode``, ``majority``), and a run stopped by an error (status ``error``). Every Eval
Ever instance records written here follow the upstream schema (the reader validates them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

pytestmark = [pytest.mark.inspect, pytest.mark.usefixtures("inspect_ai_installed")]

RUNNER = Path(__file__).resolve().parent / "inspect" / "run_plan.py"
ENV = {"SOURCE_DATE_EPOCH": "1767225600"}
TOPICS = ["algebra", "algebra", "geometry", "geometry", "logic", "logic", "history", "history"]
SAMPLES = [{"id": f"s{i}", "input": f"Question {i}: what is {i} squared?", "target": str(i * i),
            "topic": TOPICS[i - 1]} for i in range(1, 9)]
DEAD = {s["id"]: 9 for s in SAMPLES}  # every call of every sample errors
EDIT = {"model": "edited", "sample": "s3", "epoch": 1, "scorer": "match", "value": "I", "author": "alice",
        "reason": "the answer key was wrong"}
PLANS = {
    # the solver fails the first attempt of s2 and s5 (each epoch) for 'retrying'; inspect_ai retries them
    "retried": {"task": "quiz", "epochs": 2, "samples": SAMPLES, "retry_on_error": 1,
                "solver_fails_once": {"retrying": ["s2", "s5"]},
                "models": {"retrying": {"wrong": {"s7": 2}}, "plain": {"wrong": {"s7": 1}}}},
    "second_best": {"task": "quiz", "epochs": 3, "reducer": "second_best", "samples": SAMPLES,
                    "models": {"a": {}, "b": {"wrong": {"s3": 1}}}},
    "edited": {"task": "quiz", "epochs": 1, "samples": SAMPLES, "models": {"run": {}, "edited": {}}, "edits": [EDIT]},
    # flaky's first call of s4 errors and fail_on_error stops its first attempt; the eval set retries it
    "eval_set": {"task": "quiz", "epochs": 1, "samples": SAMPLES, "eval_set": 2, "fail_on_error": True,
                 "models": {"flaky": {"errors": {"s4": 1}}, "steady": {"wrong": {"s1": 1}}}},
    "dead": {"task": "quiz", "epochs": 2, "samples": SAMPLES,
             "models": {"alive": {"wrong": {"s1": 1}}, "dead": {"errors": DEAD}, "dead2": {"errors": DEAD}}},
    "counting": {"task": "quiz", "epochs": 4, "reducer": ["mode", "majority"], "samples": SAMPLES,
                 "models": {"x": {"wrong": {"s1": 2, "s2": 1, "s3": 3, "s4": 2}}, "y": {"wrong": {"s5": 2, "s6": 4}}}},
    # fail_on_error stops the run at s3's error: status error, the samples not yet run are not in the log
    "stopped": {"task": "quiz", "epochs": 2, "samples": SAMPLES, "fail_on_error": True,
                "models": {"broken": {"errors": {"s3": 1}}}},
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("log-records")
    (root / "plans.json").write_text(json.dumps(list(PLANS.values())))
    env = dict(os.environ, INSPECT_LOG_LEVEL="error", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(RUNNER), str(root / "plans.json"), str(root / "logs")],
                          capture_output=True, text=True, env=env, timeout=900, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {name: root / "logs" / str(k) for k, name in enumerate(PLANS)}


def log_of(folder: Path, model: str) -> Path:
    from inspect_ai.log import read_eval_log

    found = [p for p in sorted(folder.glob("*.eval")) if read_eval_log(str(p), header_only=True).eval.model ==
             f"mockllm/{model}"]
    assert len(found) == 1, (folder, model)
    return found[0]


def run(command: str, *args) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, [command, *map(str, args)], env=ENV)
    return res.exit_code, res.stdout, res.stderr


def refused(code: int, out: str, err: str, *fragments: str) -> str:
    """Exit 2, one line on stderr, no traceback."""
    assert code == 2, out + err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out + err, err
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def row_of(doc: dict, a: str, b: str, name: str) -> dict:
    pair = next(c for c in doc["comparisons"] if {c["a"], c["b"]} == {f"mockllm/{a}", f"mockllm/{b}"})
    row = next(m for m in pair["metrics"] if m["name"] == name)
    if pair["a"] != f"mockllm/{a}":
        row = dict(row, a=row["b"], b=row["a"], counts={"a": row["counts"]["b"], "b": row["counts"]["a"]})
    return row


def board_rows(site: Path, name: str) -> dict[str, dict]:
    doc = orjson.loads((site / "leaderboard.json").read_bytes())
    board = next(b for b in doc["metrics"] if b["name"] == name)
    return {r["label"].split("/")[1]: r for r in board["rows"]}


# --------------------------------------------------------------------------- retried samples


def test_retried_samples_are_counted_beside_every_number_with_the_policy_named(logs, tmp_path):
    from inspect_ai.log import read_eval_log

    retrying = read_eval_log(str(log_of(logs["retried"], "retrying")))
    assert sorted((str(s.id), s.epoch) for s in retrying.samples if s.error_retries) == [
        ("s2", 1), ("s2", 2), ("s5", 1), ("s5", 2)]  # what inspect_ai recorded
    code, out, err = run("compare", logs["retried"], "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, out + err
    doc = orjson.loads((tmp_path / "c.json").read_bytes())
    row = row_of(doc, "retrying", "plain", "quiz/match")
    # the last attempt stands (inspect_ai's rule): s2 and s5 right, s7 wrong twice; plain: s7 wrong once
    assert (row["a"], row["b"]) == (pytest.approx(7 / 8), pytest.approx(7.5 / 8))
    assert (row["counts"]["a"]["retried"], row["counts"]["a"]["retries"], row["counts"]["a"]["scored"]) == (
        4, "last-attempt", 16)
    assert row["counts"]["b"]["retried"] == 0
    assert "4 retried: the last attempt stands (inspect_ai's rule)" in out  # beside the number in the terminal
    # --retries first-attempt: each retried sample x epoch counts as its first attempt ended, errored (as-wrong: 0)
    code, out, err = run("compare", logs["retried"], "--retries", "first-attempt", "--resamples", "200",
                         "--output", tmp_path / "f.json")
    assert code == 0, out + err
    row = row_of(orjson.loads((tmp_path / "f.json").read_bytes()), "retrying", "plain", "quiz/match")
    assert row["a"] == pytest.approx(5 / 8)
    assert (row["counts"]["a"]["errored"], row["counts"]["a"]["scored"], row["counts"]["a"]["retries"]) == (
        4, 12, "first-attempt")
    assert "4 retried: counted as their first attempt ended: errored (--retries first-attempt)" in out
    # the leaderboard: its JSON, its page (compare's counts text) and its terminal
    code, out, err = run("leaderboard", logs["retried"], "--output-dir", tmp_path / "site", "--resamples", "200",
                         "--metric", "quiz/match")
    assert code == 0, out + err
    rows = board_rows(tmp_path / "site", "quiz/match")
    assert rows["retrying"]["counts"]["retried"] == 4 and rows["retrying"]["counts"]["retries"] == "last-attempt"
    page = (tmp_path / "site" / "index.html").read_text()
    assert "4 retried: the last attempt stands (inspect_ai&#x27;s rule)" in page or \
        "4 retried: the last attempt stands (inspect_ai's rule)" in page
    assert "4 retried: the last attempt stands" in out


# --------------------------------------------------------------------------- score edits


def test_a_score_edited_after_the_run_is_refused_unless_accepted(logs, tmp_path):
    from inspect_ai.log import read_eval_log

    edited = log_of(logs["edited"], "edited")
    (match,) = [s for s in read_eval_log(str(edited), header_only=True).results.scores if s.name == "match"]
    assert match.metrics["accuracy"].value == pytest.approx(7 / 8)  # inspect_ai recomputed its metric on the edit
    out_file = tmp_path / "c.json"
    refused(*run("compare", logs["edited"], "--output", out_file), "sample 's3' epoch 1", "score 'match'",
            "by alice", "(the answer key was wrong)", "'C' -> 'I'", "--accept-score-edits", edited.name)
    assert not out_file.exists()
    # a metric the edit does not touch is compared without it
    code, out, err = run("compare", logs["edited"], "--metric", "quiz/graded/right", "--resamples", "200")
    assert code == 0, out + err
    code, out, err = run("compare", logs["edited"], "--accept-score-edits", "--resamples", "200", "--output", out_file)
    assert code == 0, out + err
    row = row_of(orjson.loads(out_file.read_bytes()), "edited", "run", "quiz/match")
    assert (row["a"], row["b"]) == (pytest.approx(7 / 8), 1.0)  # the edited value counts
    ((edit,),) = [row["counts"]["a"]["score_edits"]]
    assert row["counts"]["a"]["edited"] == 1 and "score_edits" not in row["counts"]["b"]
    assert {k: edit[k] for k in ("sample", "epoch", "scorer", "author", "reason", "original", "value")} == {
        "sample": "s3", "epoch": 1, "scorer": "match", "author": "alice", "reason": "the answer key was wrong",
        "original": "C", "value": "I"}
    assert edit["timestamp"]
    said = "1 edited after the run, accepted (--accept-score-edits): sample s3 epoch 1 match by alice " \
           "(the answer key was wrong): 'C' -> 'I'"
    assert said in out
    code, out, err = run("leaderboard", logs["edited"], "--accept-score-edits", "--output-dir", tmp_path / "site",
                         "--resamples", "200", "--metric", "quiz/match")
    assert code == 0, out + err
    assert board_rows(tmp_path / "site", "quiz/match")["edited"]["counts"]["score_edits"][0]["author"] == "alice"
    page = (tmp_path / "site" / "index.html").read_text()
    assert "by alice (the answer key was wrong)" in page and said in out
    refused(*run("leaderboard", logs["edited"], "--output-dir", tmp_path / "site2"), "by alice", "epoch 1")
    assert not (tmp_path / "site2").exists()


# --------------------------------------------------------------------------- epoch reducers


def test_a_custom_epoch_reducer_is_refused_naming_it_and_the_option(logs, tmp_path):
    for command, extra in (("compare", ()), ("leaderboard", ("--output-dir", tmp_path / "site"))):
        refused(*run(command, logs["second_best"], *extra), "epoch reducer 'second_best'",
                "not one inspect_ai ships", "--reducer mean")
    code, out, err = run("compare", logs["second_best"], "--reducer", "mean", "--resamples", "200",
                         "--output", tmp_path / "c.json")
    assert code == 0, out + err
    doc = orjson.loads((tmp_path / "c.json").read_bytes())
    assert set(doc["same"]["epoch reducers"].values()) == {"mean"}
    row = row_of(doc, "a", "b", "quiz/match")
    assert (row["a"], row["b"]) == (1.0, pytest.approx((7 + 2 / 3) / 8))
    assert "reduced with mean (--reducer), not with second_best that the task declares" in out
    refused(*run("compare", logs["second_best"], "--reducer", "collect"), "--reducer 'collect'",
            "no number per sample")
    refused(*run("compare", logs["second_best"], "--reducer", "second_best"), "--reducer 'second_best'")


def test_the_counting_reducers_reduce_as_inspect_ai_reduces(logs):
    """mode and majority count the values as the scorer wrote them; each sample's value equals the one
    inspect_ai wrote in the log's reductions (majority without a strict majority: inspect_ai's NaN, which
    the errors policy counts: as-wrong 0, said in ``undefined``; exclude-pair leaves the sample out)."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    from benchscore.results.comparison import Options, entries
    from benchscore.results.reading import read

    to_float = value_to_float()  # what inspect_ai's metrics read a reduced value as ('C' -> 1)
    theirs = {}
    for model in ("x", "y"):
        log = read_eval_log(str(log_of(logs["counting"], model)))
        for red in log.reductions:
            if red.scorer == "match":
                theirs[(f"mockllm/{model}", red.reducer)] = {str(s.sample_id): to_float(s.value) for s in red.samples}
    for errors in ("as-wrong", "exclude-pair"):
        got, _ = entries(read([logs["counting"]]), Options(errors=errors))
        undefined = 0
        for entry in got:
            for m in entry.metrics:
                if not m.name.startswith("quiz/match@"):
                    continue
                reducer = m.name.split("@")[1]
                want = theirs[(entry.label, reducer)]
                for sid, value in want.items():
                    if value != value:  # no strict majority
                        undefined += 1
                        assert sid not in m.items if errors == "exclude-pair" else m.items[sid] == (0.0, 1.0)
                    elif sid in m.items:
                        assert m.items[sid] == (value, 1.0), (entry.label, reducer, sid)
                if errors == "as-wrong":
                    assert m.counts["undefined"] == sum(v != v for v in want.values())
        assert undefined >= 2  # x: s1 and s4 split 2-2 (no majority), and the mode's tie is decided as inspect_ai does


# --------------------------------------------------------------------------- eval sets


def test_an_eval_set_copied_without_its_file_times_gives_the_same_answer(logs, tmp_path):
    from inspect_ai.log import read_eval_log

    folder = logs["eval_set"]
    attempts = sorted(folder.glob("*.eval"))
    status = {p.name: read_eval_log(str(p), header_only=True).status for p in attempts}
    assert sorted(status.values()) == ["error", "success", "success"]  # flaky's failed attempt and its retry
    failed = next(p for p in attempts if status[p.name] == "error")
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy, copy_function=shutil.copyfile)  # cp -r: file times not kept
    os.utime(copy / failed.name, (time.time() + 3600, time.time() + 3600))  # the failed attempt now looks newest
    docs = []
    for where in (folder, copy):
        out = tmp_path / f"{where.name}.json"
        code, text, err = run("compare", where, "--resamples", "200", "--output", out)
        assert code == 0, text + err
        assert f"older logs of the task not read: {failed.name}" in text
        docs.append(orjson.loads(out.read_bytes()))
    assert docs[0]["comparisons"] == docs[1]["comparisons"]
    row = row_of(docs[1], "flaky", "steady", "quiz/match")
    assert row["counts"]["a"]["status"] == "success" and row["a"] == 1.0


def test_the_attempt_order_is_what_the_logs_record():
    from benchscore.sources.inspect_logs import attempt_order

    first = {"eval": {"created": "2026-01-01T10:00:00+00:00"}, "stats": {"completed_at": "2026-01-01T10:05:00Z"}}
    retry = {"eval": {"created": "2026-01-01T06:00:01-04:00"}}  # 10:00:01 UTC: created after, in another offset
    assert attempt_order(retry) > attempt_order(first)
    same = {"eval": {"created": "2026-01-01T10:00:00"}, "stats": {"completed_at": "2026-01-01T10:06:00+00:00"}}
    assert attempt_order(same) > attempt_order(first)  # created alike: the later finished
    assert attempt_order({}) < attempt_order(first)  # a log that records no time sorts first


# --------------------------------------------------------------------------- unfinished runs


def test_a_run_that_did_not_finish_makes_compare_and_the_leaderboard_not_final(logs, tmp_path):
    plain, broken = log_of(logs["retried"], "plain"), log_of(logs["stopped"], "broken")
    for extra in ((), ("--intersection",)):
        code, out, err = run("compare", plain, broken, *extra, "--resamples", "200", "--output", tmp_path / "c.json")
        assert code == 1, out + err
        row = row_of(orjson.loads((tmp_path / "c.json").read_bytes()), "plain", "broken", "quiz/match")
        assert row["counts"]["b"]["status"] == "error" and row["counts"]["b"]["missing"] > 0
        assert "mockllm/broken: NOT FINAL: the run ended with status error" in out
        site = tmp_path / f"site{len(extra)}"
        code, out, err = run("leaderboard", plain, broken, *extra, "--output-dir", site, "--resamples", "200",
                             "--metric", "quiz/match")
        assert code == 1, out + err
        assert board_rows(site, "quiz/match")["broken"]["counts"]["status"] == "error"
        page = (site / "index.html").read_text()
        assert "NOT FINAL: the run ended with status error" in page and "HTTP 503" in page


# --------------------------------------------------------------------------- no usable sample


def test_a_result_with_no_usable_sample_says_so_in_words(logs, tmp_path):
    alive, dead, dead2 = (log_of(logs["dead"], m) for m in ("alive", "dead", "dead2"))
    words = "every one of its 16 sample x epochs of task 'quiz' errored"
    code, out, err = run("compare", alive, dead, "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, out + err
    row = row_of(orjson.loads((tmp_path / "c.json").read_bytes()), "alive", "dead", "quiz/match")
    assert row["b"] == 0.0 and (row["counts"]["b"]["scored"], row["counts"]["b"]["errored"]) == (0, 16)
    assert f"mockllm/dead: {words}: counted under --errors as-wrong" in out
    assert "0 scored, 16 errored, 0 unscored (sample x epochs; errors as-wrong); no sample x epoch has a score" in out
    refused(*run("compare", alive, dead, "--errors", "exclude-pair"), "no sample left", f"mockllm/dead: {words}")
    line = refused(*run("compare", dead, dead2), "no result has a metric to compare")
    assert f"mockllm/dead ({dead.name}): {words}" in line and f"mockllm/dead2 ({dead2.name}): {words}" in line
    line = refused(*run("compare", dead, dead2, "--metric", "quiz/match"), "--metric 'quiz/match': no such metric")
    assert words in line


# --------------------------------------------------------------------------- Every Eval Ever


def eee_records(folder: Path, scores: dict[str, list[int]], lacking: dict[str, tuple[str, int]]) -> list[Path]:
    """Instance records of the upstream schema (0.3.0), two epochs per sample (``metadata.epoch``, as the
    inspect_ai converter writes it): ``lacking[model]`` is a (sample, epoch) with no record."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for model, values in scores.items():
        lines = []
        for i, v in enumerate(values, 1):
            sid = f"s{i:02d}"
            for epoch in (1, 2):
                if lacking.get(model) == (sid, epoch):
                    continue
                lines.append(json.dumps({
                    "schema_version": "0.3.0", "evaluation_id": f"quiz/{model}", "model_id": f"org/{model}",
                    "evaluation_name": "quiz", "sample_id": sid,
                    "sample_hash": hashlib.sha256(sid.encode()).hexdigest(), "interaction_type": "single_turn",
                    "input": {"raw": f"question {i}", "reference": [str(i)]}, "output": {"raw": [str(i)]},
                    "answer_attribution": [], "evaluation": {"score": float(v), "is_correct": bool(v)},
                    "metadata": {"epoch": str(epoch)}}))
        paths.append(folder / f"{model}_samples.jsonl")
        paths[-1].write_text("\n".join(lines) + "\n")
    return paths


def test_every_eval_ever_a_missing_sample_epoch_is_missing_under_errors(tmp_path):
    from benchscore.sources.every_eval_ever import read_instances

    scores = {"alpha": [1] * 16 + [0] * 4, "beta": [1] * 10 + [0] * 10, "gamma": [1] * 13 + [0] * 7}
    paths = eee_records(tmp_path, scores, {"gamma": ("s09", 2)})
    assert [len(read_instances(p)) for p in paths] == [40, 40, 39]  # valid under the schema
    metric = "quiz/score"
    code, out, err = run("compare", *paths, "--metric", metric, "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, out + err
    doc = orjson.loads((tmp_path / "c.json").read_bytes())
    gamma = next(r for r in doc["leaderboards"][metric] if r["label"] == "org/gamma")
    # s09: epoch 1 right, epoch 2 missing: as-wrong makes it (1 + 0) / 2; the mean of what is there would be 1
    assert gamma["value"] == pytest.approx((12 + 0.5) / 20) and gamma["counts"]["missing"] == 1
    assert "1 missing" in out
    code, out, err = run("compare", *paths, "--metric", metric, "--errors", "exclude-pair", "--resamples", "200",
                         "--output", tmp_path / "x.json")
    assert code == 0, out + err
    doc = orjson.loads((tmp_path / "x.json").read_bytes())
    assert {m["n_items"] for c in doc["comparisons"] for m in c["metrics"]} == {19}
    gamma = next(r for r in doc["leaderboards"][metric] if r["label"] == "org/gamma")
    assert gamma["value"] == pytest.approx(12 / 19) and gamma["counts"]["excluded"] == 1
    refused(*run("compare", *paths, "--metric", metric, "--errors", "refuse"), "sample 's09'",
            "has 1 of the 2 epochs")


# --------------------------------------------------------------------------- per-sample summaries (issue 37, point 2)


def _read_whole(monkeypatch) -> list:
    """The (id, epoch) of every sample the reader parses whole (``sample_record``), as it parses them."""
    from benchscore.sources import inspect_logs

    parsed: list = []
    real = inspect_logs.sample_record

    def counted(doc, source, raw=None):
        parsed.append((str(doc.get("id")), doc.get("epoch")))
        return real(doc, source, raw)

    monkeypatch.setattr(inspect_logs, "sample_record", counted)
    return parsed


def test_the_summaries_give_the_facts_the_samples_give_and_the_samples_are_parsed_only_where_needed(
        logs, monkeypatch):
    """Every log of every plan read from its per-sample summaries gives the facts the samples read whole give
    (retries, a score edit, errors, limits, metadata); a sample is parsed whole only where its summary falls
    short: the retried ones (their errors' messages) and the edited one (its edit history)."""
    from benchscore.results.inspect_adapter import sample_facts

    parsed = _read_whole(monkeypatch)
    edited = log_of(logs["edited"], "edited")
    retrying = log_of(logs["retried"], "retrying")
    seen = {"errors": 0, "retried": 0, "edits": 0}
    for folder in logs.values():
        for path in sorted(folder.rglob("*.eval")):
            parsed.clear()
            whole = list(sample_facts(path, summaries=False))
            assert len(parsed) == len(whole)  # the full read parses every sample
            parsed.clear()
            fast = list(sample_facts(path, summaries=True))
            assert fast == whole, path.name
            expected = {edited: [("s3", 1)], retrying: [("s2", 1), ("s2", 2), ("s5", 1), ("s5", 2)]}.get(path)
            assert expected is None or sorted(parsed) == expected, path.name
            # parsed whole: exactly the samples retried or edited
            assert sorted(parsed) == sorted((f.sample_id, f.epoch) for f in whole if f.retried_errors or f.edits)
            seen["errors"] += sum(f.error is not None for f in fast)
            seen["retried"] += sum(bool(f.retried_errors) for f in fast)
            seen["edits"] += sum(bool(f.edits) for f in fast)
    assert all(seen.values()), seen  # the logs hold every case


def test_a_summary_that_is_thinned_is_not_taken(tmp_path, logs):
    """A summary whose input or target may be cut, whose metadata text is not the sample's, or that says the
    sample was retried, gives no facts (the sample is read whole instead)."""
    import zipfile

    from benchscore.results.inspect_adapter import summary_facts
    from benchscore.sources.inspect_logs import _central_directory, _member_bytes

    path = log_of(logs["edited"], "run")
    with open(path, "rb") as fp:
        index = _central_directory(fp)
        summaries = orjson.loads(_member_bytes(fp, index["summaries.json"], str(path)))
        summary = next(s for s in summaries if s["id"] == "s1" and s["epoch"] == 1)
        data = _member_bytes(fp, index["samples/s1_epoch_1.json"], str(path))
    assert zipfile.is_zipfile(path)
    assert summary_facts(summary, data) is not None
    cut = "x" * 5120 + "...\n(content truncated)"
    for changed in ({"input": cut}, {"target": cut}, {"target": ["16", cut]}, {"retries": 1},
                    {"metadata": {"topic": "algebra and more"}},
                    {"input": [{"role": "user", "content": [{"type": "text", "text": "(Image)"}]}]},
                    {"input": "attachment://0123abcd"}, {"scores": {"match": {"answer": "1"}}}):
        assert summary_facts({**summary, **changed}, data) is None, changed
    # an edit's history in the sample's bytes
    assert summary_facts(summary, data.replace(b'"history":[]', b'"history":[{"value":"I"}]', 1)) is None


def test_jobs_and_summaries_give_the_output_of_one_process_reading_every_sample(logs, tmp_path, monkeypatch):
    """compare and leaderboard with --jobs 3 (logs read side by side, from their summaries) write byte for byte
    what --jobs 1 reading every sample whole writes: retries, a score edit, errors, eval sets, counting reducers."""
    from benchscore.results import inspect_adapter

    cases = [(logs["retried"],), (logs["edited"], "--accept-score-edits"), (logs["dead"],), (logs["counting"],),
             (logs["eval_set"],), (logs["second_best"], "--reducer", "mean")]
    for k, case in enumerate(cases):
        outs = []
        for jobs, summaries in (("1", False), ("3", True)):
            monkeypatch.setattr(inspect_adapter, "USE_SUMMARIES", summaries)
            out_file = tmp_path / f"c{k}-{jobs}" / "c.json"
            out_file.parent.mkdir()
            code, out, err = run("compare", *case, "--resamples", "200", "--jobs", jobs, "--output", out_file)
            assert code in (0, 1), out + err
            outs.append((code, out.replace(str(out_file.parent), "OUT"), out_file.read_bytes()))
        assert outs[0] == outs[1], case
    sites = []
    for jobs, summaries in (("1", False), ("2", True)):
        monkeypatch.setattr(inspect_adapter, "USE_SUMMARIES", summaries)
        site = tmp_path / f"site-{jobs}"
        code, out, err = run("leaderboard", logs["retried"], "--resamples",
                             "200", "--jobs", jobs, "--output-dir", site)
        assert code == 0, out + err
        sites.append({p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()})
    assert sites[0] == sites[1]


def test_a_refused_log_is_refused_alike_for_any_jobs(logs, tmp_path):
    """A damaged log among good ones: the same one line (the file, the member) with --jobs 1 and --jobs 3."""
    folder = tmp_path / "logs"
    shutil.copytree(logs["retried"], folder)
    victim = sorted(folder.glob("*.eval"))[0]
    data = bytearray(victim.read_bytes())
    at = data.index(b"samples/s3_epoch_1.json")  # the local header's name: the member's data follows it
    data[at + 60:at + 64] = b"\xff\xff\xff\xff"
    victim.write_bytes(bytes(data))
    lines = [refused(*run("compare", folder, "--jobs", jobs, "--output", tmp_path / "c.json"), victim.name)
             for jobs in ("1", "3")]
    assert lines[0] == lines[1]
    assert not (tmp_path / "c.json").exists()


def test_a_log_read_by_a_worker_is_still_an_input_no_output_may_overwrite(logs, tmp_path):
    folder = tmp_path / "logs"
    shutil.copytree(logs["retried"], folder)
    victim = sorted(folder.glob("*.eval"))[0]
    before = victim.read_bytes()
    for given in ([folder], sorted(folder.glob("*.eval"))):
        refused(*run("compare", *given, "--jobs", "2", "--resamples", "200", "--output", victim),
                "inputs are never modified")
        assert victim.read_bytes() == before
