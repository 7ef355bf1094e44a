"""Reading results written by others (tests/results/data, each with its licence), inspect_ai's value
conventions and reducers, and the readers' refusals (one line naming file, record and field)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from benchscore.cli import cli
from benchscore.common.errors import BadInput
from benchscore.results import values as V
from benchscore.results.comparison import Options, entries
from benchscore.results.reading import read

DATA = Path(__file__).resolve().parent / "data"
EEE = DATA / "every_eval_ever"
LM = DATA / "lm_eval"


def compare(*args):
    return CliRunner().invoke(cli, ["compare", *map(str, args)])


# --- inspect_ai's conventions -----------------------------------------------------------------------


def test_inspect_values_read_as_inspect_ai_reads_them():
    assert [V.scalar(v) for v in ("C", "I", "P", "N", True, False, 3, 0.25, "yes", "No", "0.5")] == \
        [1.0, 0.0, 0.5, 0.0, 1.0, 0.0, 3.0, 0.25, 1.0, 0.0, 0.5]
    assert V.scalar(float("nan")) is None and V.scalar(None) is None  # unscored
    for bad in ("maybe", float("inf"), [1]):
        with pytest.raises(V.NotNumeric):
            V.scalar(bad)
    assert V.flatten("quiz/graded", {"right": True, "length": 4}) == {"quiz/graded/right": 1.0,
                                                                      "quiz/graded/length": 4.0}
    assert V.flatten("quiz/match", "C") == {"quiz/match": 1.0}
    with pytest.raises(V.UnknownReducer, match="not one inspect_ai ships"):
        V.reducer("best_of_3")
    with pytest.raises(V.UnknownReducer, match="no number per sample"):
        V.reducer("collect")


@given(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=8), st.integers(1, 4))
def test_reducers_equal_inspect_ai_reducers(values, k):
    from inspect_ai.scorer import Score
    from inspect_ai.scorer._reducer.registry import create_reducers

    scores = [Score(value=v) for v in values]
    names = ["mean", "median", "mode", "max", f"at_least_{k}", f"pass_at_{k}", f"pass_k_{k}"]
    for name, theirs in zip(names, create_reducers(names), strict=True):
        want = theirs(scores).value
        got = V.reducer(name)(values)
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want), name


@given(st.lists(st.sampled_from(["C", "I", "P", "N", 1.0, 0.0, 0.5, True]), min_size=1, max_size=8), st.integers(1, 4))
def test_every_shipped_reducer_reduces_values_as_written_like_inspect_ai(values, k):
    """Issue 35: the reducers inspect_ai ships, applied as it applies them. mode and majority count the values
    as the scorer wrote them ("I" and "N" are two values, both 0), the others read them as numbers; a
    majority without a strict majority is NaN (inspect_ai's unscored) in both."""
    from inspect_ai.scorer import Score, value_to_float
    from inspect_ai.scorer._reducer.registry import create_reducers

    to_float = value_to_float()
    numbers = [V.scalar(v) for v in values]
    names = ["mean", "median", "mode", "majority", "max", f"at_least_{k}", f"pass_at_{k}", f"pass_k_{k}"]
    for name, theirs in zip(names, create_reducers(names), strict=True):
        want = to_float(theirs([Score(value=v) for v in values]).value)
        got = V.reducer(name)(values if name in V.COUNTING else numbers)
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want), (name, values)


# --- files written by others ------------------------------------------------------------------------


