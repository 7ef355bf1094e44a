"""issue 35, point 5: the Every Eval Ever records a leaderboard writes follow the current upstream schema (0.3.0,
validated with jsonschema against the vendored upstream file, not through benchscore) and say what each
evaluation's own files say: ``evaluation_timestamp`` is when the evaluation ran (inspect_ai's ``eval.created``,
lm-eval's ``date``, a source record's own), ``eval_library`` the library that ran it with the version the log
records, ``dataset_name`` the task's dataset, and ``details`` every count (errored, excluded, ...). Checked on
real runs of the real tools: the README's inspect_ai mockllm logs (read back with inspect_ai's own reader), an
lm_eval run over a local task, and Every Eval Ever records written to the upstream schema.

On the code before issue 35 every record failed the 0.3.0 schema (``model_info.additional_details``), its
``evaluation_timestamp`` was the leaderboard's write time, its library version "unknown" and its dataset the
metric's name.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "examples" / "results" / "logs"
SCHEMA = json.loads((REPO / "src" / "benchscore" / "sources" / "data" / "every_eval_ever" /
                     "eval-0.3.0.schema.json").read_text())
ENV = {"SOURCE_DATE_EPOCH": "1767225600"}


def leaderboard(*args) -> list[dict]:
    """Run a leaderboard; every record it wrote, each checked against the upstream 0.3.0 schema."""
    res = CliRunner().invoke(cli, ["leaderboard", *map(str, args)], env=ENV)
    assert res.exit_code == 0, res.output
    site = Path(args[args.index("--output-dir") + 1])
    board = json.loads((site / "leaderboard.json").read_text())
    records = []
    for row in board["metrics"][0]["rows"]:
        record = json.loads((site / row["eee_record"]).read_text())
        jsonschema.Draft7Validator(SCHEMA).validate(record)
        assert record["schema_version"] == "0.3.0"
        assert record["retrieved_timestamp"] == ENV["SOURCE_DATE_EPOCH"]  # when the record was written
        records.append({"row": row, "record": record, "board": board})
    return records


def unix(text: str) -> str:
    return str(int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()))


def test_records_of_inspect_ai_logs_say_what_the_logs_say(tmp_path, inspect_ai_installed):
    from inspect_ai.log import read_eval_log

    shutil.copytree(LOGS, tmp_path / "logs")
    found = leaderboard(tmp_path / "logs", "--output-dir", tmp_path / "site", "--errors", "exclude-pair",
                        "--metric", "quiz/match")
    assert len(found) == 4
    for f in found:
        record, row = f["record"], f["row"]
        log = read_eval_log(str(LOGS / f"{row['label'].split('/')[1]}.eval"), header_only=True)  # inspect_ai's reader
        assert record["evaluation_timestamp"] == unix(log.eval.created)
        assert record["eval_library"] == {"name": "inspect_ai", "version": log.eval.packages["inspect_ai"]}
        assert log.eval.packages["inspect_ai"] == "0.3.285"
        (result,) = record["evaluation_results"]
        assert result["source_data"]["dataset_name"] == (log.eval.dataset.name or log.eval.task) == "quiz"
        details = result["score_details"]["details"]
        for key in ("scored", "errored", "unscored", "missing", "excluded", "retried", "limited"):
            assert details[key] == str(row["counts"][key]), key
        assert details["errors"] == "exclude-pair"
        assert record["model_info"]["additional_details"] == {"deployment_type": "unknown",
                                                              "model_availability": "unknown"}
    # the samples that errored in any model leave every result: each record counts them as excluded
    excluded = {f["record"]["evaluation_results"][0]["score_details"]["details"]["excluded"] for f in found}
    assert len(excluded) == 1 and int(excluded.pop()) > 0


LM_TASK = """task: quiz_mc
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


