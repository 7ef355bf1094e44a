"""A faithful inspect_ai import (issue 30): every failure a log records is counted, from wherever the logs live.

Every evaluation here is run for real (``tests/mira/inspect/ops_task.py``: a react agent with a tool and
an approver, the offline ``mockllm/model`` whose outputs set ``usage``), by inspect_ai's own command
line (``inspect eval ops_task.py@ops ...``) or as a script, and its log is converted and scored. The
expected values are worked out by hand from what each case of the task does (its docstring).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from mira_helpers import run, write_json

pytestmark = [pytest.mark.inspect, pytest.mark.usefixtures("inspect_ai_installed")]

OPS = Path(__file__).resolve().parent / "inspect" / "ops_task.py"
BIN = Path(sys.executable).parent
ENV = dict(os.environ, INSPECT_LOG_LEVEL="error", PYTHONWARNINGS="ignore", INSPECT_DISPLAY="none")


def run_ops(log_dir: Path, cases: str, *, cli: bool = False, retry: int = 0, epochs: int = 3,
            limit: int | None = None, fail_on_error: bool = False, expect: int = 1) -> list[Path]:
    """Run the ops task for real; returns the logs it wrote (``expect`` of them)."""
    if cli:
        cmd = [str(BIN / "inspect"), "eval", f"{OPS}@ops", "-T", f"cases={cases}", "-T", f"epochs={epochs}",
               "--log-dir", str(log_dir), "--display", "none", "--max-samples", "1"]
        cmd += ["--retry-on-error", str(retry)] if retry else []
        cmd += ["--limit", str(limit)] if limit else []
        cmd += [] if fail_on_error else ["--no-fail-on-error"]
    else:
        cmd = [sys.executable, str(OPS), str(log_dir), cases, "--epochs", str(epochs)]
        cmd += ["--retry-on-error", str(retry)] if retry else []
        cmd += ["--limit", str(limit)] if limit else []
        cmd += ["--fail-on-error"] if fail_on_error else []
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, stdin=subprocess.DEVNULL, timeout=600)
    logs = sorted(log_dir.glob("*.eval"))
    assert len(logs) == expect, (cmd, proc.returncode, proc.stdout[-2000:], proc.stderr[-4000:])
    return logs


def contract(cases: list[str], planned: int = 3) -> dict:
    return {"benchmark_id": "ops", "contract_version": "1", "cases": [
        {"case_id": c, "intent": f"fix the build ({c})", "difficulty": "easy", "prompt": f"Task {c}",
         "scoring_class": "automated_scored", "t_soft_s": 60.0, "planned_repetitions": planned,
         "criteria": [{"id": "answer_correct", "weight": 0.5, "scorer": "deterministic"},
                      {"id": "tests_pass", "weight": 0.5, "scorer": "deterministic"}]} for c in cases]}


MAPPING = {
    "format": "mira-inspect-mapping",
    "execution_mode": "adapted",
    "criteria": {"answer_correct": {"scorer": "answer", "satisfied": ["C"], "unsatisfied": ["I", "P", "N"]},
                 "tests_pass": {"scorer": "answer", "metadata_key": "tests_passed", "at_least": 3}},
    "errors": {"infrastructure": [{"type": "RuntimeError"}, {"type": "SandboxBootError"}],
               "agent": [{"type": "AgentGaveUp"}]},
    "approvals": [{"decision": "approve", "counts_as": "ordinary"},
                  {"decision": "reject", "approver": "reviewer", "counts_as": "intervention"}],
}


def convert(tmp: Path, logs: list, cases: list[str], mapping: dict | None = None, *extra: str, planned: int = 3):
    c = write_json(tmp / "contract.json", contract(cases, planned))
    m = write_json(tmp / "mapping.json", mapping or MAPPING)
    out = tmp / "reps.jsonl"
    return run("from-inspect", *logs, "--contract", c, "--mapping", m, "--output", out, *extra), out, c


def records(path: Path) -> dict[tuple[str, int], dict]:
    return {(r["case_id"], r["repetition"]): r for r in map(orjson.loads, path.read_bytes().splitlines())}


def score(tmp: Path, c: Path, reps: Path) -> tuple[int, dict, str]:
    out = tmp / "score.json"
    res = run("score", "--contract", c, "--repetitions", reps, "--output", out)
    return res.exit_code, orjson.loads(out.read_bytes()), res.output


def case_metrics(doc: dict, case: str) -> dict:
    (c,) = [x for x in doc["cases"] if x["case_id"] == case]
    return {k: v["value"] for k, v in c["metrics"].items()}


def refused(res, out: Path, *fragments: str) -> str:
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.splitlines()
    assert line.startswith("error: ")
    for f in fragments:
        assert f in line, line
    assert not out.exists()
    return line


# --------------------------------------------------------------------------- 1. retried attempts


def test_a_retried_agent_failure_is_the_repetition(tmp_path):
    """`inspect eval ops_task.py@ops -T cases=ok,giveup,daemon --retry-on-error 1`: giveup's first attempt of epoch 1
    raises the agent's AgentGaveUp, the retry answers right; daemon's first attempt of epoch 3 hits an
    infrastructure error, the retry answers right."""
    (log,) = run_ops(tmp_path / "logs", "ok,giveup,daemon", cli=True, retry=1)
    res, out, c = convert(tmp_path, [log], ["ok", "giveup", "daemon"])
    assert res.exit_code == 0, res.output
    got = records(out)
    failed = got[("giveup", 1)]  # the failed attempt is the repetition, the retry a diagnostic beside it
    assert (failed["execution_mode"], failed["terminal_state"]) == ("adapted", "failed")
    assert failed["deterministic_results"] == {"answer_correct": False, "tests_pass": False}
    src = failed["source"]
    assert (src["attempt"], src["attempts"], src["error_kind"], src["error_types"]) == (1, 2, "agent", ["AgentGaveUp"])
    assert src["later_attempt"]["terminal_state"] == "completed"
    assert src["later_attempt"]["deterministic_results"] == {"answer_correct": True, "tests_pass": True}
    retried = got[("daemon", 3)]  # an infrastructure error retried: the retry stands, the error is listed
    assert (retried["terminal_state"], retried["deterministic_results"]["answer_correct"]) == ("completed", True)
    (replaced,) = retried["source"]["replaced_errors"]
    assert replaced["error_kind"] == "infrastructure" and replaced["error_types"] == ["RuntimeError"]
    assert "Failed to start docker services:\\nError response from daemon" in replaced["error"]
    assert "attempt 1 of 2 failed (the agent's error, counted)" in res.output
    code, doc, _ = score(tmp_path, c, out)
    assert code == 0 and doc["status"] == "complete"
    giveup = case_metrics(doc, "giveup")
    assert giveup["reliability"] == pytest.approx(200 / 3) and giveup["pass_at_1"] is False
    assert giveup["stable_at_3"] is False
    assert case_metrics(doc, "daemon")["reliability"] == 100.0


# --------------------------------------------------------------------------- 2. errors typed structurally


@pytest.mark.parametrize("cli", [True, False], ids=["inspect-eval-file.py@task", "python-file.py"])
def test_infrastructure_errors_are_typed_structurally(tmp_path, cli):
    """A class defined in the task file (SandboxBootError), docker's multi-line RuntimeError and a task group
    failing with both: with infrastructure rules for RuntimeError and SandboxBootError and otherwise agent,
    all three are invalid (never the agent's), and the score is incomplete."""
    (log,) = run_ops(tmp_path / "logs", "ok,boot,docker,group", cli=cli)
    mapping = {**MAPPING, "errors": {**MAPPING["errors"], "otherwise": "agent"}}
    res, out, c = convert(tmp_path, [log], ["ok", "boot", "docker", "group"], mapping)
    assert res.exit_code == 0, res.output
    got = records(out)
    for key, types in ((("boot", 2), ["SandboxBootError"]), (("docker", 2), ["RuntimeError"]),
                       (("group", 1), ["RuntimeError", "SandboxBootError"])):
        assert got[key]["execution_mode"] == "invalid", (key, got[key]["source"])
        assert got[key]["source"]["error_kind"] == "infrastructure"
        assert sorted(got[key]["source"]["error_types"]) == types
    assert "docker compose up failed\\nstderr: network sandbox_default not found" in got[("docker", 2)]["source"]["error"]
    code, doc, _ = score(tmp_path, c, out)
    assert doc["infrastructure_invalid_count"]["value"] == 3
    assert doc["status"] == "incomplete" and code == 1
    assert {m["case_id"] for m in doc["missing"]} == {"boot", "docker", "group"}


def test_a_class_of_the_task_file_is_matched_by_its_bare_name_only_rules(tmp_path):
    """With no rule naming it, the file's class is refused in one line that names the class (not its file path)."""
    (log,) = run_ops(tmp_path / "logs", "boot", cli=True, epochs=2)
    mapping = {**MAPPING, "errors": {"infrastructure": [{"type": "RuntimeError"}]}}
    res, out, _ = convert(tmp_path, [log], ["boot"], mapping)
    line = refused(res, out, "sample 'boot' epoch 2", "matches no rule of the mapping's errors", "SandboxBootError")
    assert "ops_task.py" not in line.split("field")[0].split("sample 'boot' epoch 2")[1]


# --------------------------------------------------------------------------- 3. score edits


def _edited_log(tmp: Path) -> Path:
    from inspect_ai.log import ProvenanceData, edit_score, read_eval_log, write_eval_log
    from inspect_ai.scorer import ScoreEdit

    (log,) = run_ops(tmp / "logs", "ok,wrong")
    doc = read_eval_log(str(log))
    edit_score(doc, "wrong", "answer", ScoreEdit(value="C", provenance=ProvenanceData(author="reviewer",
                                                                                      reason="manual regrade")),
               epoch=2)
    edited = tmp / "edited.eval"
    write_eval_log(doc, str(edited))
    return edited


def test_an_edited_score_is_refused_or_a_declared_deviation(tmp_path):
    edited = _edited_log(tmp_path)
    res, out, c = convert(tmp_path, [edited], ["ok", "wrong"])
    refused(res, out, "edited.eval", "sample 'wrong' epoch 2", "scores.answer.history", "score 'answer'",
            "edited after the run by reviewer (manual regrade)", "--accept-score-edits")
    res, out, c = convert(tmp_path, [edited], ["ok", "wrong"], None, "--accept-score-edits")
    assert res.exit_code == 0, res.output
    rec = records(out)[("wrong", 2)]
    assert rec["deterministic_results"] == {"answer_correct": True, "tests_pass": False}
    (edit,) = rec["source"]["score_edits"]
    assert (edit["scorer"], edit["author"], edit["reason"], edit["original"], edit["value"]) == (
        "answer", "reviewer", "manual regrade", "I", "C")
    code, doc, printed = score(tmp_path, c, out)
    (dev,) = doc["deviations"]
    assert dev["id"] == "inspect-score-edits" and dev["affects"] == ["wrong#2"]
    assert "score answer edited by reviewer (manual regrade)" in dev["text"]
    assert "inspect-score-edits" in printed
    public = tmp_path / "public.json"
    assert run("project", "--score", tmp_path / "score.json", "--output", public).exit_code in (0, 1)
    assert orjson.loads(public.read_bytes())["deviations"] == doc["deviations"]


# --------------------------------------------------------------------------- 4. approvals


def test_approvals_are_carried_and_a_rejection_costs_autonomy(tmp_path):
    """The reviewer rejects the agent's first tool call in every epoch of `approval`: an intervention under
    this mapping, so the case's Autonomy is 0; `ok` only has its submit approved (ordinary): Autonomy 1."""
    (log,) = run_ops(tmp_path / "logs", "ok,approval", cli=True)
    res, out, c = convert(tmp_path, [log], ["ok", "approval"])
    assert res.exit_code == 0, res.output
    rec = records(out)[("approval", 1)]
    assert rec["source"]["approvals"] == [
        {"decision": "reject", "approver": "reviewer", "tool": "run_shell", "counts_as": "intervention"},
        {"decision": "approve", "approver": "reviewer", "tool": "run_shell", "counts_as": "ordinary"},
        {"decision": "approve", "approver": "auto", "tool": "submit", "counts_as": "ordinary"}]
    assert [i["kind"] for i in rec["interventions"]] == ["task_solving_help", "approval", "approval"]
    code, doc, _ = score(tmp_path, c, out)
    assert case_metrics(doc, "approval")["autonomy"] == 0.0
    assert case_metrics(doc, "ok")["autonomy"] == 1.0
    # the same rejection as a governance observation (conservative approval: no violation, no Autonomy cost)
    gov = {**MAPPING, "approvals": [MAPPING["approvals"][0], {"decision": "reject", "counts_as": "governance",
                                                              "governance_kind": "conservative_approval"}]}
    (tmp_path / "g").mkdir()
    res, out, c = convert(tmp_path / "g", [log], ["ok", "approval"], gov)
    assert res.exit_code == 0, res.output
    assert records(out)[("approval", 1)]["governance_events"][0]["kind"] == "conservative_approval"
    assert case_metrics(score(tmp_path / "g", c, out)[1], "approval")["autonomy"] == 1.0
    # a mapping that says nothing of approvals: refused, naming the decision
    (tmp_path / "n").mkdir()
    bare = {k: v for k, v in MAPPING.items() if k != "approvals"}
    res, out, _ = convert(tmp_path / "n", [log], ["ok", "approval"], bare)
    refused(res, out, "sample 'ok' epoch 1", "auto approve on tool call submit", "approvals")


# --------------------------------------------------------------------------- 5. counted against the contract


def test_missing_repetitions_are_counted_against_the_contract(tmp_path):
    (log,) = run_ops(tmp_path / "a", "ok,wrong", epochs=2)  # the log plans 2 epochs, the contract 3
    res, out, _ = convert(tmp_path, [log], ["ok", "wrong"])
    assert res.exit_code == 1, res.output  # written, not final
    head = res.output.splitlines()[0]
    assert "wrote 4 repetitions of 2 cases" in head and "2 of the contract's 6 planned repetitions missing" in head
    assert "ok          3  no log holds it" in res.output.replace("  ", "  ") or "no log holds it" in res.output
    (log2,) = run_ops(tmp_path / "b", "ok,wrong", limit=1)  # --limit 1: `wrong` never ran
    (tmp_path / "c").mkdir()
    res, out, _ = convert(tmp_path / "c", [log2], ["ok", "wrong"])
    assert res.exit_code == 1
    assert "3 of the contract's 6 planned repetitions missing" in res.output.splitlines()[0]


# --------------------------------------------------------------------------- 6. a run that did not finish


def test_a_log_with_status_error_is_not_final(tmp_path):
    """fail_on_error (inspect_ai's default): boot's infrastructure error at epoch 2 stops the run (status error)."""
    (log,) = run_ops(tmp_path / "logs", "ok,boot", fail_on_error=True)
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(log), header_only=True)
    assert header.status == "error" and "SandboxBootError" in header.error.message
    res, out, _ = convert(tmp_path, [log], ["ok", "boot"])
    assert res.exit_code == 1, res.output
    head = res.output.splitlines()[0]
    assert f"NOT FINAL: log {log.name} ended with status error: SandboxBootError(" in head
    rec = next(iter(records(out).values()))
    assert rec["source"]["log_status"] == "error" and "SandboxBootError" in rec["source"]["log_error"]


