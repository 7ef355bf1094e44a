"""benchscore rxn predict against the local fake OpenAI server: good, garbage and free-text answers, 429 with
retry-after, failed calls, resume, TPM budget, concurrency, model discovery, API key, Ctrl-C."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common.llm import prompt_sha256
from benchscore.common.testserver import OpenAITestServer
from benchscore.rxn.prompts import render

EPOCH = "1767225600"
MODEL = "chem-model"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("builds")
    for command in ("build-mc", "build-fib"):
        r = CliRunner().invoke(cli, ["rxn", command, "--bundled", "deoxyfluorination", "--output-dir", str(root)],
                               env={"SOURCE_DATE_EPOCH": EPOCH})
        assert r.exit_code == 0, r.output
    (mc,) = root.glob("*_multiple_choice")
    (fib,) = root.glob("*_fill_in_blank")
    return {"mc": mc / "multiple_choice_all_varying.json", "fib": fib / "fill_in_blank_all_blank.json"}


def samples_of(dataset: Path) -> list[dict]:
    return json.loads(dataset.read_text())["samples"]


def by_prompt(dataset: Path, answer) -> dict[str, str]:
    """prompt text -> the responder's answer for that sample (``answer(i, sample)``)."""
    return {render(s): answer(i, s) for i, s in enumerate(samples_of(dataset))}


def serve(table: dict[str, str], **kw) -> OpenAITestServer:
    return OpenAITestServer(models=["other-model", MODEL], responder=lambda model, msgs: table[msgs[-1]["content"]],
                            **kw)


def predict(srv, dataset, output, *extra, expect=0, env=None):
    """``rxn predict`` against the test server; free text (``--constraint none``) unless ``extra`` says otherwise."""
    extra = tuple(map(str, extra))
    if "--constraint" not in extra and "--method" not in extra:
        extra += ("--constraint", "none")
    args = ["rxn", "predict", "--dataset", str(dataset), "--base-url", srv.base_url, "--model", MODEL,
            "--output", str(output), *extra]
    r = CliRunner().invoke(cli, args, env={"SOURCE_DATE_EPOCH": EPOCH, **(env or {})})
    assert r.exit_code == expect, (r.output, r.stderr)
    return r


def evaluate(command, dataset, prediction, tmp_path):
    out = tmp_path / f"eval-{prediction.stem}.json"
    r = CliRunner().invoke(cli, ["rxn", command, "--dataset", str(dataset), "--prediction", str(prediction),
                                 "--output", str(out)])
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text())["overall"]


def audit_of(output: Path) -> dict:
    return json.loads(output.with_name(f"{output.stem}.audit.json").read_text())


WRAPPINGS = ("{}", "The best option is {}.", '```json\n{{"answer": {}}}\n```', "Option {} gives the best yield")


def test_good_mc_answers_in_any_documented_wrapping_score_one(builds, tmp_path):
    ds = builds["mc"]
    table = by_prompt(ds, lambda i, s: WRAPPINGS[i % len(WRAPPINGS)].format(s["answer"][0]))
    out = tmp_path / "pred.json"
    with serve(table) as srv:
        r = predict(srv, ds, out)
    samples = samples_of(ds)
    assert json.loads(out.read_text()) == {s["id"]: s["answer"][0] for s in samples}
    overall = evaluate("eval-mc", ds, out, tmp_path)
    assert overall["avg_relative_score"] == 1.0 and overall["num_invalid"] == 0 and overall["num_missing"] == 0
    audit = audit_of(out)
    assert audit["format"] == "rxn-predict-audit" and audit["model"] == MODEL
    assert audit["summary"] | {"wall_time_s": 0} == {
        "asked": len(samples), "answered": len(samples), "unparseable": 0, "failed": 0,
        "tokens_in": audit["summary"]["tokens_in"], "tokens_out": audit["summary"]["tokens_out"],
        "total_tokens": audit["summary"]["total_tokens"], "wall_time_s": 0, "num_questions": len(samples),
        "num_predictions": len(samples), "runs": 1}
    assert [c["sample_id"] for c in audit["calls"]] == [s["id"] for s in samples]
    assert audit["runs"][0]["complete"] is True
    for call, sample in zip(audit["calls"], samples, strict=True):
        rec = call["record"]
        assert rec["model"] == MODEL and rec["status"] == "ok" and rec["tokens_in"] > 0 and rec["latency_s"] >= 0
        assert rec["prompt_sha256"] == prompt_sha256([{"role": "user", "content": render(sample)}])
        assert call["status"] == "answered" and call["prediction"] == sample["answer"][0]
    assert audit["summary"]["total_tokens"] == sum(c["record"]["total_tokens"] for c in audit["calls"])
    assert audit["prompt"]["source"] == "prompt_all_varying.txt"
    lines = dict(line.rsplit(None, 1) for line in r.output.splitlines()[2:-2])
    assert lines["answered"] == str(len(samples)) and lines["unparseable (written as text: invalid)"] == "0"
    assert lines["failed calls (no prediction)"] == "0" and lines["total tokens"] == str(audit["summary"]["total_tokens"])
    assert r.output.splitlines()[-2] == f"wrote {out} and {out.with_name('pred.audit.json')}"
    # the next step, as one line that runs as printed
    score_it = r.output.splitlines()[-1]
    assert score_it == f"score it: benchscore rxn eval-mc --dataset {ds} --prediction {out}"
    assert CliRunner().invoke(cli, shlex.split(score_it.split(": ", 1)[1])[1:]).exit_code == 0


