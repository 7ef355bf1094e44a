"""`benchscore compare` on lm-evaluation-harness ``--log_samples`` output written by real lm_eval runs.

lm_eval's own command line runs two local tasks (a task YAML over a local JSON Lines file, read
offline) for two "models" of controlled accuracy (``lm_eval/run_lm_eval.py`` registers ``scripted``,
which needs no download, before handing over to ``lm_eval``'s CLI). The numbers compare gives are
worked out by hand from the answer tables. The same results, written as Every Eval Ever
instance-level records (validated against the published schema), give the same comparison.
"""

from __future__ import annotations

import hashlib
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

pytestmark = [pytest.mark.lmeval, pytest.mark.usefixtures("lm_eval_installed")]

RUNNER = Path(__file__).resolve().parent / "lm_eval" / "run_lm_eval.py"
TOPICS = ["algebra", "geometry", "logic", "history"]
DOCS = [{"id": f"d{i}", "question": f"Which number is {i} times three?", "choices": [str(3 * i), str(3 * i + 1),
         str(3 * i + 2)], "answer": 0, "topic": TOPICS[i % 4]} for i in range(12)]
#: the documents each model answers wrongly (multiple choice; generation)
WRONG = {"strong": ({2, 9}, {2, 5}), "weak": ({2, 3, 6, 7, 10, 11}, {0, 2, 3, 5, 6, 7})}
MC = """task: quiz_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""
GEN = """task: quiz_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Answer: {{{{question}}}}"
doc_to_target: "{{{{choices[0]}}}}"
generation_kwargs:
  until: ["\\n"]
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
  - metric: bleu