def test_every_eval_ever_records_of_others_are_read_and_validated():
    (mmlu,) = read([EEE / "helm_mmlu_openai_gpt2_samples.jsonl"])
    assert mmlu.tool == "every_eval_ever" and mmlu.model == "openai/gpt2" and len(mmlu.samples) == 10
    # worked out from the file: one of ten MMLU answers correct
    assert sum(s.values["mmlu/is_correct"] for s in mmlu.samples) == 1
    assert mmlu.notes == ["helm_mmlu_openai_gpt2_samples.jsonl: no aggregate record beside it"]
    (demo,) = read([EEE / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json"])  # through the aggregate record
    assert demo.model == "demo-org/demo-model" and demo.metrics["demo-source.demo_bench/score"].reported == 0.75
    assert [s.identity for s in demo.samples] == [
        "9c94305328f8e70341f9d1880f4eaa6ea7f93b8922e6a03a8cdcf1924d28db0b"]
    assert demo.samples[0].metadata == {"subject": "arithmetic"}
    # two evaluations of different benchmarks have no metric in common
    res = compare(EEE / "helm_mmlu_openai_gpt2_samples.jsonl", EEE / "helm_hellaswag_pythia-1b-v0_samples.jsonl")
    assert res.exit_code == 2 and "no metric every result has" in res.output


def test_an_every_eval_ever_record_that_breaks_its_schema_or_checksum_is_refused(tmp_path):
    for name in ("f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json", "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40_samples.jsonl"):
        shutil.copy(EEE / name, tmp_path / name)
    samples = tmp_path / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40_samples.jsonl"
    record = json.loads(samples.read_text())
    samples.write_text(json.dumps(dict(record, evaluation={"score": 0.0, "is_correct": False})) + "\n")
    with pytest.raises(BadInput, match="sha256 .* but its aggregate record says"):
        read([tmp_path / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json"])
    lone = tmp_path / "lone_samples.jsonl"
    lone.write_text(json.dumps(dict(record, evaluation={"is_correct": True})) + "\n")
    with pytest.raises(BadInput) as exc:
        read([lone])
    assert str(exc.value) == (f"{lone}: line 1: field 'evaluation': does not follow the Every Eval Ever "
                              "schema: 'score' is a required property")


def test_an_lm_eval_samples_file_of_others_is_read_and_its_cut_is_said(tmp_path):
    (run,) = read([LM / "samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl"])  # finds its results file
    assert run.tool == "lm-evaluation-harness" and run.tool_version == "0.4.9.2"
    assert run.model == "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
    assert [s.sample_id for s in run.samples] == [str(i) for i in range(10)]
    assert all(s.values["math_perturbed_full/exact_match,none"] == 0.0 for s in run.samples)
    assert run.planned_samples == {"math_perturbed_full": 5000}
    assert "holds 10 of the 5000 samples" in run.notes[0]
    copy = tmp_path / "again"
    shutil.copytree(LM, copy)
    res = compare(LM, copy)
    assert res.exit_code == 2 and "the files hold 10 of the 5000 samples" in res.output
    res = compare(LM, copy, "--intersection", "--resamples", "200")
    assert res.exit_code == 0, res.output
    assert "10 scored, 0 errored, 0 unscored" in res.output


@pytest.mark.inspect
def test_inspect_ai_logs_of_others_are_compared_on_the_samples_they_share(inspect_ai_installed, tmp_path):
    a = DATA / "inspect_ai" / "2025-05-12T20-28-13-04-00_popularity.json"
    b = DATA / "inspect_ai" / "log_read_sample.eval"
    evaluations = read([a, b])
    assert [(e.model, e.status, e.tool_version) for e in evaluations] == [
        ("openai/gpt-4o-mini", "cancelled", "0.3.95.dev16+g6527d0861"), ("ollama/gemma3", "success",
                                                                         "0.3.95.dev16+g6527d0861")]
    # worked out from the log: match is C, C, I on samples 1, 2, 3
    assert {s.sample_id: s.values["popularity/match"] for s in evaluations[0].samples} == {"1": 1.0, "2": 1.0,
                                                                                          "3": 0.0}
    # the two runs planned different samples (3 and 1): refused without --intersection; with it, the cancelled
    # run's number is not final (exit 1, said beside it)
    res = compare(a, b)
    assert res.exit_code == 2 and "not on the same items" in res.output
    res = compare(a, b, "--intersection", "--resamples", "200")
    assert res.exit_code == 1 and "NOT FINAL: the run ended with status cancelled" in res.output, res.output
    got, _ = entries(evaluations, Options(intersection=True))
    (m_a,), (m_b,) = got[0].metrics, got[1].metrics
    assert m_a.counts["status"] == "cancelled" and m_b.counts["status"] == "success"
    assert m_a.items["1"] == m_b.items["1"] == (1.0, 1.0)  # the shared sample is one dataset sample
    assert m_a.counts["samples"] == 1 and m_a.counts["scored"] == 1


def test_no_results_in_a_folder_is_one_line(tmp_path):
    res = compare(tmp_path, tmp_path / "x.eval")
    assert res.exit_code == 2 and "holds no inspect_ai log" in res.output
