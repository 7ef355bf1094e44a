"""rxn as inspect_ai tasks, and `rxn eval-mc / eval-fib --from-inspect LOG`, on real inspect_ai runs.

The tasks run for real: with the offline ``mockllm/model`` provider and answers the test chooses
(right, wrong, unparseable, out of range, a failed call), and through inspect_ai's own command line
(``inspect eval src/benchscore/rxn/inspect.py@rxn_mc``) with its ``openai-api`` provider against the
project's local OpenAI-compatible test server. The metrics the inspect scorer reported must equal
what ``--from-inspect`` computes from the same log, and what ``rxn eval-*`` computes from the
equivalent prediction file.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.rxn.prompts import render

pytestmark = [pytest.mark.inspect, pytest.mark.usefixtures("inspect_ai_installed")]

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).resolve().parent / "inspect" / "run_rxn.py"
TASK_FILE = ROOT / "src" / "benchscore" / "rxn" / "inspect.py"


def rxn(*args) -> object:
    return CliRunner().invoke(cli, ["rxn", *map(str, args)])


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("rxn-builds")
    for command in ("build-mc", "build-fib"):
        r = rxn(command, "--bundled", "deoxyfluorination", "--output-dir", root)
        assert r.exit_code == 0, r.output
    (mc,) = root.glob("*_multiple_choice")
    (fib,) = root.glob("*_fill_in_blank")
    return mc, fib


def samples_of(dataset: Path) -> list[dict]:
    return json.loads(dataset.read_text())["samples"]


def prompt_of(dataset: Path, sample: dict) -> str:
    return render(sample, (dataset.parent / f"prompt_{sample['question_type']}.txt").read_text())


def run_task(tmp: Path, task: str, dataset: Path, answers: dict[str, str | None], epochs: int = 1,
             fail: bool = False) -> Path:
    """Run the task for real (mockllm answers each prompt as ``answers`` says); returns its log. ``fail``:
    inspect_ai's fail_on_error stops the run at the first failed call (status error)."""
    (tmp / "answers.json").write_text(json.dumps(answers))
    log_dir = tmp / "logs"
    env = dict(os.environ, INSPECT_LOG_LEVEL="error", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(RUNNER), task, str(dataset), str(tmp / "answers.json"), str(log_dir),
                           str(epochs), *(["fail"] if fail else [])], capture_output=True, text=True, env=env,
                          timeout=300, stdin=subprocess.DEVNULL)
    logs = sorted(log_dir.glob("*.eval"))
    assert (proc.returncode == 0 or fail) and len(logs) == 1, proc.stderr[-4000:]
    return logs[0]


def inspect_metrics(log: Path) -> dict:
    from inspect_ai.log import read_eval_log

    (score,) = read_eval_log(str(log), header_only=True).results.scores
    return {k: m.value for k, m in score.metrics.items()}


def same_metrics(reported: dict, computed: dict) -> None:
    """inspect_ai stores metrics as floats and a missing value as NaN; the V6 output has ints and null."""
    assert set(reported) == set(computed)
    for key, value in computed.items():
        if value is None:
            assert math.isnan(reported[key]), key
        else:
            assert reported[key] == value, (key, reported[key], value)


# the answers chosen for the multiple-choice questions, by position: right, wrong, unparseable, out of
# range, an answer in words, a JSON answer, a failed model call
MC_KINDS = ("right", "wrong", "unparseable", "out_of_range", "words", "json", "failed")


def mc_answers(samples: list[dict]) -> tuple[dict[str, tuple[str | None, object]], dict[str, object]]:
    """(sample id -> (answer text, what rxn predict writes for it)), and the equivalent prediction file."""
    chosen, predictions = {}, {}
    for i, s in enumerate(samples):
        kind = MC_KINDS[i % len(MC_KINDS)]
        best = s["answer"][0]
        wrong = next(j for j in range(len(s["options"])) if j not in s["answer"])
        text, pred = {
            "right": (str(best), best),
            "wrong": (f"The best choice is option {wrong}.", wrong),
            "unparseable": ("I cannot decide between them.", "I cannot decide between them."),
            "out_of_range": ("99", 99),
            "words": (f"Option {best}: it has the highest effective score.", best),
            "json": (json.dumps({"answer": wrong}), wrong),
            "failed": (None, None),
        }[kind]
        chosen[s["id"]] = (text, pred)
        if text is not None:
            predictions[s["id"]] = pred
    return chosen, predictions