def test_the_prompt_is_the_dataset_s_own_template(builds, tmp_path):
    ds = builds["mc"]
    own = tmp_path / "my_prompt.txt"
    own.write_text("Pick one of:\n{options}\nReply with the index.")
    seen = []

    def responder(model, msgs):
        seen.append(msgs[-1]["content"])
        return "0"

    with OpenAITestServer(models=[MODEL], responder=responder) as srv:
        predict(srv, ds, tmp_path / "p.json", "--prompt", own, "--limit", 2)
    assert len(seen) == 2 and all(p.startswith("Pick one of:\n0: {") for p in seen)
    assert audit_of(tmp_path / "p.json")["prompt"]["source"] == "my_prompt.txt"


def test_garbage_answers_are_recorded_unparseable_and_scored_invalid(builds, tmp_path):
    ds = builds["mc"]
    garbage = ("I am not sure.", "", "Use 2-MeTHF at 80 °C", '{"solvent": "DMF"}')
    table = by_prompt(ds, lambda i, s: garbage[i % 4] if i % 3 == 0 else str(s["answer"][0]))
    n_bad = sum(1 for i, _ in enumerate(samples_of(ds)) if i % 3 == 0)
    out = tmp_path / "pred.json"
    with serve(table) as srv:
        predict(srv, ds, out)  # unparseable answers are not a failure: exit 0
    preds = json.loads(out.read_text())
    assert sum(isinstance(v, str) for v in preds.values()) == n_bad
    overall = evaluate("eval-mc", ds, out, tmp_path)
    assert overall["num_invalid"] == n_bad and overall["num_missing"] == 0
    audit = audit_of(out)
    assert audit["summary"]["unparseable"] == n_bad
    bad = [c for c in audit["calls"] if c["status"] == "unparseable"]
    assert all(c["prediction"] == c["answer_text"] for c in bad)


def test_fib_answers_free_text_indices_are_invalid_not_fatal(builds, tmp_path):
    ds = builds["fib"]

    def answer(i, s):
        best = next(c["indices"] for c in s["meta"]["legal_combinations"] if c["relative_score"] == 1.0)
        if i % 2:
            return f'Here you go:\n```json\n{json.dumps({s["id"]: best})}\n```'
        names = {k: s["input"]["candidate_values"][k][v]["value"] for k, v in best.items()}
        return json.dumps(names)  # text instead of indices, like {"ligand": "XPhos"}

    out = tmp_path / "pred.json"
    with serve(by_prompt(ds, answer)) as srv:
        predict(srv, ds, out)
    n = len(samples_of(ds))
    overall = evaluate("eval-fib", ds, out, tmp_path)
    assert overall["num_invalid"] == (n + 1) // 2 and overall["num_scored"] == n // 2
    assert overall["best_hit_rate_among_scored"] == 1.0
    assert audit_of(out)["summary"]["answered"] == n