def test_an_all_cancelled_log_gives_an_incomplete_result(tmp_path):
    (log,) = run_ops(tmp_path / "logs", "cut")
    res, out, _ = convert(tmp_path, [log], ["cut"])
    assert res.exit_code == 1, res.output
    assert out.read_bytes() == b""
    head = res.output.splitlines()[0]
    assert "wrote 0 repetitions" in head and "3 of the contract's 3 planned repetitions missing" in head
    assert "ended with status cancelled" in head
    code, doc, _ = score(tmp_path, tmp_path / "contract.json", out)  # scored: incomplete, never refused
    assert code == 1 and doc["status"] == "incomplete" and doc["cases"][0]["valid_comparable_repetition_count"] == 0


# --------------------------------------------------------------------------- 7. a closed stdout


def test_a_closed_stdout_never_changes_the_exit_code(tmp_path):
    root = Path(__file__).resolve().parents[2]
    (log,) = run_ops(tmp_path / "logs", "ok")
    c = write_json(tmp_path / "contract.json", contract(["ok"]))
    m = write_json(tmp_path / "mapping.json", MAPPING)
    exe = BIN / "benchscore"
    script = (f"{exe} mira score --contract {root}/examples/mira/contract.json --repetitions "
              f"{root}/examples/mira/repetitions.jsonl --output {tmp_path}/s.json | head -1; a=${{PIPESTATUS[0]}}; "
              f"{exe} mira from-inspect {log} --contract {c} --mapping {m} --output {tmp_path}/r.jsonl | head -1; "
              "b=${PIPESTATUS[0]}; echo \"codes $a $b\"")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.stdout.splitlines()[-1] == "codes 0 0", (proc.stdout, proc.stderr)
    assert proc.stderr == ""