@pytest.fixture(scope="module")
def mc_run(builds, tmp_path_factory):
    mc, _ = builds
    dataset = mc / "multiple_choice_all_varying.json"
    samples = samples_of(dataset)
    chosen, predictions = mc_answers(samples)
    tmp = tmp_path_factory.mktemp("mc-run")
    log = run_task(tmp, "rxn_mc", dataset, {prompt_of(dataset, s): chosen[s["id"]][0] for s in samples})
    return dataset, log, chosen, predictions


def test_mc_from_inspect_equals_the_inspect_scorer_and_eval_mc(mc_run, tmp_path):
    dataset, log, chosen, predictions = mc_run
    out, saved = tmp_path / "eval.json", tmp_path / "pred.json"
    r = rxn("eval-mc", "--dataset", dataset, "--from-inspect", log, "--save-prediction", saved, "--output", out)
    assert r.exit_code == 0, r.output
    result = json.loads(out.read_text())
    # the metrics the inspect scorer reported in the log are the V6 metrics of the same answers
    same_metrics(inspect_metrics(log), result["overall"])
    # the answers became the prediction file rxn predict writes for them (a failed call: no prediction)
    assert json.loads(saved.read_text()) == predictions
    # and rxn eval-mc on that file (and on the equivalent one written here) gives the same scores
    for pred_file in (saved, tmp_path / "equivalent.json"):
        if not pred_file.exists():
            pred_file.write_text(json.dumps(predictions))
        plain = tmp_path / f"plain-{pred_file.stem}.json"
        assert rxn("eval-mc", "--dataset", dataset, "--prediction", pred_file, "--output", plain).exit_code == 0
        other = json.loads(plain.read_text())
        assert (other["overall"], other["per_dataset"], other["per_sample"]) == (
            result["overall"], result["per_dataset"], result["per_sample"])
    n = len(chosen)
    kinds = [MC_KINDS[i % len(MC_KINDS)] for i in range(n)]
    o = result["overall"]
    assert o["num_samples"] == n
    assert o["num_missing"] == kinds.count("failed")  # a failed call is missing, never dropped from N
    assert o["num_invalid"] == kinds.count("unparseable") + kinds.count("out_of_range")
    assert o["exact_match_accuracy"] == (kinds.count("right") + kinds.count("words")) / n
    # provenance names the log
    prov = result["provenance"]
    assert f"inspect_log/{log.name}" in prov["inputs"] and "prediction" not in prov["inputs"]
    (entry,) = prov["from_inspect"]
    assert (entry["log"], entry["model"], entry["answers"], entry["errored_samples"]) == (
        log.name, "mockllm/model", n - kinds.count("failed"), kinds.count("failed"))
    assert f"from inspect_ai log {log.name}" in r.output


def test_the_scorer_metadata_per_question(mc_run):
    from inspect_ai.log import read_eval_log

    dataset, log, chosen, _ = mc_run
    samples = {s["id"]: s for s in samples_of(dataset)}
    for sample in read_eval_log(str(log)).samples:
        text, pred = chosen[sample.id]
        if text is None:
            assert sample.error is not None and not sample.scores
            continue
        score = sample.scores["rxn_relative_score"]
        meta = score.metadata
        assert meta["prediction"] == pred and score.answer == text
        s = samples[sample.id]
        if isinstance(pred, int) and 0 <= pred < len(s["options"]):
            assert meta["status"] == "scored" and meta["parse"] == "answered"
            assert score.value == s["meta"]["option_relative_scores"][pred]
            assert meta["exact_match"] is (pred in s["answer"])
        else:
            assert meta["status"] == "invalid" and score.value == 0.0
            assert meta["parse"] == ("unparseable" if isinstance(pred, str) else "answered")
    assert read_eval_log(str(log), header_only=True).eval.metadata["rxn_dataset"]["name"] == dataset.name


