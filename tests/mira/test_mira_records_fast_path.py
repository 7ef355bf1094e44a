"""The fast path of the record cross-checks accepts exactly what the full per-record check accepts."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mira_helpers import write_json, write_jsonl

from benchscore.common.errors import BadInput
from benchscore.mira.records import _check_record, load_contract, load_repetitions

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
