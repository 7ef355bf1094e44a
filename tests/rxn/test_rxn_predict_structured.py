"""Issue 20: `rxn predict` with structured answers (the probed constraint, never repaired), with
--method loglikelihood, and the refusals, against the local OpenAI-compatible test server."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common.testserver import OpenAITestServer
from benchscore.rxn.predict import answer_format
from benchscore.rxn.prompts import option_text

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
    return {"mc": mc / "multiple_choice_single_varying.json", "fib": fib / "fill_in_blank_all_blank.json"}


def samples_of(path):
    return json.loads(path.read_text())["samples"]


def predict(srv, dataset, output, *extra, expect=0):
    r = CliRunner().invoke(cli, ["rxn", "predict", "--dataset", str(dataset), "--base-url", srv.base_url, "--model",
                                 MODEL, "--output", str(output), *map(str, extra)], env={"SOURCE_DATE_EPOCH": EPOCH})
    assert r.exit_code == expect, (r.output, r.stderr)
    return r


def audit_of(output):
    return json.loads(output.with_name(f"{output.stem}.audit.json").read_text())


def test_mc_and_fib_answers_under_the_json_object_schema_constraint(builds, tmp_path):
    mc = samples_of(builds["mc"])[:6]
    best = {len(s["options"]): s["answer"][0] for s in mc}

    def answer(model, messages, schema):
        props = schema["properties"]
        if "option" in props:  # the schema holds exactly the question's range
            n = len(props["option"]["enum"])
            assert props["option"]["enum"] == list(range(n))
            return json.dumps({"option": best.get(n, 0)})
        return json.dumps({k: v["enum"][-1] for k, v in props.items()})

    with OpenAITestServer(models=[MODEL], constraints=("json_object_schema",), unsupported_constraint="reject",
                          constrained_responder=answer) as srv:
        out = tmp_path / "mc.json"
        r = predict(srv, builds["mc"], out, "--limit", 6)
        sent = [b for b in srv.requests if "response_format" in b and b["messages"][0]["content"] != "Reply with the "
                "single word hello."]
        fib_out = tmp_path / "fib.json"
        predict(srv, builds["fib"], fib_out, "--limit", 3)
    assert re.search(r"^answered under +json_object_schema$", r.output, re.M), r.output
    for body, sample in zip(sent, mc, strict=True):
        assert body["response_format"]["schema"] == answer_format(sample).schema
        assert body["messages"][0]["content"].endswith('Reply with the JSON object {"option": <index>} and nothing '
                                                       f"else; the index is one of 0..{len(sample['options']) - 1}.")
    audit = audit_of(out)
    assert audit["runs"][0]["constraint"]["mode"] == "json_object_schema"
    assert [t["outcome"][:8] for t in audit["runs"][0]["constraint"]["tried"]] == ["rejected", "enforced"]
    assert all(c["constraint"] == c["record"]["constraint"] == "json_object_schema" for c in audit["calls"])
    preds = json.loads(out.read_text())
    assert all(isinstance(v, int) for v in preds.values())
    fib = {s["id"]: s for s in samples_of(builds["fib"])[:3]}
    for sid, pred in json.loads(fib_out.read_text()).items():
        values = fib[sid]["input"]["candidate_values"]
        assert pred == {k: values[k][-1]["index"] for k in fib[sid]["query_keys"]}


def test_a_schema_violating_answer_is_invalid_and_not_repaired(builds, tmp_path):
    with OpenAITestServer(models=[MODEL], constraints=("grammar",)) as srv:
        # the probe's json_schema and json_object_schema attempts are ignored (free text), its grammar attempt is
        # enforced (skip 1); then the first two answers violate the schema
        out = tmp_path / "p.json"
        srv.violate_schema_next(2, text='```json\n{"option": 1}\n```', skip=1)
        predict(srv, builds["mc"], out, "--limit", 3)
    audit = audit_of(out)
    calls = audit["calls"]
    assert [c["status"] for c in calls] == ["unparseable", "unparseable", "answered"]
    assert calls[0]["prediction"] == calls[0]["answer_text"] == '```json\n{"option": 1}\n```'  # kept as written
    e = CliRunner().invoke(cli, ["rxn", "eval-mc", "--dataset", str(builds["mc"]), "--prediction", str(out),
                                 "--output", str(tmp_path / "e.json")])
    assert e.exit_code == 0, e.output
    overall = json.loads((tmp_path / "e.json").read_text())["overall"]
    assert overall["num_invalid"] == 2  # counted invalid, never read as option 1


def test_free_text_fallback_when_the_endpoint_enforces_nothing(builds, tmp_path):
    with OpenAITestServer(models=[MODEL], responder=lambda m, msgs: "Option 1.") as srv:
        out = tmp_path / "p.json"
        r = predict(srv, builds["mc"], out, "--limit", 2)
        last = srv.requests[-1]
    assert "response_format" not in last and "grammar" not in last
    assert re.search(r"^answered under +none$", r.output, re.M), r.output
    audit = audit_of(out)
    assert audit["runs"][0]["constraint"]["mode"] == "none"
    assert [c["constraint"] for c in audit["calls"]] == ["none", "none"]
    assert set(json.loads(out.read_text()).values()) == {1}


def _favour_option(sample):
    """A token log-probability that makes the sample's best option the most likely continuation."""
    best = option_text(sample["options"][sample["answer"][0]])

    def lp(model, before, token):
        return -0.01 if token.strip() and token.strip() in best and "best option is:" in before else -3.0
    return lp