"""


def run_lm_eval(root: Path, model: str) -> Path:
    tasks = root / "tasks"
    answers = {}
    for i, d in enumerate(DOCS):
        answers[d["question"]] = {"choices": d["choices"], "pick": 1 if i in WRONG[model][0] else 0}
        answers[f"Answer: {d['question']}"] = {"text": "no idea" if i in WRONG[model][1] else d["choices"][0]}
    (root / f"answers-{model}.json").write_text(json.dumps(answers))
    out = root / f"out-{model}"
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([sys.executable, str(RUNNER), "run", "--model", "scripted", "--model_args",
                           f"model={model},answers={root / f'answers-{model}.json'}", "--tasks", "quiz_mc,quiz_gen",
                           "--include_path", str(tasks), "--log_samples", "--output_path", str(out)],
                          capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL, cwd=root)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("results-lm-eval")
    tasks = root / "tasks"
    tasks.mkdir()
    data = tasks / "quiz.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (tasks / "quiz_mc.yaml").write_text(MC.format(data=data))
    (tasks / "quiz_gen.yaml").write_text(GEN.format(data=data))
    return {model: run_lm_eval(root, model) for model in WRONG}


def compare(*args) -> tuple[int, str, dict | None]:
    res = CliRunner().invoke(cli, ["compare", *map(str, args)])
    out = next((Path(b) for a, b in zip(args, args[1:], strict=False) if a == "--output"), None)
    return res.exit_code, res.output, orjson.loads(out.read_bytes()) if out and out.exists() else None


def row(doc: dict, name: str) -> dict:
    (pair,) = doc["comparisons"]
    assert (pair["a"], pair["b"]) == ("strong", "weak")
    return next(m for m in pair["metrics"] if m["name"] == name)


def test_two_lm_eval_runs_are_compared_document_by_document(tmp_path, runs):
    code, text, doc = compare(runs["strong"], runs["weak"], "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, text
    assert doc["kind"] == "lm-evaluation-harness results" and doc["results"] == ["strong", "weak"]
    mc, gen = row(doc, "quiz_mc/acc,none"), row(doc, "quiz_gen/exact_match,none")
    assert (mc["a"], mc["b"]) == (pytest.approx(10 / 12), pytest.approx(6 / 12))
    assert (gen["a"], gen["b"]) == (pytest.approx(10 / 12), pytest.approx(6 / 12))
    assert mc["n_items"] == 12 and mc["n_units"] == 12 and mc["test"] == "mcnemar_exact"
    assert mc["counts"]["a"]["scored"] == 12 and mc["counts"]["a"]["errored"] == 0
    differ = {r["item"]: (r["a"], r["b"]) for r in mc["items_that_differ_most"]}
    assert differ == {str(i): (float(i not in WRONG["strong"][0]), float(i not in WRONG["weak"][0]))
                      for i in range(12) if (i in WRONG["strong"][0]) != (i in WRONG["weak"][0])}
    # BLEU is a corpus metric: its per-sample values are (reference, prediction) pairs
    assert "quiz_gen/bleu,none" in doc["not_compared"]
    assert "not numbers" in doc["not_compared"]["quiz_gen/bleu,none"]
    settings = doc["same"]["tasks"]["quiz_mc"]
    assert settings["n-shot"] == 0 and settings["output_type"] == "multiple_choice"
    assert "doc_hash" in doc["same"]["sample identity"]
    # every file read is in the provenance
    assert len(doc["provenance"]["inputs"]) == 6


def test_cluster_reads_a_field_of_the_document(tmp_path, runs):
    code, text, doc = compare(runs["strong"], runs["weak"], "--metric", "quiz_mc/acc,none", "--cluster", "topic",
                              "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, text
    mc = row(doc, "quiz_mc/acc,none")
    assert mc["n_units"] == 4 and mc["n_items"] == 12
    assert [m["name"] for m in doc["comparisons"][0]["metrics"]] == ["quiz_mc/acc,none"]
    code, text, _ = compare(runs["strong"], runs["weak"], "--metric", "quiz_gen/bleu,none")
    assert code == 2 and "cannot be compared sample by sample" in text


def test_a_samples_file_that_does_not_give_its_results_is_refused(tmp_path, runs):
    copy = tmp_path / "weak"
    shutil.copytree(runs["weak"], copy)
    (samples,) = copy.rglob("samples_quiz_mc_*.jsonl")
    lines = samples.read_text().splitlines()
    first = json.loads(lines[0])
    first["acc"] = 1.0 - first["acc"]
    lines[0] = json.dumps(first)
    samples.write_text("\n".join(lines) + "\n")
    code, text, _ = compare(runs["strong"], copy)
    assert code == 2 and text.count("\n") == 1
    assert "is not the samples file of these results" in text and "results_" in text


def test_the_same_results_as_every_eval_ever_records_compare_alike(tmp_path, runs):
    """Every Eval Ever's lm-eval converter mapping (sample_id = doc_id, sample_hash over prompt and
    target, score = the first metric), written here and validated against the published schema."""
    from benchscore.sources.every_eval_ever import read_instances

    paths = []
    for model, out in runs.items():
        (samples,) = out.rglob("samples_quiz_mc_*.jsonl")
        records = []
        for line in samples.read_text().splitlines():
            s = json.loads(line)
            prompt, target = s["arguments"]["gen_args_0"]["arg_0"], str(s["target"])
            records.append({
                "schema_version": "0.3.0", "evaluation_id": f"quiz/{model}", "model_id": f"local/{model}",
                "evaluation_name": "quiz_mc", "sample_id": str(s["doc_id"]),
                "sample_hash": hashlib.sha256(json.dumps({"raw": prompt, "reference": target},
                                                         sort_keys=True).encode()).hexdigest(),
                "interaction_type": "single_turn", "input": {"raw": prompt, "reference": [target]},
                "output": {"raw": [""]}, "answer_attribution": [],
                "evaluation": {"score": s["acc"], "is_correct": s["acc"] == 1.0},
                "metadata": {"topic": s["doc"]["topic"], "filter": s["filter"]}})
        path = tmp_path / f"{model}_samples.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        assert len(read_instances(path)) == 12  # schema-valid
        paths.append(path)
    code, text, doc = compare(*paths, "--cluster", "topic", "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, text
    assert doc["results"] == ["local/strong", "local/weak"]
    score = next(m for m in doc["comparisons"][0]["metrics"] if m["name"] == "quiz_mc/score")
    assert (score["a"], score["b"]) == (pytest.approx(10 / 12), pytest.approx(6 / 12))
    assert score["n_units"] == 4


def test_lm_eval_runs_carry_what_they_record_and_nothing_they_do_not(tmp_path, runs):
    """Issue 35: the counts beside every number say what a run's files record. lm_eval records no run status,
    no retried request and no edited score: its results are final (exit 0), the counts say status unknown
    with nothing retried or edited, and the epoch reducer asked for with --reducer is named (one epoch per
    document: any reducer gives the value itself)."""
    code, text, doc = compare(runs["strong"], runs["weak"], "--metric", "quiz_mc/acc,none", "--reducer", "max",
                              "--resamples", "200", "--output", tmp_path / "c.json")
    assert code == 0, text
    acc = row(doc, "quiz_mc/acc,none")
    assert (acc["a"], acc["b"]) == (pytest.approx(10 / 12), pytest.approx(6 / 12))
    counts = acc["counts"]["a"]
    assert (counts["status"], counts["retried"], counts["edited"], counts["missing"]) == ("unknown", 0, 0, 0)
    assert doc["same"]["epoch reducers"] == {"quiz_mc/acc,none": "max"}
    assert "NOT FINAL" not in text and "retried" not in text
    code, text, _ = compare(runs["strong"], runs["weak"], "--metric", "quiz_mc/nope")
    assert code == 2 and "no such metric; the results have quiz_gen/exact_match,none" in text
