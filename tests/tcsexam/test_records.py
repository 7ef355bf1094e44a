"""Instance-record parsing: every rule, and the fast path agreeing with the reference implementation."""

from __future__ import annotations

import json

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.common.errors import BadInput
from benchscore.tcsexam import records as records_mod
from benchscore.tcsexam.records import parse_records


def parse(obj_or_bytes, kind="objective", **kw):
    raw = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
    return parse_records(raw, "r.json", kind=kind, **kw)


def test_parses_columns():
    cols = parse([{"instance": "a", "status": "ok", "A": 3}, {"instance": "b", "status": "timeout"}])
    assert cols.names == ["a", "b"]
    assert cols.codes.tolist() == [0, 1]
    assert cols.values[0] == 3.0 and np.isnan(cols.values[1])


def test_solve_records_accept_solved_or_a():
    cols = parse(
        [
            {"instance": "a", "status": "ok", "solved": True},
            {"instance": "b", "status": "ok", "A": 0},
            {"instance": "c", "status": "crash"},
        ],
        kind="solve",
    )
    assert cols.values[:2].tolist() == [1.0, 0.0]


BAD = [
    ({"a": 1}, None, "expected a JSON list"),
    ([1], 1, "expected an object"),
    ([{"instance": "a", "status": "ok"}], 1, "field 'A': status 'ok' needs a finite A"),
    ([{"instance": "a", "status": "ok", "A": "12"}], 1, "field 'A'"),
    ([{"instance": "a", "status": "ok", "A": True}], 1, "field 'A'"),
    ([{"instance": "a", "status": "ok", "A": 1, "note": "x"}], 1, "field 'note'"),
    ([{"status": "ok", "A": 1}], 1, "field 'instance'"),
    ([{"instance": "", "status": "ok", "A": 1}], 1, "field 'instance'"),
    ([{"instance": " a", "status": "ok", "A": 1}], 1, "field 'instance'"),
    (
        [{"instance": "a", "status": "infra_error"}],
        1,
        "field 'status': status 'infra_error' is an infrastructure",
    ),
    ([{"instance": "a", "status": "missing"}], 1, "field 'status'"),
    ([{"instance": "a", "status": "weird"}], 1, "unknown status 'weird'"),
    (
        [{"instance": "a", "status": "ok", "A": 1}, {"instance": "a", "status": "ok", "A": 2}],
        2,
        "duplicate instance name 'a'",
    ),
    ([{"instance": "a", "status": "ok", "A": 1, "solved": True}], 1, "field 'solved'"),
]


@pytest.mark.parametrize("data,record,message", BAD)
def test_bad_records_name_record_and_field(data, record, message):
    with pytest.raises(BadInput) as exc:
        parse(data)
    text = str(exc.value)
    assert text.startswith("r.json")
    assert message in text
    if record is not None:
        assert f"record {record}" in text
    assert "\n" not in text


@pytest.mark.parametrize(
    "data,message",
    [
        ([{"instance": "a", "status": "ok", "A": 0.5}], "must be 1 or 0"),
        ([{"instance": "a", "status": "ok"}], r"needs A \(1 or 0\) or a boolean solved"),
        ([{"instance": "a", "status": "ok", "A": 1, "solved": True}], "not both"),
        ([{"instance": "a", "status": "ok", "solved": "yes"}], "field 'solved'"),
    ],
)
def test_bad_solve_records(data, message):
    with pytest.raises(BadInput, match=message):
        parse(data, kind="solve")


def test_duplicate_key_in_a_record_is_refused_with_its_record():
    raw = b'[{"instance": "a", "status": "ok", "A": 1}, {"instance": "b", "status": "ok", "A": 1, "A": 2}]'
    with pytest.raises(BadInput, match=r"record 2: field 'A': key appears twice"):
        parse(raw)


def test_duplicate_key_hidden_by_colon_in_name_is_still_found():
    # one extra ':' inside a name and one dropped duplicate key would cancel if names were not counted
    raw = b'[{"instance": "a:b", "status": "ok", "A": 1, "A": 1}]'
    with pytest.raises(BadInput, match="key appears twice"):
        parse(raw)
    raw = b'[{"instance": "a\\u003ab", "status": "ok", "A": 1, "A": 1}]'
    with pytest.raises(BadInput, match="key appears twice"):
        parse(raw)