def test_loglikelihood_answers_the_argmax_and_audits_every_option(builds, tmp_path):
    sample = samples_of(builds["mc"])[0]
    with OpenAITestServer(models=[MODEL], token_logprob=_favour_option(sample)) as srv:
        out = tmp_path / "ll.json"
        r = predict(srv, builds["mc"], out, "--limit", 1, "--method", "loglikelihood")
        bodies = [b for b in srv.requests if "prompt" in b]
    assert "loglikelihood (echo)" in r.output
    call = audit_of(out)["calls"][0]
    scores = call["option_loglikelihoods"]
    assert [o["option"] for o in scores] == list(range(len(sample["options"])))
    assert all(isinstance(o["loglikelihood"], float) and o["tokens"] >= 1 and o["record"]["status"] == "ok"
               for o in scores)
    best = max(range(len(scores)), key=lambda i: scores[i]["loglikelihood"])
    assert call["prediction"] == best == json.loads(out.read_text())[sample["id"]]
    assert call["constraint"] == "loglikelihood" and audit_of(out)["runs"][0]["constraint"]["method"] == "echo"
    # one echo call per option, each prompt ending in that option's text
    answers = [b for b in bodies if b.get("echo") and b["max_tokens"] == 1 and "best option is:" in b["prompt"]]
    assert [b["prompt"].rsplit("The best option is:", 1)[1] for b in answers] == [
        " " + option_text(o) for o in sample["options"]]
    assert audit_of(out)["summary"]["total_tokens"] == sum(o["record"]["total_tokens"] for o in scores)


@pytest.mark.parametrize("kw", [{"completion_logprobs": "none"}, {"completion_logprobs": "reject"}])
def test_loglikelihood_is_refused_in_one_line_without_prompt_logprobs(builds, tmp_path, kw):
    with OpenAITestServer(models=[MODEL], **kw) as srv:
        out = tmp_path / "ll.json"
        r = predict(srv, builds["mc"], out, "--limit", 1, "--method", "loglikelihood", expect=2)
    assert r.stderr.count("\n") == 1 and "--method loglikelihood" in r.stderr and "log-probabilities" in r.stderr
    assert not out.exists() and not out.with_name("ll.audit.json").exists()


def test_loglikelihood_is_for_multiple_choice_only(builds, tmp_path):
    with OpenAITestServer(models=[MODEL]) as srv:
        r = predict(srv, builds["fib"], tmp_path / "x.json", "--method", "loglikelihood", expect=2)
        assert not srv.requests
    assert "multiple-choice" in r.stderr and r.stderr.count("\n") == 1


def test_a_prediction_file_of_another_method_is_not_extended(builds, tmp_path):
    out = tmp_path / "p.json"
    with OpenAITestServer(models=[MODEL], responder=lambda m, msgs: "1") as srv:
        predict(srv, builds["mc"], out, "--limit", 1, "--constraint", "none")
        r = predict(srv, builds["mc"], out, "--limit", 2, "--method", "loglikelihood", expect=2)
    assert "another method" in r.stderr


def test_an_answer_from_another_model_stops_the_run_in_one_line(builds, tmp_path):
    with OpenAITestServer(models=["other", MODEL], answer_as={MODEL: "other"}) as srv:
        r = predict(srv, builds["mc"], tmp_path / "p.json", "--limit", 2, expect=2)
    assert r.stderr.count("\n") == 1 and "came from model 'other'" in r.stderr