def test_records_of_lm_eval_runs_say_what_the_runs_say(tmp_path, lm_eval_installed):
    runner = REPO / "tests" / "results" / "lm_eval" / "run_lm_eval.py"
    docs = [{"question": f"Which number is {i} times three?", "choices": [str(3 * i), str(3 * i + 1)], "answer": 0}
            for i in range(8)]
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "quiz.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tasks / "quiz_mc.yaml").write_text(LM_TASK.format(data=tasks / "quiz.jsonl"))
    outs = []
    for model, wrong in (("strong", {1}), ("weak", {1, 2, 5})):
        answers = {d["question"]: {"choices": d["choices"], "pick": 1 if i in wrong else 0} for i, d in enumerate(docs)}
        (tmp_path / f"answers-{model}.json").write_text(json.dumps(answers))
        env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        proc = subprocess.run([sys.executable, str(runner), "run", "--model", "scripted", "--model_args",
                               f"model={model},answers={tmp_path / f'answers-{model}.json'}", "--tasks", "quiz_mc",
                               "--include_path", str(tasks), "--log_samples", "--output_path",
                               str(tmp_path / "runs" / model)],
                              capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL,
                              cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outs.append(tmp_path / "runs" / model)
    found = leaderboard(*outs, "--output-dir", tmp_path / "site")
    raws = [json.loads(p.read_text()) for out in outs for p in out.rglob("results_*.json")]
    assert len(raws) == 2 and len(found) == 2
    assert sorted(f["record"]["evaluation_timestamp"] for f in found) == sorted(str(int(r["date"])) for r in raws)
    for f in found:
        record = f["record"]
        assert record["eval_library"] == {"name": "lm_eval", "version": raws[0]["lm_eval_version"]}
        # a task whose dataset_path is a file loader (json): its dataset is the task's own files
        assert record["evaluation_results"][0]["source_data"]["dataset_name"] == "quiz_mc"


def test_records_of_every_eval_ever_records_keep_their_library_and_time(tmp_path):
    """Records written to the upstream schema (from the repository's own conversion template, two models):
    the leaderboard's record keeps each source's evaluation time, library and dataset."""
    template = REPO / "tests" / "results" / "data" / "every_eval_ever" / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40"
    aggregate = json.loads(template.with_suffix(".json").read_text())
    sample = json.loads(Path(f"{template}_samples.jsonl").read_text().splitlines()[0])
    folder = tmp_path / "in"
    folder.mkdir()
    for model, uuid, when, scores in (
            ("alpha", "0b5e8f6a-1c2d-4e3f-8a9b-0c1d2e3f4a5b", "1750000000", [1, 1, 1, 0, 1, 1]),
            ("beta", "1c6f9a7b-2d3e-4f5a-9b0c-1d2e3f4a5b6c", "1750003600", [1, 0, 0, 0, 1, 0])):
        eid = f"demo/{model}/{when}"
        lines = [json.dumps(dict(sample, evaluation_id=eid, model_id=f"org/{model}", sample_id=f"q{i}",
                                 sample_hash=hashlib.sha256(f"q{i}".encode()).hexdigest(),
                                 evaluation={"score": float(v), "is_correct": bool(v)})) + "\n"
                 for i, v in enumerate(scores)]
        samples = folder / f"{uuid}_samples.jsonl"
        samples.write_text("".join(lines))
        record = dict(aggregate, evaluation_id=eid, evaluation_timestamp=when,
                      eval_library={"name": "helm", "version": "0.5.4"},
                      model_info=dict(aggregate["model_info"], name=model, id=f"org/{model}"),
                      detailed_evaluation_results=dict(aggregate["detailed_evaluation_results"],
                                                       file_path=f"data/demo/org/{model}/{samples.name}",
                                                       total_rows=len(lines),
                                                       checksum=hashlib.sha256(samples.read_bytes()).hexdigest()))
        jsonschema.Draft7Validator(SCHEMA).validate(record)
        (folder / f"{uuid}.json").write_text(json.dumps(record))
    found = leaderboard(folder, "--output-dir", tmp_path / "site", "--metric", "demo-source.demo_bench/score")
    by_model = {f["row"]["label"]: f["record"] for f in found}
    assert by_model["org/alpha"]["evaluation_timestamp"] == "1750000000"
    assert by_model["org/beta"]["evaluation_timestamp"] == "1750003600"
    for record in by_model.values():
        assert record["eval_library"] == {"name": "helm", "version": "0.5.4"}
        assert record["evaluation_results"][0]["source_data"]["dataset_name"] == "demo_bench"


@pytest.mark.parametrize("created", [None, "not a time"])
def test_a_source_without_its_evaluation_time_says_so(created):
    from benchscore.publish.leaderboard import eee_records

    board = {"kind": "k", "results": ["m"], "level": 0.95, "provenance": {"created_at": "2026-01-01T00:00:00Z"},
             "metrics": [{"name": "x", "n_items": 3, "n_units": 3, "bounds": [0.0, 1.0], "observed": [0.0, 1.0],
                          "rows": [{"label": "m", "eee_record": "every_eval_ever/m.json", "rank_range": [1, 1],
                                    "groups": ["a"], "ci95": None, "ci_reason": "r", "ci_method": None,
                                    "standard_error": None, "se_reason": "s", "counts": None, "reproduced": None,
                                    "value": 0.5}]}]}
    (record,) = eee_records(board, {"m": {"created": created, "library": ("inspect_ai", None)}}, "0" * 64).values()
    assert "evaluation_timestamp" not in record
    assert record["source_metadata"]["additional_details"]["evaluation_timestamp"] == \
        "not recorded by the source: left out"
    assert record["eval_library"] == {"name": "inspect_ai", "version": "unknown"}
    jsonschema.Draft7Validator(SCHEMA).validate(record)