@pytest.mark.parametrize(
    "raw,message",
    [
        (b'[{"instance": "a", "status": "ok", "A": NaN}]', "NaN and Infinity are not allowed"),
        (b'[{"instance": "a", "status": "ok", "A": Infinity}]', "malformed JSON"),
        (b'[{"instance": "a", "status": "ok", "A": 1e400}]', "malformed JSON"),
        (b'[{"instance": "\xff", "status": "ok", "A": 1}]', "not valid UTF-8"),
        (b'[{"instance": "a", "status": "ok", "A": 1}', "malformed JSON"),
    ],
)
def test_malformed_json(raw, message):
    with pytest.raises(BadInput, match=message):
        parse(raw)


def test_infra_statuses_allowed_when_freezing_reference_runs():
    cols = parse([{"instance": "a", "status": "infra_error"}], allow_infra=True)
    assert cols.codes.tolist() == [records_mod.STATUS_CODES["infra_error"]]


# ---- the fast path accepts and rejects exactly what the reference implementation does ---------

names = st.sampled_from(["a", "b", "c", "a:b", " a", "", "é", "x y"])
statuses = st.sampled_from(
    ["ok", "timeout", "invalid", "certificate_failed", "crash", "infra_error", "missing", "bad"]
)
values = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.just("1"),
    st.just([1]),
)
record = st.dictionaries(
    st.sampled_from(["instance", "status", "A", "solved", "extra"]),
    st.one_of(names, statuses, values),
    max_size=5,
).map(lambda d: d)
typical = st.fixed_dictionaries(
    {"instance": names, "status": statuses},
    optional={"A": values, "solved": st.one_of(st.booleans(), st.none())},
)


def outcome(raw: bytes, kind: str, allow_infra: bool, fast: bool):
    try:
        cols = parse_records(raw, "r.json", kind=kind, allow_infra=allow_infra, fast=fast)
    except BadInput as exc:
        return ("error", str(exc))
    return ("ok", cols.names, cols.codes.tolist(), [None if v != v else v for v in cols.values.tolist()])


@given(
    st.lists(st.one_of(typical, record), max_size=6),
    st.sampled_from(["objective", "solve"]),
    st.booleans(),
    st.booleans(),
)
def test_fast_path_agrees_with_reference_implementation(recs, kind, allow_infra, duplicate_a):
    raw = orjson.dumps(recs)
    if duplicate_a and recs and "A" in recs[-1]:
        raw = raw[:-2] + b',"A":' + orjson.dumps(recs[-1]["A"]) + b"}]"
    fast = outcome(raw, kind, allow_infra, True)
    slow = outcome(raw, kind, allow_infra, False)
    assert fast == slow


def test_fast_path_handles_clean_files_itself():
    recs = [{"instance": f"i{k}", "status": "ok" if k % 3 else "timeout", "A": k * 1.5} for k in range(50)]
    raw = orjson.dumps(recs)
    assert records_mod._parse_fast(raw, orjson.loads(raw), "objective", False) is not None
    solve = [{"instance": f"i{k}", "status": "ok", "solved": bool(k % 2)} for k in range(50)]
    raw = orjson.dumps(solve)
    assert records_mod._parse_fast(raw, orjson.loads(raw), "solve", False) is not None


def _clean_distinct(names_: list) -> bool:
    return all(type(x) is str and x and x == x.strip() for x in names_) and len(set(names_)) == len(names_)


@given(
    st.lists(st.one_of(typical, record), max_size=6),
    st.sampled_from(["objective", "solve"]),
    st.booleans(),
)
def test_known_names_hint_changes_nothing(recs, kind, allow_infra):
    """solver-score passes the reference's names as a hint; same accepts, refusals and messages."""
    raw = orjson.dumps(recs)
    in_file = [r.get("instance") for r in recs]
    known = in_file if _clean_distinct(in_file) else ["a", "b", "c"]
    try:
        cols = parse_records(raw, "r.json", kind=kind, allow_infra=allow_infra, known_names=known)
        hinted = (
            "ok",
            cols.names,
            cols.codes.tolist(),
            [None if v != v else v for v in cols.values.tolist()],
        )
    except BadInput as exc:
        hinted = ("error", str(exc))
    assert hinted == outcome(raw, kind, allow_infra, False)


def test_known_names_are_shared_when_the_records_follow_them():
    known = [f"i{k}" for k in range(20)]
    raw = orjson.dumps([{"instance": n, "status": "ok", "A": 1.0} for n in known])
    assert parse_records(raw, "r.json", kind="objective", known_names=known).names is known