def test_429_with_retry_after_is_retried_and_recorded(builds, tmp_path):
    ds = builds["mc"]
    out = tmp_path / "pred.json"
    with serve(by_prompt(ds, lambda i, s: "1")) as srv:
        srv.fail_next(2, status=429, retry_after=0.01)
        predict(srv, ds, out, "--limit", 3)
    calls = audit_of(out)["calls"]
    assert [c["status"] for c in calls] == ["answered"] * 3
    assert calls[0]["record"]["attempts"] == 3 and [c["record"]["attempts"] for c in calls[1:]] == [1, 1]
    assert len(json.loads(out.read_text())) == 3


def test_failed_calls_exit_1_and_the_next_run_asks_only_what_is_missing(builds, tmp_path):
    ds = builds["mc"]
    samples = samples_of(ds)
    out = tmp_path / "pred.json"
    with serve(by_prompt(ds, lambda i, s: str(s["answer"][0]))) as srv:
        r = predict(srv, ds, out, "--limit", 5, expect=0)
        assert len(srv.requests) == 5
        srv.fail_next(2, status=500, retry_after=None)
        r = predict(srv, ds, out, "--limit", 10, "--max-retries", 0, expect=1)
        assert "2 of 5 calls failed" in r.stderr and "HTTP 500" in r.stderr
        assert len(srv.requests) == 10
        assert len(json.loads(out.read_text())) == 8
        predict(srv, ds, out)  # no limit: the 2 failed and the rest
        assert len(srv.requests) == 10 + 2 + len(samples) - 10
    preds = json.loads(out.read_text())
    assert list(preds) == [s["id"] for s in samples]  # dataset order
    audit = audit_of(out)
    assert [r["run"] for r in audit["runs"]] == [1, 2, 3]
    assert [(r["asked"], r["failed"], r["skipped_already_answered"]) for r in audit["runs"]] == [
        (5, 0, 0), (5, 2, 5), (len(samples) - 8, 0, 8)]
    assert audit["summary"]["failed"] == 2 and audit["summary"]["num_predictions"] == len(samples)
    failed = [c for c in audit["calls"] if c["status"] == "failed"]
    assert all(c["prediction"] is None and c["record"]["http_status"] == 500 for c in failed)
    assert evaluate("eval-mc", ds, out, tmp_path)["avg_relative_score"] == 1.0


def test_concurrency_and_tpm_budget(builds, tmp_path):
    ds = builds["fib"]
    answer = by_prompt(ds, lambda i, s: json.dumps({k: 0 for k in s["query_keys"]}))
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    with serve(answer) as srv:
        predict(srv, ds, one)
        predict(srv, ds, many, "--concurrency", 8, "--tpm", 10_000_000)
    assert one.read_bytes() == many.read_bytes()
    run = audit_of(many)["runs"][0]
    assert run["settings"]["concurrency"] == 8 and run["settings"]["tpm"] == 10_000_000
    assert sum(run["tpm_windows"].values()) == run["total_tokens"] > 0


def test_an_unlisted_model_is_refused_in_one_line(builds, tmp_path):
    with OpenAITestServer(models=["a", "b"]) as srv:
        r = CliRunner().invoke(cli, ["rxn", "predict", "--dataset", str(builds["mc"]), "--base-url", srv.base_url,
                                     "--model", "nope", "--output", str(tmp_path / "p.json")])
        assert srv.requests == []
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "'nope' is not listed" in r.stderr and "a, b" in r.stderr
    assert not (tmp_path / "p.json").exists()


def test_unreachable_endpoint_is_one_line(builds, tmp_path):
    r = CliRunner().invoke(cli, ["rxn", "predict", "--dataset", str(builds["mc"]), "--base-url",
                                 "http://127.0.0.1:9/v1", "--model", MODEL, "--max-retries", 0, "--output",
                                 str(tmp_path / "p.json")])
    assert r.exit_code == 2 and r.stderr.startswith("error: model endpoint") and r.stderr.count("\n") == 1