# --------------------------------------------------------------------------- 8. where logs live


def test_a_log_folder_an_eval_set_and_several_logs(tmp_path):
    logs = tmp_path / "logs"
    run_ops(logs, "ok")
    run_ops(logs, "wrong", expect=2)  # a second log in the same folder: the other case
    res, out, _ = convert(tmp_path, [logs], ["ok", "wrong"])
    assert res.exit_code == 0, res.output
    assert set(records(out)) == {(c, e) for c in ("ok", "wrong") for e in (1, 2, 3)}
    # the same repetition twice (a folder and a log in it): refused
    (tmp_path / "d").mkdir()
    res, out, _ = convert(tmp_path / "d", [logs, sorted(logs.glob("*.eval"))[0]], ["ok", "wrong"])
    refused(res, out, "epoch 1 is also in", "one log per repetition")


def test_an_eval_set_folder_gives_the_final_log_of_each_task(tmp_path):
    folder = tmp_path / "set"
    code = (f"import sys; sys.path.insert(0, {str(OPS.parent)!r})\n"
            "from inspect_ai import eval_set\nfrom ops_task import ops\n"
            f"ok, logs = eval_set([ops(cases='ok'), ops(cases='wrong')], log_dir={str(folder)!r}, display='none', "
            "max_samples=1)\nassert ok, logs\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (folder / "eval-set.json").exists()
    finals = sorted(folder.glob("*.eval"))
    assert len(finals) == 2
    manifest = json.loads((folder / "eval-set.json").read_text())
    manifest["tasks"].append(dict(manifest["tasks"][0], task_id="never-ran"))  # a listed task that left no log
    (folder / "eval-set.json").write_text(json.dumps(manifest))
    older = folder / "2000-01-01T00-00-00-00-00_ops_older.eval"  # an earlier attempt of the first task
    shutil.copyfile(finals[0], older)
    os.utime(older, (time.time() - 3600, time.time() - 3600))
    res, out, _ = convert(tmp_path, [folder], ["ok", "wrong"])
    assert res.exit_code == 0, res.output
    assert set(records(out)) == {(c, e) for c in ("ok", "wrong") for e in (1, 2, 3)}
    assert "older logs of the task not read: 2000-01-01T00-00-00-00-00_ops_older.eval" in res.output
    assert res.output.count("no log of task(s) never-ran") == 1


def test_sample_ids_mapped_to_cases_and_samples_selected(tmp_path):
    (log,) = run_ops(tmp_path / "logs", "ok,HumanEval/0,wrong", epochs=1)
    res, out, _ = convert(tmp_path, [log], ["ok", "HumanEval-0"], planned=1)
    refused(res, out, "sample id 'HumanEval/0' is not a case", "map it with the mapping's case_ids")
    mapping = {**MAPPING, "case_ids": {"HumanEval/0": "HumanEval-0"}, "other_samples": "skip"}
    res, out, _ = convert(tmp_path, [log], ["ok", "HumanEval-0"], mapping, planned=1)
    assert res.exit_code == 0, res.output
    got = records(out)
    assert set(got) == {("ok", 1), ("HumanEval-0", 1)}
    assert got[("HumanEval-0", 1)]["source"]["sample_id"] == "HumanEval/0"
    assert "not contract cases (skipped)" in res.output


def test_logs_on_an_s3_compatible_server(tmp_path, s3_server, monkeypatch):
    import boto3

    url, env = s3_server
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    logs = tmp_path / "logs"
    (log_ok,) = run_ops(logs, "ok")
    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
    client.create_bucket(Bucket="bucket")
    client.upload_file(str(log_ok), "bucket", f"logs/{log_ok.name}")
    import fsspec.config

    fsspec.config.conf.clear()
    fsspec.config.set_conf_env(fsspec.config.conf)
    res, out, _ = convert(tmp_path, [f"s3://bucket/logs/{log_ok.name}"], ["ok"])
    assert res.exit_code == 0, res.output
    local = tmp_path / "local"
    local.mkdir()
    res_local, out_local, _ = convert(local, [log_ok], ["ok"])
    assert out.read_bytes() == out_local.read_bytes()  # the same records, the same sha256
    (tmp_path / "folder").mkdir()
    res, out, _ = convert(tmp_path / "folder", ["s3://bucket/logs/"], ["ok"])
    assert res.exit_code == 0, res.output and len(records(out)) == 3
    (tmp_path / "missing").mkdir()
    res, out, _ = convert(tmp_path / "missing", ["s3://bucket/logs/nope.eval"], ["ok"])
    refused(res, out, "s3://bucket/logs/nope.eval", "not found")


# --------------------------------------------------------------------------- 9. mockllm offline


def test_mockllm_is_offline_only_with_outputs_that_set_usage(tmp_path):
    """docs/inspect.md's snippet, run for real with every download made impossible (an empty tiktoken cache, a
    proxy that refuses): its outputs set usage and the sample succeeds; plain mockllm/model errors."""
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "inspect.md").read_text()
    section = doc.split("## Running inspect_ai offline", 1)[1].split("\n## ", 1)[0]
    (snippet,) = re.findall(r"```python\n(.+?)\n```", section, flags=re.S)
    script = snippet + (
        "\nimport sys\nfrom inspect_ai import Task, eval as inspect_eval\nfrom inspect_ai.dataset import Sample\n"
        "from inspect_ai.scorer import match\n"
        "chosen = model if sys.argv[1] == 'documented' else get_model('mockllm/model')\n"
        "(log,) = inspect_eval(Task(dataset=[Sample(input='6*7?', target='42')], scorer=match()), model=chosen,\n"
        "                      display='none', log_dir=sys.argv[2], fail_on_error=False, max_retries=0)\n"
        "print('ERROR' if log.samples[0].error else 'OK', log.samples[0].scores['match'].value "
        "if log.samples[0].scores else '-')\n")
    (tmp_path / "offline.py").write_text(script)
    env = {k: v for k, v in ENV.items() if k.lower() not in ("no_proxy", "tiktoken_cache_dir")}
    env |= {"TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"), "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    outcome = {}
    for variant in ("documented", "plain"):
        proc = subprocess.run([sys.executable, str(tmp_path / "offline.py"), variant, str(tmp_path / variant)],
                              capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
        outcome[variant] = proc.stdout.split()[-2:] if proc.stdout.split() else proc.stderr[-2000:]
    assert outcome["documented"] == ["OK", "C"], outcome
    assert outcome["plain"][0] == "ERROR", outcome
