"""benchscore rxn predict against the real local model (BENCHSCORE_LIVE=1, scripts/live-gateway.sh start).

Asserts structure and honesty only, never quality: a weak model answers badly, and that must show up as
unparseable or invalid answers, never as a crash or an invented prediction.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.rxn.build import FIB_TYPES, MC_TYPES

pytestmark = pytest.mark.live

#: questions asked per set (BENCHSCORE_LIVE_PER_SET: fewer on a busy machine, where one answer can take 30 s)
PER_SET = int(os.environ.get("BENCHSCORE_LIVE_PER_SET", "20"))


def _run(*args) -> object:
    return CliRunner().invoke(cli, ["rxn", *map(str, args)])


@pytest.fixture(scope="module")
def bundled_builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("live-builds")
    for command in ("build-mc", "build-fib"):
        r = _run(command, "--output-dir", root)  # every bundled dataset
        assert r.exit_code == 0, r.output
    (mc,) = root.glob("*_multiple_choice")
    (fib,) = root.glob("*_fill_in_blank")
    return mc, fib


def _check_honest(dataset: Path, output: Path, exit_code: int, limit: int) -> tuple[dict, dict]:
    """The prediction file and audit tell the truth about every question asked."""
    audit = json.loads(output.with_name(f"{output.stem}.audit.json").read_text())
    preds = json.loads(output.read_text())
    samples = json.loads(dataset.read_text())["samples"]
    asked = [s["id"] for s in samples[:limit]]
    calls = audit["calls"]
    assert [c["sample_id"] for c in calls] == asked
    failed = [c for c in calls if c["status"] == "failed"]
    assert exit_code == (1 if failed else 0)
    assert sorted(preds) == sorted(c["sample_id"] for c in calls if c["status"] != "failed")
    assert len(preds) + len(failed) == limit
    for c in calls:
        assert c["record"] is not None and c["record"]["prompt_sha256"]
        if c["status"] == "failed":
            assert c["prediction"] is None and c["error"]
            continue
        rec = c["record"]
        assert rec["status"] == "ok" and rec["tokens_in"] > 0 and rec["tokens_out"] >= 0
        assert rec["total_tokens"] == rec["tokens_in"] + rec["tokens_out"]
        assert preds[c["sample_id"]] == c["prediction"]
        if c["status"] == "unparseable":
            assert c["prediction"] == c["answer_text"]  # the raw text, never a guessed index
    s = audit["summary"]
    assert (s["asked"], s["failed"], s["num_predictions"]) == (limit, len(failed), len(preds))
    assert s["answered"] + s["unparseable"] == len(preds)
    assert s["total_tokens"] == sum(c["record"]["total_tokens"] or 0 for c in calls if c["status"] != "failed")
    return preds, audit


@pytest.mark.parametrize("question_type", MC_TYPES)
def test_live_predict_then_eval_mc(live_gateway, bundled_builds, tmp_path, question_type):
    url, model = live_gateway
    dataset = bundled_builds[0] / f"multiple_choice_{question_type}.json"
    out = tmp_path / "pred.json"
    r = _run("predict", "--dataset", dataset, "--base-url", url, "--model", model, "--output", out,
             "--limit", PER_SET, "--max-tokens", 32, "--timeout", 600)
    assert r.exit_code in (0, 1), (r.output, r.stderr)
    preds, audit = _check_honest(dataset, out, r.exit_code, PER_SET)
    result = tmp_path / "eval.json"
    e = _run("eval-mc", "--dataset", dataset, "--prediction", out, "--output", result)
    assert e.exit_code == 0, e.output
    overall = json.loads(result.read_text())["overall"]
    n = len(json.loads(dataset.read_text())["samples"])
    assert overall["num_samples"] == n and overall["num_missing"] == n - len(preds)
    assert overall["num_invalid"] >= audit["summary"]["unparseable"]


@pytest.mark.parametrize("question_type", FIB_TYPES)
def test_live_predict_then_eval_fib(live_gateway, bundled_builds, tmp_path, question_type):
    url, model = live_gateway
    dataset = bundled_builds[1] / f"fill_in_blank_{question_type}.json"
    out = tmp_path / "pred.json"
    r = _run("predict", "--dataset", dataset, "--base-url", url, "--model", model, "--output", out,
             "--limit", min(4, PER_SET), "--max-tokens", 64, "--timeout", 600)
    assert r.exit_code in (0, 1), (r.output, r.stderr)
    preds, audit = _check_honest(dataset, out, r.exit_code, min(4, PER_SET))
    e = _run("eval-fib", "--dataset", dataset, "--prediction", out, "--output", tmp_path / "eval.json")
    assert e.exit_code == 0, e.output
    overall = json.loads((tmp_path / "eval.json").read_text())["overall"]
    assert overall["num_invalid"] + overall["num_scored"] + overall["num_unhit"] == len(preds)


def test_live_loglikelihood_answers_with_every_option_scored(live_gateway, bundled_builds, tmp_path):
    """Issue 20: --method loglikelihood against the gateway: one answer per question, every option's
    log-likelihood (and its call record) in the audit, the prediction their argmax."""
    url, model = live_gateway
    dataset = bundled_builds[0] / "multiple_choice_single_varying.json"
    out = tmp_path / "ll.json"
    r = _run("predict", "--dataset", dataset, "--base-url", url, "--model", model, "--output", out,
             "--limit", 1, "--method", "loglikelihood", "--timeout", 1800)
    assert r.exit_code == 0, (r.output, r.stderr)
    sample = json.loads(dataset.read_text())["samples"][0]
    audit = json.loads(out.with_name("ll.audit.json").read_text())
    (call,) = audit["calls"]
    scores = call["option_loglikelihoods"]
    assert [o["option"] for o in scores] == list(range(len(sample["options"])))
    assert all(o["loglikelihood"] is not None and o["loglikelihood"] <= 0 and o["record"]["status"] == "ok"
               for o in scores)
    assert call["prediction"] == max(range(len(scores)), key=lambda i: scores[i]["loglikelihood"])
    assert audit["runs"][0]["constraint"]["method"] in ("echo", "forced")
    print(f"\nlive loglikelihood {model}: {audit['runs'][0]['constraint']['method']}, "
          f"{[round(o['loglikelihood'], 2) for o in scores]}")