def fib_answers(samples: list[dict]) -> tuple[dict[str, str | None], dict[str, object]]:
    """right, unhit (valid indices, no table row), wrong keys, unparseable, failed, by position."""
    chosen, predictions = {}, {}
    for i, s in enumerate(samples):
        keys = s["query_keys"]
        combos = {tuple(c["indices"][k] for k in keys) for c in s["meta"]["legal_combinations"]}
        sizes = [len(s["input"]["candidate_values"][k]) for k in keys]
        best = max(s["meta"]["legal_combinations"], key=lambda c: c["relative_score"])["indices"]
        unhit = next((dict(zip(keys, t, strict=True)) for t in _grid(sizes) if t not in combos), None)
        kind = ("right", "unhit", "wrong_keys", "unparseable", "failed")[i % 5]
        if kind == "unhit" and unhit is None:
            kind = "right"
        text, pred = {
            "right": (f"```json\n{json.dumps(best)}\n```", best),
            "unhit": (json.dumps(unhit), unhit),
            "wrong_keys": (json.dumps({"solvent": 0}), None),
            "unparseable": ("Use the first ones.", "Use the first ones."),
            "failed": (None, None),
        }[kind]
        if kind == "wrong_keys":  # no object with exactly the query keys: unparseable, the raw text
            pred = text
        chosen[s["id"]] = text
        if text is not None:
            predictions[s["id"]] = pred
    return chosen, predictions


def _grid(sizes: list[int]):
    import itertools

    return itertools.product(*(range(n) for n in sizes))


def test_fib_from_inspect_equals_the_inspect_scorer_and_eval_fib(builds, tmp_path):
    _, fib = builds
    # the reference rows are no legal answer there (seed section 9): a combination that is unhit
    dataset = fib / "fill_in_blank_all_blank_reference.json"
    samples = samples_of(dataset)
    chosen, predictions = fib_answers(samples)
    log = run_task(tmp_path, "rxn_fib", dataset, {prompt_of(dataset, s): chosen[s["id"]] for s in samples})
    out, saved = tmp_path / "eval.json", tmp_path / "pred.json"
    r = rxn("eval-fib", "--dataset", dataset, "--from-inspect", log, "--save-prediction", saved, "--output", out)
    assert r.exit_code == 0, r.output
    result = json.loads(out.read_text())
    same_metrics(inspect_metrics(log), result["overall"])
    assert json.loads(saved.read_text()) == predictions
    (tmp_path / "equivalent.json").write_text(json.dumps(predictions))
    plain = tmp_path / "plain.json"
    assert rxn("eval-fib", "--dataset", dataset, "--prediction", tmp_path / "equivalent.json", "--output",
               plain).exit_code == 0
    assert json.loads(plain.read_text())["overall"] == result["overall"]
    o = result["overall"]
    assert o["num_unhit"] > 0 and o["num_missing"] > 0 and o["num_invalid"] > 0 and o["num_scored"] > 0