def test_the_api_key_is_sent_and_never_written(builds, tmp_path):
    key = "sk-very-secret-123"
    ds = builds["mc"]
    out = tmp_path / "pred.json"
    with serve(by_prompt(ds, lambda i, s: "0"), api_key=key) as srv:
        predict(srv, ds, out, "--limit", 2, "--api-key-env", "MY_KEY", env={"MY_KEY": key})
        assert all(h["authorization"] == f"Bearer {key}" for h in srv.headers)
        r = predict(srv, ds, tmp_path / "nokey.json", "--limit", 2, expect=2)  # RXN_API_KEY unset: 401
        assert "401" in r.stderr and key not in r.stderr
    for f in tmp_path.iterdir():
        assert key not in f.read_text(), f


@pytest.mark.parametrize(("setup", "needle"), [
    ("no-audit", "its audit"),
    ("unknown-id", "is not a sample id"),
    ("other-model", "another model"),
])
def test_resume_refuses_a_prediction_file_it_did_not_make(builds, tmp_path, setup, needle):
    ds = builds["mc"]
    out = tmp_path / "pred.json"
    with serve(by_prompt(ds, lambda i, s: "0")) as srv:
        if setup == "no-audit":
            out.write_text("{}")
        elif setup == "unknown-id":
            predict(srv, ds, out, "--limit", 1)
            out.write_text(json.dumps(json.loads(out.read_text()) | {"not-an-id": 1}))
        else:
            predict(srv, ds, out, "--limit", 1)
            audit = audit_of(out)
            audit["model"] = "other-model"
            out.with_name("pred.audit.json").write_text(json.dumps(audit))
        before = out.read_bytes()
        n = len(srv.requests)
        r = predict(srv, ds, out, expect=2)
        assert len(srv.requests) == n
    assert needle in r.stderr and r.stderr.count("\n") == 1
    assert out.read_bytes() == before


def test_a_template_with_an_unknown_placeholder_is_refused_before_any_call(builds, tmp_path):
    bad = tmp_path / "prompt.txt"
    bad.write_text("Answer {question}")
    with OpenAITestServer(models=[MODEL]) as srv:
        r = predict(srv, builds["mc"], tmp_path / "p.json", "--prompt", bad, expect=2)
        assert srv.requests == []
    assert "unknown placeholder {question}" in r.stderr


def test_the_audit_may_not_be_the_output_or_an_input(builds, tmp_path):
    ds = tmp_path / "ds.json"
    ds.write_bytes(builds["mc"].read_bytes())
    with OpenAITestServer(models=[MODEL]) as srv:
        same = predict(srv, ds, tmp_path / "p.json", "--audit", tmp_path / "p.json", expect=2)
        r = predict(srv, ds, tmp_path / "p.json", "--audit", ds, expect=2)
        assert srv.requests == []
    assert "name the same file" in same.stderr
    assert "--audit is also an input" in r.stderr
    assert ds.read_bytes() == builds["mc"].read_bytes() and not (tmp_path / "p.json").exists()


def test_ctrl_c_saves_the_answers_so_far_and_a_rerun_resumes(builds, tmp_path):
    ds = builds["mc"]
    samples = samples_of(ds)
    out = tmp_path / "pred.json"

    def slow(model, msgs):
        time.sleep(0.2)
        return "0"

    with OpenAITestServer(models=[MODEL], responder=slow) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from benchscore.cli import main; main()", "rxn", "predict", "--dataset", str(ds),
             "--base-url", srv.base_url, "--model", MODEL, "--output", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not out.exists():  # the first periodic save
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, stderr
        assert len(stderr.splitlines()) == 1 and "run the same command again to resume" in stderr
        saved = json.loads(out.read_text())
        assert 0 < len(saved) < len(samples)
        audit = audit_of(out)
        assert audit["runs"][0]["complete"] is False and audit["summary"]["num_predictions"] == len(saved)
        asked_before = len(srv.requests)
        predict(srv, ds, out)
        assert len(srv.requests) - asked_before == len(samples) - len(saved)
    assert len(json.loads(out.read_text())) == len(samples)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_import_of_the_cli_is_cheap_and_formats_still_resolve():
    code = ("import sys, benchscore.rxn.cli as c; "
            "heavy = [m for m in ('pydantic', 'rdkit', 'numpy', 'rich', 'httpx') if m in sys.modules]; "
            "assert not heavy, heavy; assert 'rxn-predict-audit' in c.FORMATS; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    r = CliRunner().invoke(cli, ["schema", "rxn-predict-audit"])
    assert r.exit_code == 0 and "PredictCall" in r.output
