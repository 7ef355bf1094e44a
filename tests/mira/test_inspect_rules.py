"""The rules of `mira from-inspect`, as pure functions (no inspect_ai needed), and that the core install
never imports inspect_ai."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.common.inspect_logs import version_tuple
from benchscore.mira.formats import ErrorRule, ErrorRules, InspectMapping, ScoreRule
from benchscore.mira.inspect_logs import (
    Refused,
    SampleFacts,
    classify_error,
    exception_type,
    is_cancellation,
    limit_outcome,
    repetition_record,
    rule_satisfied,
    scorers_calling_models,
)

ROOT = Path(__file__).resolve().parents[2]


def test_exception_type_is_read_from_the_traceback_end():
    tb = 'Traceback (most recent call last):\n  File "x.py", line 1, in f\n    raise E()\npkg.mod.SandboxError: no\n'
    assert exception_type(tb) == "pkg.mod.SandboxError"
    assert exception_type("...\nRuntimeError\n") == "RuntimeError"
    assert exception_type("...\nasyncio.exceptions.CancelledError: Cancelled via cancel scope\n") == (
        "asyncio.exceptions.CancelledError")
    assert exception_type("  | ExceptionGroup stuff") is None
    assert exception_type(None) is None and exception_type("") is None


def test_cancellation():
    assert is_cancellation("asyncio.exceptions.CancelledError", "anything")
    assert is_cancellation(None, "CancelledError('Cancelled via cancel scope')")
    assert not is_cancellation("RuntimeError", "CancelledError in the message")


def test_error_classes():
    rules = ErrorRules(infrastructure=[ErrorRule(type="SandboxError"), ErrorRule(message_contains="docker")],
                       agent=[ErrorRule(type="ToolError", message_contains="gave up")])
    assert classify_error(rules, "inspect_ai.util.SandboxError", "x") == "infrastructure"  # the last dotted part
    assert classify_error(rules, "inspect_ai.util.SandboxError", "x") == "infrastructure"
    assert classify_error(rules, "RuntimeError", "docker daemon down") == "infrastructure"
    assert classify_error(rules, "ToolError", "the agent gave up") == "agent"
    with pytest.raises(Refused, match="matches no rule"):
        classify_error(rules, "ToolError", "bad arguments")  # a rule with both needs both
    with pytest.raises(Refused, match="matches both"):
        classify_error(rules, "ToolError", "the agent gave up with docker")
    assert classify_error(ErrorRules(otherwise="agent"), "ValueError", "x") == "agent"
    assert classify_error(ErrorRules(infrastructure=[ErrorRule(type="a.b.E")]), "a.b.E", "x") == "infrastructure"
    with pytest.raises(Refused):
        classify_error(ErrorRules(infrastructure=[ErrorRule(type="E")]), None, "E happened")  # no class known


def test_listed_values_compare_by_json_kind():
    rule = ScoreRule(scorer="s", satisfied=["C", 1], unsatisfied=["I", 0])
    assert rule_satisfied(rule, "C", None) is True and rule_satisfied(rule, "I", None) is False
    assert rule_satisfied(rule, 1.0, None) is True  # numbers compare numerically
    with pytest.raises(Refused, match="neither"):
        rule_satisfied(rule, True, None)  # a boolean is not the number 1
    with pytest.raises(Refused, match="neither"):
        rule_satisfied(rule, "c", None)
    keyed = ScoreRule(scorer="s", value_key="passed", satisfied=[True], unsatisfied=[False])
    assert rule_satisfied(keyed, {"passed": True, "n": 3}, None) is True
    with pytest.raises(Refused, match="no value\\['passed'\\]"):
        rule_satisfied(keyed, "C", None)
    meta = ScoreRule(scorer="s", metadata_key="tests", at_least=3)
    with pytest.raises(Refused, match="no metadata\\['tests'\\]"):
        rule_satisfied(meta, "C", {"other": 1})
    with pytest.raises(Refused, match="not a number"):
        rule_satisfied(meta, "C", {"tests": "3"})
    with pytest.raises(Refused, match="not a finite number"):
        rule_satisfied(meta, "C", {"tests": math.inf})


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(value=finite | st.integers(-10**6, 10**6), bound=finite)
def test_thresholds_are_the_comparisons_they_name(value, bound):
    assert rule_satisfied(ScoreRule(scorer="s", at_least=bound), value, None) is (value >= bound)
    assert rule_satisfied(ScoreRule(scorer="s", above=bound), value, None) is (value > bound)
    assert rule_satisfied(ScoreRule(scorer="s", at_most=bound), value, None) is (value <= bound)
    assert rule_satisfied(ScoreRule(scorer="s", below=bound), value, None) is (value < bound)


def test_limits():
    assert limit_outcome(None) == "completed"
    assert limit_outcome("time") == limit_outcome("working") == "cancelled"
    assert limit_outcome("operator") == "missing"
    for other in ("message", "token", "turn", "cost", "context", "custom"):
        assert limit_outcome(other) == "failed"


def test_model_calls_inside_a_scorer_span_are_found():
    events = [
        {"event": "span_begin", "id": "s", "name": "solvers", "type": "solvers", "parent_id": None},
        {"event": "model", "span_id": "s"},
        {"event": "span_begin", "id": "all", "name": "scorers", "type": "scorers", "parent_id": None},
        {"event": "span_begin", "id": "j", "name": "judge", "type": "scorer", "parent_id": "all"},
        {"event": "span_begin", "id": "inner", "name": "helper", "type": None, "parent_id": "j"},
        {"event": "model", "span_id": "inner"},
        {"event": "span_begin", "id": "m", "name": "match", "type": "scorer", "parent_id": "all"},
    ]
    assert scorers_calling_models(events) == {"judge"}
    assert scorers_calling_models(events[:2]) == set()


def test_versions():
    assert version_tuple("0.3.285") == (0, 3, 285)
    assert version_tuple("0.3.43.dev33+g6c96d92d") == (0, 3, 43)
    assert version_tuple("main") is None and version_tuple(None) is None


MAPPING = InspectMapping(execution_mode="canonical",
                         criteria={"ok": ScoreRule(scorer="s", satisfied=["C"], unsatisfied=["I"])},
                         errors=ErrorRules(infrastructure=[ErrorRule(type="SandboxError")]))
SOURCE = {"tool": "inspect_ai", "log": "l.eval"}


def facts(**kw) -> SampleFacts:
    base = dict(id="A", epoch=2, scores={"s": ("C", None)}, error_message=None, error_type=None, limit=None,
                working_time=1.5, output="done", metadata={})
    return SampleFacts(**(base | kw))


def test_records_of_each_outcome():
    assert repetition_record(facts(), "A", ["ok"], MAPPING, SOURCE) == {
        "case_id": "A", "repetition": 2, "execution_mode": "canonical", "terminal_state": "completed",
        "deterministic_results": {"ok": True}, "elapsed_s": 1.5,
        "source": {"tool": "inspect_ai", "log": "l.eval", "sample_id": "A", "epoch": 2}}
    infra = repetition_record(facts(scores={}, error_message="SandboxError('x')", error_type="SandboxError"),
                              "A", ["ok"], MAPPING, SOURCE)
    assert (infra["execution_mode"], infra["terminal_state"], "deterministic_results" in infra) == (
        "invalid", "failed", False)
    timed_out = repetition_record(facts(limit="working", scores={"s": ("C", None)}), "A", ["ok"], MAPPING, SOURCE)
    assert timed_out["terminal_state"] == "cancelled" and timed_out["deterministic_results"] == {"ok": True}
    assert timed_out["source"]["limit"] == "working"
    assert isinstance(repetition_record(facts(limit="operator"), "A", ["ok"], MAPPING, SOURCE), str)
    with pytest.raises(Refused, match="no working_time"):
        repetition_record(facts(working_time=None), "A", ["ok"], MAPPING, SOURCE)
    with pytest.raises(Refused, match="not a finite number of seconds"):
        repetition_record(facts(working_time=-1.0), "A", ["ok"], MAPPING, SOURCE)
    with pytest.raises(Refused, match="no score from scorer 's'"):
        repetition_record(facts(scores={}), "A", ["ok"], MAPPING, SOURCE)
    with pytest.raises(Refused, match="called a model while scoring"):
        repetition_record(facts(model_graded=frozenset({"s"})), "A", ["ok"], MAPPING, SOURCE)
    assert repetition_record(facts(invalidated=True), "A", ["ok"], MAPPING, SOURCE)["execution_mode"] == "noncanonical"


def _modules_after(code: str) -> str:
    probe = (f"import sys\n{code}\n"
             "print('inspect_ai' in sys.modules, 'benchscore.mira.inspect_logs' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()[-2:]


def test_the_core_commands_never_import_inspect_ai(tmp_path):
    runs = [
        "from benchscore.cli import cli\ntry:\n    cli(['--help'])\nexcept SystemExit:\n    pass",
        "from benchscore.cli import cli\ntry:\n    cli(['mira', 'from-inspect', '--help'])\nexcept SystemExit:\n    pass",
        "from benchscore.cli import cli\ntry:\n    cli(['rxn', 'eval-mc', '--help'])\nexcept SystemExit:\n    pass",
        "from benchscore.cli import cli\ntry:\n    cli(['mira', 'score', '--contract', 'examples/mira/contract.json', "
        f"'--repetitions', 'examples/mira/repetitions.jsonl', '--output', '{tmp_path / 's.json'}', '--quiet'])\n"
        "except SystemExit:\n    pass",
    ]
    for code in runs:
        assert _modules_after(code) == ["False", "False"], code


def test_without_inspect_ai_from_inspect_says_what_to_install(tmp_path):
    """inspect_ai made unimportable: one line naming the extra, exit 2, nothing written."""
    out = tmp_path / "r.jsonl"
    code = ("import sys\nsys.modules['inspect_ai'] = None\nfrom benchscore.cli import cli\n"
            f"cli(['mira', 'from-inspect', 'x.eval', '--contract', 'examples/mira/contract.json', '--mapping', "
            f"'examples/mira/inspect/mapping.json', '--output', '{out}'])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == ["error: reading inspect_ai logs needs inspect_ai: pip install -e '.[inspect]'"]
    assert not out.exists()
