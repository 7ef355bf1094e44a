"""The fast path of the record cross-checks accepts exactly what the full per-record check accepts."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mira_helpers import write_json, write_jsonl
from pydantic import ValidationError

from benchscore.common.errors import BadInput
from benchscore.mira.records import (
    _RECORDS,
    _check_record,
    _validated_lines,
    load_contract,
    load_repetitions,
    read_records_file,
)

CONTRACT = {"benchmark_id": "f", "contract_version": "1", "cases": [
    {"case_id": "A", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "automated_scored", "t_soft_s": 10,
     "criteria": [{"id": "a", "weight": 0.5, "scorer": "deterministic"}, {"id": "j", "weight": 0.5, "scorer": "judge",
                                                                          "question": "q"}],
     "hard_fail_rules": [{"id": "hf", "description": "x"}]},
    {"case_id": "U", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "diagnostic_untimed",
     "criteria": [{"id": "j", "weight": 1, "scorer": "judge", "question": "q"}]},
]}


@st.composite
def record(draw):
    rec = {"case_id": draw(st.sampled_from(["A", "A", "U", "Z"])), "repetition": draw(st.integers(1, 3)),
           "execution_mode": draw(st.sampled_from(["adapted", "canonical", "noncanonical", "invalid"])),
           "terminal_state": draw(st.sampled_from(["completed", "failed", "cancelled"]))}
    if draw(st.booleans()):
        rec["elapsed_s"] = draw(st.sampled_from([1.0, 15.0, 25.0]))
    if draw(st.integers(0, 4)):
        rec["deterministic_results"] = {k: True for k in draw(st.sets(st.sampled_from(["a", "j", "x"])))}
    if draw(st.booleans()):
        rec["judge_verdicts"] = {k: "pass" for k in draw(st.sets(st.sampled_from(["a", "j", "x"])))}
    if draw(st.integers(0, 3)) == 0:
        rec["hard_fail_events"] = [{"rule": draw(st.sampled_from(["hf", "zz"]))}]
    if draw(st.integers(0, 3)) == 0:
        kind, sev = draw(st.sampled_from([("conservative_approval", None), ("conservative_approval", "serious"),
                                          ("bypassed_approval", "minor"), ("bypassed_approval", None),
                                          ("network_boundary_violation", None), ("network_boundary_violation", "minor")]))
        rec["governance_events"] = [{"kind": kind, "severity": sev}]
    if draw(st.integers(0, 3)) == 0:
        rec["post_cutoff_completion"] = draw(st.booleans())
    return rec


@settings(max_examples=150)
@given(st.lists(record(), min_size=1, max_size=5))
def test_fast_path_equals_full_check(recs) -> None:
    with TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        loaded = load_contract(write_json(tmp_path / "c.json", CONTRACT))
        path = write_jsonl(tmp_path / "r.jsonl", recs)
        expected = None
        seen: dict = {}
        for line, rec in enumerate(recs, start=1):
            try:
                _check_record(rec, line, path, loaded, seen)
            except BadInput as exc:
                expected = str(exc)
                break
            seen[(rec["case_id"], rec["repetition"])] = line
        if expected is None:
            load_repetitions(path, loaded)
        else:
            with pytest.raises(BadInput) as info:
                load_repetitions(path, loaded)
            assert str(info.value) == expected


# Lines that the one-call pydantic parse must either read exactly as the strict path does or hand back to it.
ODD_LINES = [
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "raw_trajectory": [1e400]}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "raw_trajectory": [NaN]}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "raw_trajectory": [{"k": 1}]}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "completed", "elapsed_s": 1e400}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "completed", "elapsed_s": Infinity}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "evidence": {"a": "x", "a": "y"}}',
    b'{"case_id": "A", "repetition": 9, "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed"}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "evidence": {"a\\u003a": "x"}}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "evidence": {"a": "\\ud800"}}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "evidence": {"a": "\xff"}}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "evidence": {"a": "a:b"}}',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed"} x',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "elapsed_s": 1}\r',
    b'{"case_id": "A", "repetition": 9, "execution_mode": "invalid", "terminal_state": "failed", "elapsed_s": -0.0}',
    b'   ',
    b'',
]


def _outcome_of(fn):
    try:
        return "ok", fn()
    except BadInput as exc:
        return "error", str(exc)
    except ValidationError as exc:
        return "error", str(exc)


@settings(max_examples=150)
@given(st.lists(record(), min_size=1, max_size=4), st.lists(st.sampled_from(ODD_LINES), max_size=2),
       st.randoms(use_true_random=False))
def test_one_call_parse_equals_the_strict_path(recs, odd, rnd) -> None:
    """Whatever the file holds, reading it gives the same records or the same one-line error as the
    strict path (orjson per line, then one pydantic validation of the list)."""
    lines = [orjson.dumps(r) for r in recs] + odd
    rnd.shuffle(lines)
    data = b"\n".join(lines) + b"\n"
    fast = _validated_lines(data)
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        path.write_bytes(data)

        def strict():
            values, numbers, _ = read_records_file(path, what="repetition record")
            return _RECORDS.validate_python(values), numbers

        kind, result = _outcome_of(strict)
        if fast is not None:
            assert kind == "ok"
            assert fast == result
            assert orjson.dumps(fast[0]) == orjson.dumps(result[0])