def test_inspect_eval_command_line_against_a_local_gateway(builds, tmp_path):
    """`inspect eval src/benchscore/rxn/inspect.py@rxn_mc -T dataset=... --model openai-api/local/M` for real:
    inspect_ai's own CLI and openai-api provider, the project's OpenAI-compatible test server; the
    prompts it sends are the dataset's own; --limit leaves the other questions missing, in both."""
    from benchscore.common.testserver import OpenAITestServer

    mc, _ = builds
    dataset = mc / "multiple_choice_single_varying.json"
    samples = samples_of(dataset)
    wanted = {prompt_of(dataset, s): str(s["answer"][0]) for s in samples}
    inspect_exe = Path(sys.executable).parent / "inspect"
    with OpenAITestServer(models=["smollm2-135m-instruct"], responder=lambda model, msgs: wanted[msgs[-1]["content"]]
                          ) as srv:
        env = dict(os.environ, LOCAL_BASE_URL=srv.base_url, LOCAL_API_KEY="not-a-secret", INSPECT_LOG_LEVEL="error",
                   PWD=str(mc), PYTHONWARNINGS="ignore")
        proc = subprocess.run([str(inspect_exe), "eval", f"{TASK_FILE}@rxn_mc", "-T", f"dataset={dataset.name}",
                               "--model", "openai-api/local/smollm2-135m-instruct", "--limit", "5",
                               "--log-dir", str(tmp_path / "logs"), "--display", "none"],
                              cwd=mc, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        sent = [r["messages"][-1]["content"] for r in srv.requests]
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert sorted(sent) == sorted(prompt_of(dataset, s) for s in samples[:5])
    assert all(r["temperature"] == 0.0 and r["max_tokens"] == 128 for r in srv.requests)
    (log,) = (tmp_path / "logs").glob("*.eval")
    out = tmp_path / "eval.json"
    r = rxn("eval-mc", "--dataset", dataset, "--from-inspect", log, "--output", out)
    assert r.exit_code == 0, r.output
    overall = json.loads(out.read_text())["overall"]
    same_metrics(inspect_metrics(log), overall)
    assert overall["num_missing"] == len(samples) - 5 and overall["exact_match_accuracy"] == 5 / len(samples)


def test_a_log_whose_run_ended_in_error_is_not_final(builds, tmp_path):
    """fail_on_error stops the run at the 6th question's failed call (status error): the answers are scored,
    the command exits 1, and the status and error text are in the terminal, the output and the report row."""
    mc, _ = builds
    dataset = mc / "multiple_choice_all_varying.json"
    samples = samples_of(dataset)
    answers = {prompt_of(dataset, s): (None if i == 5 else str(s["answer"][0])) for i, s in enumerate(samples)}
    log = run_task(tmp_path, "rxn_mc", dataset, answers, fail=True)
    from inspect_ai.log import read_eval_log

    assert read_eval_log(str(log), header_only=True).status == "error"
    out = tmp_path / "eval.json"
    r = rxn("eval-mc", "--dataset", dataset, "--from-inspect", log, "--output", out)
    assert r.exit_code == 1, r.output
    assert ("NOT FINAL: the run ended with status error: RuntimeError('the model endpoint answered HTTP 503"
            in r.output)
    (entry,) = json.loads(out.read_text())["provenance"]["from_inspect"]
    assert entry["status"] == "error" and "HTTP 503" in entry["error"]
    assert entry["answers"] == 5 and json.loads(out.read_text())["overall"]["num_missing"] == len(samples) - 5
    report = tmp_path / "report.html"
    assert CliRunner().invoke(cli, ["report", str(out), "--output", str(report)]).exit_code == 0
    html = report.read_text().replace("<wbr>", "")  # a long name may break at its parts
    assert "incomplete" in html and f"inspect_ai log {log.name} ended with status error" in html


def test_retried_samples_are_counted_with_the_policy_named(builds, tmp_path):
    """Issue 35: a sample inspect_ai retried after an error (retry_on_error) is answered by its last attempt;
    each log's entry counts the retried samples and names the policy, in the output, the terminal and the
    report row."""
    mc, _ = builds
    dataset = mc / "multiple_choice_all_varying.json"
    samples = samples_of(dataset)
    retried = {s["id"] for s in samples[:3]}
    answers = {prompt_of(dataset, s): ({"fail_once": str(s["answer"][0])} if s["id"] in retried
                                       else str(s["answer"][0])) for s in samples}
    log = run_task(tmp_path, "rxn_mc", dataset, answers)
    from inspect_ai.log import read_eval_log

    assert {str(s.id) for s in read_eval_log(str(log)).samples if s.error_retries} == retried
    out = tmp_path / "eval.json"
    r = rxn("eval-mc", "--dataset", dataset, "--from-inspect", log, "--output", out)
    assert r.exit_code == 0, r.output
    result = json.loads(out.read_text())
    (entry,) = result["provenance"]["from_inspect"]
    assert (entry["retried_samples"], entry["retries"], entry["answers"]) == (3, "last-attempt", len(samples))
    assert result["overall"]["exact_match_accuracy"] == 1.0  # the retries' answers stand
    said = "3 retried samples (the last attempt's answer stands: inspect_ai's rule)"
    assert said in r.output
    report = tmp_path / "report.html"
    assert CliRunner().invoke(cli, ["report", str(out), "--output", str(report)]).exit_code == 0
    html = report.read_text().replace("<wbr>", "").replace("&#x27;", "'")
    assert said in html


# --------------------------------------------------------------------------- bad input


def refused(r, *fragments: str, nothing: tuple[Path, ...] = ()) -> None:
    assert r.exit_code == 2, r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    for p in nothing:
        assert not p.exists()


def test_a_log_of_the_other_task_or_another_dataset(mc_run, builds, tmp_path):
    dataset, log, _, _ = mc_run
    mc, fib = builds
    out = tmp_path / "e.json"
    refused(rxn("eval-fib", "--dataset", fib / "fill_in_blank_all_blank.json", "--from-inspect", log, "--output", out),
            log.name, "a log of rxn_mc", "score it with rxn eval-mc", nothing=(out,))
    other = mc / "multiple_choice_single_varying.json"
    refused(rxn("eval-mc", "--dataset", other, "--from-inspect", log, "--output", out),
            "was run on the dataset 'multiple_choice_all_varying.json'", nothing=(out,))
    refused(rxn("eval-mc", "--dataset", dataset, "--from-inspect", log, "--from-inspect", log, "--output", out),
            "is answered in", nothing=(out,))


def test_prediction_and_from_inspect_are_exclusive(mc_run, tmp_path):
    dataset, log, _, predictions = mc_run
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps(predictions))
    out = tmp_path / "e.json"
    refused(rxn("eval-mc", "--dataset", dataset, "--prediction", pred, "--from-inspect", log, "--output", out),
            "give the predictions once", nothing=(out,))
    refused(rxn("eval-mc", "--dataset", dataset, "--output", out), "give the predictions once", nothing=(out,))
    refused(rxn("eval-mc", "--dataset", dataset, "--prediction", pred, "--save-prediction", tmp_path / "s.json"),
            "--save-prediction writes the predictions read from --from-inspect")
    refused(rxn("eval-mc", "--dataset", dataset, "--from-inspect", log, "--save-prediction", dataset),
            "--save-prediction is also an input")


def test_a_log_of_several_epochs(tmp_path):
    dataset = tmp_path / "multiple_choice_all_varying.json"  # one question, the built-in prompt template
    dataset.write_bytes((ROOT / "examples" / "rxn" / "expected" / "multiple_choice_all_varying.json").read_bytes())
    log = run_task(tmp_path, "rxn_mc", dataset, {render(s): "0" for s in samples_of(dataset)}, epochs=2)
    refused(rxn("eval-mc", "--dataset", dataset, "--from-inspect", log), "the log has 2 epochs", "--epochs 1")


def test_a_log_that_is_no_rxn_task(tmp_path, builds):
    proc = subprocess.run([sys.executable, str(RUNNER), "arith", str(tmp_path / "logs")], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (log,) = (tmp_path / "logs").glob("*.eval")
    mc, _ = builds
    refused(rxn("eval-mc", "--dataset", mc / "multiple_choice_all_varying.json", "--from-inspect", log),
            "a log of task 'arith'", "rxn_mc and rxn_fib")
    refused(rxn("eval-mc", "--dataset", mc / "multiple_choice_all_varying.json", "--from-inspect", tmp_path / "no.eval"),
            "no.eval: file not found")
