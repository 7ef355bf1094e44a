"""`benchscore mira from-inspect` on real inspect_ai runs (docs/inspect.md).

The evaluations are run for real in a subprocess (``examples/mira/inspect/agent_eval.py``, the offline
``mockllm/model`` provider): six cases x 3 epochs with an infrastructure error, an agent error, a
time limit hit on every epoch of one case and a Ctrl-C (SIGINT) during the last sample. The test
reads the ``.eval`` log inspect_ai wrote, converts it, and checks every repetition and the Mira score
against values worked out by hand from the task's answer table.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest
from mira_helpers import run, write_json

pytestmark = [pytest.mark.inspect, pytest.mark.usefixtures("inspect_ai_installed")]

HERE = Path(__file__).resolve().parent / "inspect"
AGENT_EVAL = Path(__file__).resolve().parents[2] / "examples" / "mira" / "inspect" / "agent_eval.py"
CASES = ("GOOD", "FLAKY", "INFRA", "SLOW", "BROKE", "CUT")


def run_eval(log_dir: Path, variant: str) -> Path:
    """Run ``agent_eval.py`` for real; returns the one log it wrote."""
    env = dict(os.environ, INSPECT_LOG_LEVEL="error", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(AGENT_EVAL), str(log_dir), variant], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL, timeout=300)
    logs = sorted(log_dir.glob("*.eval"))
    assert len(logs) == 1, (variant, proc.returncode, proc.stdout[-2000:], proc.stderr[-4000:])
    return logs[0]


@pytest.fixture(scope="module")
def agent_log(tmp_path_factory, inspect_ai_installed) -> Path:
    return run_eval(tmp_path_factory.mktemp("agent-logs"), "agent")


def contract(diagnostic: tuple[str, ...] = (), judge: bool = False, cases: tuple[str, ...] = CASES) -> dict:
    out = []
    for c in cases:
        criteria = [{"id": "answer_correct", "weight": 0.5, "scorer": "deterministic"},
                    {"id": "tests_pass", "weight": 0.5, "scorer": "deterministic"}]
        if judge:
            criteria = [{"id": "answer_correct", "weight": 0.5, "scorer": "deterministic"},
                        {"id": "report_clear", "weight": 0.5, "scorer": "judge",
                         "question": "Does the final answer state the result plainly? Answer pass or fail."}]
        timed = c not in diagnostic
        out.append({"case_id": c, "intent": f"fix the build ({c})", "difficulty": "easy",
                    "prompt": f"Task {c}: fix the failing build and report the answer",
                    "scoring_class": "automated_scored" if timed else "diagnostic_untimed",
                    "t_soft_s": 30.0 if timed else None, "criteria": criteria})
    return {"benchmark_id": "inspect-agent", "contract_version": "0.1", "cases": out}


MAPPING = {
    "format": "mira-inspect-mapping",
    "execution_mode": "adapted",
    "criteria": {
        "answer_correct": {"scorer": "answer", "satisfied": ["C"], "unsatisfied": ["I", "P", "N"]},
        "tests_pass": {"scorer": "answer", "metadata_key": "tests_passed", "at_least": 3},
    },
    "errors": {"infrastructure": [{"type": "SandboxStartError"}], "agent": [{"type": "AgentGaveUp"}]},
    "evidence": {"final_answer": "output", "workspace": "metadata.notes"},
}


def convert(tmp: Path, logs: list[Path], *, contract_doc: dict | None = None, mapping: dict | None = None):
    c = write_json(tmp / "contract.json", contract_doc or contract())
    m = write_json(tmp / "mapping.json", mapping or MAPPING)
    out = tmp / "reps.jsonl"
    res = run("from-inspect", *logs, "--contract", c, "--mapping", m, "--output", out)
    return res, out, c


def records(path: Path) -> dict[tuple[str, int], dict]:
    return {(r["case_id"], r["repetition"]): r for r in map(orjson.loads, path.read_bytes().splitlines())}


# what the answer table of agent_eval.py gives, worked out by hand:
# (case, epoch) -> (execution_mode, terminal_state, answer_correct, tests_pass); None = no record
EXPECTED = {
    ("GOOD", 1): ("adapted", "completed", True, True), ("GOOD", 2): ("adapted", "completed", True, True),
    ("GOOD", 3): ("adapted", "completed", True, True),
    ("FLAKY", 1): ("adapted", "completed", True, True), ("FLAKY", 2): ("adapted", "completed", False, True),
    ("FLAKY", 3): ("adapted", "completed", False, False),
    ("INFRA", 1): ("adapted", "completed", True, True), ("INFRA", 2): ("invalid", "failed", None, None),
    ("INFRA", 3): ("adapted", "completed", True, True),
    # the time limit stops SLOW before it answers: the scorer sees no answer and no tests
    ("SLOW", 1): ("adapted", "cancelled", False, False), ("SLOW", 2): ("adapted", "cancelled", False, False),
    ("SLOW", 3): ("adapted", "cancelled", False, False),
    ("BROKE", 1): ("adapted", "failed", False, False), ("BROKE", 2): ("adapted", "completed", True, True),
    ("BROKE", 3): ("adapted", "completed", True, True),
    ("CUT", 1): ("adapted", "completed", True, True), ("CUT", 2): ("adapted", "completed", True, True),
    ("CUT", 3): None,
}


def test_every_sample_x_epoch_becomes_one_repetition(tmp_path, agent_log):
    from inspect_ai.log import read_eval_log

    res, out, _ = convert(tmp_path, [agent_log])
    assert res.exit_code == 1, res.output  # the log is cancelled: written, not final
    got = records(out)
    assert set(got) == {k for k, v in EXPECTED.items() if v is not None}
    log = read_eval_log(str(agent_log))
    assert log.status == "cancelled" and log.eval.config.epochs == 3
    samples = {(str(s.id), s.epoch): s for s in log.samples}
    sha = hashlib.sha256(agent_log.read_bytes()).hexdigest()
    for key, want in EXPECTED.items():
        if want is None:
            continue
        rec, sample = got[key], samples[key]
        mode, state, answer_ok, tests_ok = want
        assert (rec["execution_mode"], rec["terminal_state"]) == (mode, state), key
        if mode == "invalid":
            assert "deterministic_results" not in rec
        else:
            assert rec["deterministic_results"] == {"answer_correct": answer_ok, "tests_pass": tests_ok}, key
        assert rec["elapsed_s"] == sample.working_time, key  # working_time is the elapsed time
        assert rec["evidence"] == {"final_answer": sample.output.completion, "workspace": f"workspace of {key[0]}"}
        src = rec["source"]
        assert src["log"] == agent_log.name and src["log_sha256"] == sha
        assert (src["eval_id"], src["run_id"], src["task"], src["model"]) == (
            log.eval.eval_id, log.eval.run_id, "agent_agent", "mockllm/model")
        assert (src["sample_id"], src["epoch"], src["tool"]) == (key[0], key[1], "inspect_ai")
        assert src["inspect_ai_version"] == log.eval.packages["inspect_ai"]
        assert src["mapping_sha256"] == hashlib.sha256((tmp_path / "mapping.json").read_bytes()).hexdigest()
        assert src["log_status"] == "cancelled"
    assert got[("INFRA", 2)]["source"]["error_kind"] == "infrastructure"
    assert "sandbox container failed to start" in got[("INFRA", 2)]["source"]["error"]
    assert got[("BROKE", 1)]["source"]["error_kind"] == "agent"
    assert all(got[("SLOW", e)]["source"]["limit"] == "time" for e in (1, 2, 3))
    # the interrupted sample is in the log (with the cancellation's error) but is no repetition
    assert samples[("CUT", 3)].error is not None and "CancelledError" in samples[("CUT", 3)].error.message
    assert "CUT" in res.output and "cancelled with the eval" in res.output
    assert res.output.startswith("mira from-inspect: wrote 17 repetitions of 6 cases from 1 log(s)")
    head = res.output.splitlines()[0]
    assert "1 infrastructure-invalid, 1 of the contract's 18 planned repetitions missing" in head
    assert f"NOT FINAL: log {agent_log.name} ended with status cancelled" in head


def test_the_mira_score_of_the_log_is_the_one_worked_out_by_hand(tmp_path, agent_log):
    res, out, c = convert(tmp_path, [agent_log])
    assert res.exit_code == 1, res.output  # the log is cancelled: written, not final
    score_path = tmp_path / "score.json"
    res = run("score", "--contract", c, "--repetitions", out, "--output", score_path)
    score = orjson.loads(score_path.read_bytes())
    assert res.exit_code == (0 if score["status"] == "complete" else 1), res.output
    assert score["status"] == "incomplete"
    assert {m["case_id"] for m in score["missing"]} == {"INFRA", "CUT"}  # 2 of 3 valid comparable each
    assert score["infrastructure_invalid_count"]["value"] == 1
    cases = {c["case_id"]: c for c in score["cases"]}

    def metrics(case: str) -> dict:
        return {k: v["value"] for k, v in cases[case]["metrics"].items()}

    good, flaky, slow, broke = metrics("GOOD"), metrics("FLAKY"), metrics("SLOW"), metrics("BROKE")
    # GOOD: pass, pass, pass
    assert (good["reliability"], good["pass_at_1"], good["stable_at_3"], good["complete_at_3"]) == (100.0, True, True, True)
    assert good["task_success"] == 1.0
    # FLAKY: pass, partial (0.5), fail -> 1 on-time pass of 3; Task Success (1 + 0.5 + 0) / 3
    assert (flaky["reliability"], flaky["pass_at_1"], flaky["stable_at_3"], flaky["complete_at_3"]) == (
        1 / 3 * 100, True, False, False)
    assert flaky["task_success"] == 0.5
    # SLOW: the time limit every epoch -> no completion, credit 0: fail x3
    assert (slow["reliability"], slow["pass_at_1"], slow["task_success"]) == (0.0, False, 0.0)
    # BROKE: the agent's error (fail), then pass, pass
    assert (broke["reliability"], broke["pass_at_1"], broke["stable_at_3"]) == (2 / 3 * 100, False, False)
    assert broke["task_success"] == 2 / 3
    for case in ("INFRA", "CUT"):  # incomplete: never averaged from the 2 they have
        assert cases[case]["status"] == "incomplete"
        assert cases[case]["valid_comparable_repetition_count"] == 2
        assert all(v is None for v in metrics(case).values())
    reps = {r["id"]: r for r in score["repetitions"]}
    assert reps["INFRA#2"]["comparability"] == "infrastructure" and reps["INFRA#2"]["status"] is None
    assert [reps[f"SLOW#{e}"]["timing_credit"] for e in (1, 2, 3)] == [0.0, 0.0, 0.0]
    assert score["overall"]["reliability"]["value"] is None  # two cases are incomplete
    (source,) = score["provenance"]["sources"]  # mira score names the log it came from
    assert source["log"] == agent_log.name and source["repetitions"] == 17
    assert source["log_sha256"] == hashlib.sha256(agent_log.read_bytes()).hexdigest()


def test_overall_over_the_formal_cases(tmp_path, agent_log):
    """INFRA and CUT as diagnostic_untimed: the automated_scored aggregate is formal over the other four."""
    res, out, c = convert(tmp_path, [agent_log], contract_doc=contract(diagnostic=("INFRA", "CUT")))
    assert res.exit_code == 1, res.output  # the log is cancelled: written, not final
    score_path = tmp_path / "score.json"
    code = run("score", "--contract", c, "--repetitions", out, "--output", score_path).exit_code
    score = orjson.loads(score_path.read_bytes())
    assert code == (0 if score["status"] == "complete" else 1)
    overall = {k: v["value"] for k, v in score["overall"].items()}
    # 12 repetitions of GOOD, FLAKY, SLOW, BROKE: on-time passes 3 + 1 + 0 + 2 = 6
    assert overall["on_time_pass_count"] == 6 and overall["valid_comparable_repetition_count"] == 12
    assert overall["reliability"] == 50.0
    # official task success 3 x 1 + (1 + 0.5 + 0) + 0 + (0 + 1 + 1) = 6.5 over 12
    assert overall["task_success"] == pytest.approx(6.5 / 12, abs=1e-15)
    # Pass@1 GOOD and FLAKY; Stable@3 and Complete@3 GOOD only: percent of the 4 cases
    assert (overall["pass_at_1"], overall["stable_at_3"], overall["complete_at_3"]) == (50.0, 25.0, 25.0)
    assert score["status"] == "incomplete"  # the diagnostic cases still miss a repetition each


def test_the_same_inputs_give_the_same_bytes(tmp_path, agent_log):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    assert convert(a, [agent_log])[0].exit_code == 1
    assert convert(b, [agent_log])[0].exit_code == 1
    assert (a / "reps.jsonl").read_bytes() == (b / "reps.jsonl").read_bytes()


def test_judge_criteria_get_evidence_never_a_verdict(tmp_path, agent_log):
    """An inspect_ai score never answers a judge criterion: the record carries evidence, the judge packets
    hold it, and until `mira judge` answers, the cases are unscored (incomplete)."""
    mapping = {**MAPPING, "criteria": {"answer_correct": MAPPING["criteria"]["answer_correct"]}}
    res, out, c = convert(tmp_path, [agent_log], contract_doc=contract(judge=True), mapping=mapping)
    assert res.exit_code == 1, res.output  # the log is cancelled: written, not final
    rec = records(out)[("GOOD", 1)]
    assert "judge_verdicts" not in rec and rec["deterministic_results"] == {"answer_correct": True}
    packets = tmp_path / "packets"
    assert run("judge-packets", "--contract", c, "--repetitions", out, "--output-dir", packets).exit_code == 0
    packet = next(doc for doc in (orjson.loads(p.read_bytes()) for p in sorted(packets.glob("*.json"))
                                  if p.name != "index.json")
                  if (doc["case_id"], doc["repetition"]) == ("GOOD", 1))
    assert packet["evidence"]["final_answer"] == "42 tests:3"
    # a mapping that maps the judge criterion is refused
    bad = {**MAPPING, "criteria": {**mapping["criteria"], "report_clear": {"scorer": "llm_check", "satisfied": ["C"],
                                                                           "unsatisfied": ["I"]}}}
    (tmp_path / "bad").mkdir()
    res, out2, _ = convert(tmp_path / "bad", [agent_log], contract_doc=contract(judge=True), mapping=bad)
    assert res.exit_code == 2
    assert "is a judge criterion: an inspect_ai score is never a Mira judge verdict" in res.stderr
    assert not out2.exists()


def test_a_model_graded_scorer_is_refused(tmp_path, agent_log):
    """llm_check asks the model to grade: the log shows a model call inside its scorer span."""
    mapping = {**MAPPING, "criteria": {**MAPPING["criteria"],
                                       "tests_pass": {"scorer": "llm_check", "satisfied": ["C"], "unsatisfied": ["I"]}}}
    res, out, _ = convert(tmp_path, [agent_log], mapping=mapping)
    assert res.exit_code == 2
    line, = res.stderr.splitlines()
    assert "scorer 'llm_check' called a model while scoring (a model-graded score)" in line
    assert agent_log.name in line and "sample 'GOOD' epoch 1" in line
    assert not out.exists()


def test_an_invalidated_sample_is_diagnostic(tmp_path, agent_log):
    from inspect_ai.log import ProvenanceData, invalidate_samples, read_eval_log, write_eval_log

    log = read_eval_log(str(agent_log))
    uuid = next(s.uuid for s in log.samples if (s.id, s.epoch) == ("GOOD", 2))
    edited = tmp_path / "edited.eval"
    write_eval_log(invalidate_samples(log, [uuid], ProvenanceData(author="t", reason="reward hack")), str(edited))
    res, out, _ = convert(tmp_path, [edited])
    assert res.exit_code == 1, res.output  # the log is cancelled: written, not final
    got = records(out)
    assert got[("GOOD", 2)]["execution_mode"] == "noncanonical"
    assert got[("GOOD", 1)]["execution_mode"] == "adapted"  # only the invalidated sample


def test_one_console_run_as_a_subprocess(tmp_path, agent_log):
    c = write_json(tmp_path / "contract.json", contract())
    m = write_json(tmp_path / "mapping.json", MAPPING)
    out = tmp_path / "reps.jsonl"
    exe = Path(sys.executable).parent / "benchscore"
    proc = subprocess.run([str(exe), "mira", "from-inspect", str(agent_log), "--contract", str(c), "--mapping", str(m),
                           "--output", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr  # the log is cancelled
    assert len(out.read_bytes().splitlines()) == 17


# --------------------------------------------------------------------------- bad input


def _refused(res, out: Path, *fragments: str) -> str:
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    assert not out.exists()
    assert "Traceback" not in res.output
    return lines[0]


def test_a_log_of_another_inspect_version(tmp_path):
    old = HERE / "inspect-0.3.43_input-task.eval"  # a real log from inspect_ai 0.3.43 (see inspect/README.md)
    res, out, _ = convert(tmp_path, [old])
    _refused(res, out, old.name, "written by inspect_ai 0.3.43", "0.3.94")


def test_a_log_of_another_file_format_version(tmp_path, agent_log):
    """The real log with its header's format version changed to 3 (the one edit)."""
    edited = tmp_path / "format3.eval"
    with zipfile.ZipFile(agent_log) as src, zipfile.ZipFile(edited, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename in ("header.json", "_journal/start.json"):
                doc = orjson.loads(data)
                doc["version"] = 3
                data = orjson.dumps(doc)
            dst.writestr(item, data)
    res, out, _ = convert(tmp_path, [edited])
    _refused(res, out, "format3.eval", "log file format version 3", "format version 2")


def test_a_log_without_samples(tmp_path, inspect_ai_installed):
    log = run_eval(tmp_path / "logs", "nosamples")
    res, out, _ = convert(tmp_path, [log], contract_doc=contract(cases=("GOOD",)))
    _refused(res, out, log.name, "holds no samples (written with --no-log-samples)")


def test_a_log_that_never_finished(tmp_path, inspect_ai_installed):
    log = run_eval(tmp_path / "logs", "crash")
    res, out, _ = convert(tmp_path, [log], contract_doc=contract(cases=("GOOD",)))
    _refused(res, out, log.name, "status 'started'")


def test_a_mapping_naming_a_scorer_the_log_lacks(tmp_path, agent_log):
    mapping = {**MAPPING, "criteria": {**MAPPING["criteria"],
                                       "tests_pass": {"scorer": "pytest_runner", "at_least": 1}}}
    res, out, _ = convert(tmp_path, [agent_log], mapping=mapping)
    _refused(res, out, agent_log.name, "scorer 'pytest_runner'", "the log's scorers are answer, llm_check")


def test_a_sample_id_that_is_not_a_case(tmp_path, agent_log):
    res, out, _ = convert(tmp_path, [agent_log], contract_doc=contract(cases=("GOOD", "FLAKY", "INFRA", "SLOW", "BROKE")))
    _refused(res, out, agent_log.name, "sample 'CUT' epoch 1", "sample id 'CUT' is not a case of the contract")


def test_an_error_no_rule_classifies(tmp_path, agent_log):
    mapping = {**MAPPING, "errors": {"infrastructure": [{"type": "SandboxStartError"}]}}
    line = _refused(*convert(tmp_path, [agent_log], mapping=mapping)[:2], "sample 'BROKE' epoch 1",
                    "matches no rule of the mapping's errors")
    assert "AgentGaveUp" in line
    both = {**MAPPING, "errors": {"infrastructure": [{"message_contains": "failed"}], "agent": [{"type": "AgentGaveUp"}]}}
    res, out, _ = convert(tmp_path, [agent_log], mapping=both)
    _refused(res, out, "matches both errors.infrastructure and errors.agent")
    # errors.otherwise decides for every error no rule names
    lenient = {**MAPPING, "errors": {"otherwise": "infrastructure"}}
    res, out, _ = convert(tmp_path, [agent_log], mapping=lenient)
    assert res.exit_code == 1, res.output  # the log is cancelled: written, not final
    assert records(out)[("BROKE", 1)]["execution_mode"] == "invalid"


def test_a_non_finite_score_value(tmp_path, agent_log):
    mapping = {**MAPPING, "criteria": {**MAPPING["criteria"],
                                       "tests_pass": {"scorer": "answer", "metadata_key": "ratio", "at_least": 0.5}}}
    res, out, _ = convert(tmp_path, [agent_log], mapping=mapping)
    _refused(res, out, "sample 'GOOD' epoch 1", "metadata['ratio'] is nan, not a finite number")


def test_a_value_neither_list_names(tmp_path, agent_log):
    mapping = {**MAPPING, "criteria": {**MAPPING["criteria"],
                                       "answer_correct": {"scorer": "answer", "satisfied": ["C"], "unsatisfied": ["P"]}}}
    res, out, _ = convert(tmp_path, [agent_log], mapping=mapping)
    _refused(res, out, "value 'I' is in neither satisfied ['C'] nor unsatisfied ['P']")


def test_the_same_repetition_in_two_logs(tmp_path, agent_log):
    twin = tmp_path / "twin.eval"
    shutil.copyfile(agent_log, twin)
    res, out, _ = convert(tmp_path, [agent_log, twin])
    _refused(res, out, "twin.eval", "case 'GOOD' epoch 1 is also in " + agent_log.name)


def test_a_file_that_is_not_a_log(tmp_path):
    junk = tmp_path / "junk.eval"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    res, out, _ = convert(tmp_path, [junk])
    _refused(res, out, "junk.eval", "not a readable inspect_ai log")


@pytest.mark.parametrize("mapping, fragment", [
    ({**MAPPING, "execution_mode": "invalid"}, "execution_mode"),
    ({**MAPPING, "criteria": {"answer_correct": {"scorer": "answer", "satisfied": ["C"]}}}, "give both lists"),
    ({**MAPPING, "criteria": {"answer_correct": {"scorer": "answer", "at_least": 1, "below": 3}}}, "exactly one threshold"),
    ({**MAPPING, "criteria": {"answer_correct": {"scorer": "answer", "satisfied": ["C"], "unsatisfied": ["C"]}}},
     "in both satisfied and unsatisfied"),
    ({**MAPPING, "criteria": {"no_such": {"scorer": "answer", "at_least": 1}}}, "not a criterion of any case"),
    ({**MAPPING, "criteria": {"answer_correct": MAPPING["criteria"]["answer_correct"]}},
     "no rule for the deterministic criterion 'tests_pass'"),
    ({**MAPPING, "criteria": {**MAPPING["criteria"], "tests_pass": {"scorer": "model_graded_qa", "satisfied": ["C"],
                                                                   "unsatisfied": ["I"]}}}, "is model-graded"),
    ({**MAPPING, "evidence": {"x": "messages"}}, "evidence.x"),
    ({**MAPPING, "surprise": 1}, "surprise"),
])
def test_a_malformed_mapping(tmp_path, agent_log, mapping, fragment):
    res, out, _ = convert(tmp_path, [agent_log], mapping=mapping)
    _refused(res, out, "mapping.json", fragment)


def test_a_mapping_with_a_duplicate_key(tmp_path, agent_log):
    c = write_json(tmp_path / "contract.json", contract())
    m = tmp_path / "mapping.json"
    m.write_text('{"format": "mira-inspect-mapping", "execution_mode": "adapted", "execution_mode": "canonical", '
                 '"criteria": {}}')
    out = tmp_path / "reps.jsonl"
    res = run("from-inspect", agent_log, "--contract", c, "--mapping", m, "--output", out)
    _refused(res, out, "mapping.json", "duplicate key")


def test_the_bundled_example_gives_its_expected_outputs(tmp_path, monkeypatch):
    """examples/mira/inspect: the real log converted and scored, byte for byte as committed."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    ex = Path(__file__).resolve().parents[2] / "examples" / "mira" / "inspect"
    reps, score = tmp_path / "repetitions.jsonl", tmp_path / "score.json"
    r = run("from-inspect", ex / "agent.eval", "--contract", ex / "contract.json", "--mapping", ex / "mapping.json",
            "--output", reps)
    assert r.exit_code == 1, r.output  # the log is cancelled
    assert reps.read_bytes() == (ex / "expected" / "repetitions.jsonl").read_bytes()
    r = run("score", "--contract", ex / "contract.json", "--repetitions", reps, "--output", score, "--quiet")
    assert r.exit_code == 1, r.output  # the example's score is incomplete (a missing epoch): exit 1, written
    assert score.read_bytes() == (ex / "expected" / "score.json").read_bytes()


def readme_blocks() -> list[str]:
    import re

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text.split("\n## inspect_ai\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_the_readme_inspect_section_runs(tmp_path):
    """The README's inspect_ai section, first block (offline), run as written in a folder with the examples."""
    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "examples" / "mira" / "inspect", tmp_path / "examples" / "mira" / "inspect")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    block = readme_blocks()[0]
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    score = orjson.loads((tmp_path / "out" / "inspect" / "score.json").read_bytes())
    assert score["status"] == "incomplete" and {m["case_id"] for m in score["missing"]} == {"INFRA", "CUT"}


def test_a_json_log_gives_the_same_repetitions(tmp_path, agent_log):
    """The same log written in inspect_ai's .json format (`--log-format json`)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    as_json = tmp_path / "agent.json"
    write_eval_log(read_eval_log(str(agent_log)), str(as_json))
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    res_eval, out_eval, _ = convert(tmp_path / "a", [agent_log])
    res_json, out_json, _ = convert(tmp_path / "b", [as_json])
    assert res_eval.exit_code == 1 and res_json.exit_code == 1, res_json.output

    def without_file(r: dict) -> dict:
        return {**r, "source": {k: v for k, v in r["source"].items() if k not in ("log", "log_sha256")}}

    a, b = records(out_eval), records(out_json)
    assert {k: without_file(v) for k, v in a.items()} == {k: without_file(v) for k, v in b.items()}
