"""The rules of `mira from-inspect`, as pure functions (no inspect_ai needed), the structural reading of
errors (tracebacks formatted by Python itself), and that the core install never imports inspect_ai."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.mira.formats import ApprovalRule, ErrorRule, ErrorRules, InspectMapping, ScoreRule
from benchscore.mira.inspect_logs import (
    Refused,
    classify_approval,
    classify_error,
    limit_outcome,
    repetition_record,
    rule_satisfied,
)
from benchscore.sources.inspect_logs import (
    Approval,
    RetriedError,
    SampleRecord,
    SampleScore,
    ScoreEdit,
    parse_error,
    scorers_calling_models,
    version_tuple,
)

ROOT = Path(__file__).resolve().parents[2]


def _formatted(exc: BaseException) -> tuple[str, str]:
    """(repr, traceback) of a raised exception, as inspect_ai records them."""
    import traceback

    return repr(exc), "".join(traceback.format_exception(exc))


def _raise(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001
        return caught


def test_the_exception_is_read_from_its_exception_line_never_from_a_message_line():
    err = parse_error(*_formatted(_raise(RuntimeError("docker compose up failed\nstderr: network not found"))))
    assert [(e.type, e.name) for e in err.leaves()] == [("RuntimeError", "RuntimeError")]
    assert err.exception.message == "docker compose up failed\nstderr: network not found"
    err = parse_error(*_formatted(_raise(RuntimeError("Failed to start docker services:\nError response from daemon"))))
    assert err.exception.name == "RuntimeError"
    err = parse_error(*_formatted(_raise(ValueError())))
    assert err.exception.name == "ValueError" and err.exception.message == ""


def test_qualified_and_file_defined_classes():
    tb = ('Traceback (most recent call last):\n  File "x.py", line 1, in f\n    raise E()\n'
          'pkg.mod.SandboxError: no\n')
    e = parse_error("SandboxError('no')", tb).exception
    assert (e.type, e.name, e.qualified) == ("pkg.mod.SandboxError", "SandboxError", "pkg.mod.SandboxError")
    tb = ('Traceback (most recent call last):\n  File "/w/ops_task.py", line 9, in solve\n    raise X("a")\n'
          '/w/ops_task.py.AgentGaveUp: gave up\nsecond line\n')
    e = parse_error("AgentGaveUp('gave up\\nsecond line')", tb).exception
    assert (e.name, e.qualified, e.message) == ("AgentGaveUp", None, "gave up\nsecond line")
    # no traceback: the class is the prefix of the message (repr)
    assert parse_error("SandboxStartError('x')", "").exception.name == "SandboxStartError"
    assert parse_error("no class here", "").exception is None


def test_exception_groups_and_chains():
    def inner() -> BaseException:
        try:
            try:
                raise KeyError("k")
            except KeyError:
                raise ValueError("v\nline2")  # noqa: B904
        except ValueError as e:
            return _raise(ExceptionGroup("outer", [RuntimeError("r"), ExceptionGroup("inner", [e, TypeError("t")]),
                                                   OSError("o")]))

    group = inner()
    err = parse_error(*_formatted(group))
    assert [(e.name, e.message) for e in err.leaves()] == [("RuntimeError", "r"), ("ValueError", "v\nline2"),
                                                           ("TypeError", "t"), ("OSError", "o")]
    try:
        raise AttributeError("final") from group
    except AttributeError as final:
        err = parse_error(*_formatted(final))
    assert [e.name for e in err.leaves()] == ["AttributeError"]  # the group was its cause, not the error
    # inspect_ai raises one inner exception of a task group in place of the group: the error is the group
    leaf = RuntimeError("child failed")
    try:
        try:
            raise ExceptionGroup("unhandled errors in a TaskGroup", [leaf, SyntaxWarning("w")])
        except ExceptionGroup:
            raise leaf  # noqa: B904
    except RuntimeError as raised:
        err = parse_error(*_formatted(raised))
    assert [e.name for e in err.leaves()] == ["RuntimeError", "SyntaxWarning"]


def test_cancellation():
    tb = "Traceback (most recent call last):\n  File \"x\", line 1\nasyncio.exceptions.CancelledError: Cancelled via\n"
    assert parse_error("CancelledError('Cancelled via')", tb).cancelled
    assert parse_error("CancelledError('Cancelled via cancel scope')", "").cancelled
    assert not parse_error("RuntimeError('CancelledError in the message')", "").cancelled


def _err(name: str, message: str = "x") -> object:
    return parse_error(f"{name}({message!r})", "")


def test_error_classes():
    rules = ErrorRules(infrastructure=[ErrorRule(type="SandboxError"), ErrorRule(message_contains="docker")],
                       agent=[ErrorRule(type="ToolError", message_contains="gave up")])
    tb = 'Traceback (most recent call last):\n  File "x", line 1\ninspect_ai.util.SandboxError: x\n'
    assert classify_error(rules, parse_error("SandboxError('x')", tb)) == "infrastructure"  # the bare name
    assert classify_error(ErrorRules(infrastructure=[ErrorRule(type="util.SandboxError")]),
                          parse_error("SandboxError('x')", tb)) == "infrastructure"  # a dotted tail
    assert classify_error(rules, _err("RuntimeError", "docker daemon down")) == "infrastructure"
    assert classify_error(rules, _err("ToolError", "the agent gave up")) == "agent"
    with pytest.raises(Refused, match="matches no rule"):
        classify_error(rules, _err("ToolError", "bad arguments"))  # a rule with both needs both
    with pytest.raises(Refused, match="matches both"):
        classify_error(rules, _err("ToolError", "the agent gave up with docker"))
    assert classify_error(ErrorRules(otherwise="agent"), _err("ValueError")) == "agent"
    with pytest.raises(Refused):
        classify_error(ErrorRules(infrastructure=[ErrorRule(type="E")]), parse_error("E happened", ""))


def test_a_group_is_decided_by_the_rules_its_exceptions_match():
    group = _raise(ExceptionGroup("g", [RuntimeError("compose failed\nstderr: x"), ValueError("v")]))
    err = parse_error(*_formatted(group))
    infra = ErrorRules(infrastructure=[ErrorRule(type="RuntimeError")], otherwise="agent")
    assert classify_error(infra, err) == "infrastructure"  # a rule beats the fallback
    both = ErrorRules(infrastructure=[ErrorRule(type="RuntimeError")], agent=[ErrorRule(type="ValueError")])
    with pytest.raises(Refused, match="exception group whose exceptions match errors.infrastructure"):
        classify_error(both, err)


def test_approvals_are_classified_by_the_mapping():
    rules = [ApprovalRule(decision="approve", counts_as="ordinary"),
             ApprovalRule(decision="reject", approver="human", counts_as="intervention"),
             ApprovalRule(decision="terminate", counts_as="governance", governance_kind="bypassed_approval")]
    reject = Approval("reject", "human", "bash", {"cmd": "rm"}, None)
    assert classify_approval(rules, reject).counts_as == "intervention"
    with pytest.raises(Refused, match="matches no rule"):
        classify_approval(rules, Approval("reject", "auto", "bash", {}, None))
    with pytest.raises(Refused, match="say in the mapping's approvals"):
        classify_approval(None, reject)
    with pytest.raises(ValueError, match="governance_kind"):
        ApprovalRule(decision="reject", counts_as="governance")
    with pytest.raises(ValueError, match="always a serious"):
        ApprovalRule(decision="reject", counts_as="governance", governance_kind="bypassed_approval", severity="minor")


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
                         errors=ErrorRules(infrastructure=[ErrorRule(type="SandboxError")],
                                           agent=[ErrorRule(type="AgentGaveUp")]))
SOURCE = {"tool": "inspect_ai", "log": "l.eval"}


def facts(**kw) -> SampleRecord:
    base = dict(id="A", epoch=2, uuid=None, input="", target="", choices=None, metadata={}, scores={"s": SampleScore("C", None, None,
                                                                                                     None)},
                output="done", error=None, retries=(), limit=None, working_time=1.5, total_time=1.5,
                invalidation=None, approvals=(), model_graded=frozenset())
    return SampleRecord(**(base | kw))


def test_records_of_each_outcome():
    assert repetition_record(facts(), "A", ["ok"], MAPPING, SOURCE) == {
        "case_id": "A", "repetition": 2, "execution_mode": "canonical", "terminal_state": "completed",
        "deterministic_results": {"ok": True}, "elapsed_s": 1.5,
        "source": {"tool": "inspect_ai", "log": "l.eval", "sample_id": "A", "epoch": 2}}
    infra = repetition_record(facts(scores={}, error=_err("SandboxError")), "A", ["ok"], MAPPING, SOURCE)
    assert (infra["execution_mode"], infra["terminal_state"], "deterministic_results" in infra) == (
        "invalid", "failed", False)
    assert infra["source"]["error_types"] == ["SandboxError"]
    timed_out = repetition_record(facts(limit="working"), "A", ["ok"], MAPPING, SOURCE)
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
    from benchscore.sources.inspect_logs import Invalidation

    assert repetition_record(facts(invalidation=Invalidation("t", "hack")), "A", ["ok"], MAPPING,
                             SOURCE)["execution_mode"] == "noncanonical"


def test_retried_attempts():
    gave_up = RetriedError(_err("AgentGaveUp"), ())
    sandbox = RetriedError(_err("SandboxError"), ())
    rec = repetition_record(facts(retries=(sandbox, gave_up)), "A", ["ok"], MAPPING, SOURCE)
    assert (rec["terminal_state"], rec["deterministic_results"]) == ("failed", {"ok": False})
    assert (rec["source"]["attempt"], rec["source"]["attempts"]) == (2, 3)
    assert [e["error_kind"] for e in rec["source"]["replaced_errors"]] == ["infrastructure"]
    assert rec["source"]["later_attempt"]["deterministic_results"] == {"ok": True}
    rec = repetition_record(facts(retries=(sandbox,)), "A", ["ok"], MAPPING, SOURCE)
    assert rec["terminal_state"] == "completed" and rec["source"]["replaced_errors"][0]["error_types"] == [
        "SandboxError"]


def test_score_edits():
    edited = SampleScore("C", None, None, None, (ScoreEdit("I", None, None, None), ScoreEdit("C", "rev", "why", None)))
    with pytest.raises(Refused, match="edited after the run by rev \\(why\\): value 'I' -> 'C'"):
        repetition_record(facts(scores={"s": edited}), "A", ["ok"], MAPPING, SOURCE)
    rec = repetition_record(facts(scores={"s": edited}), "A", ["ok"], MAPPING, SOURCE, accept_score_edits=True)
    assert rec["deterministic_results"] == {"ok": True}
    assert rec["source"]["score_edits"] == [{"scorer": "s", "author": "rev", "reason": "why", "original": "I",
                                             "value": "C"}]


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


def test_without_the_reader_s_dependency_from_inspect_says_what_to_install(tmp_path):
    """zstandard made unimportable (the reader needs no inspect_ai): one line naming the extra, exit 2, nothing
    written."""
    out = tmp_path / "r.jsonl"
    code = ("import sys\nsys.modules['zstandard'] = None\nsys.modules['inspect_ai'] = None\nfrom benchscore.cli import cli\n"
            f"cli(['mira', 'from-inspect', 'x.eval', '--contract', 'examples/mira/contract.json', '--mapping', "
            f"'examples/mira/inspect/mapping.json', '--output', '{out}'])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == ["error: reading inspect_ai logs needs zstandard: pip install -e '.[inspect]'"]
    assert not out.exists()
