from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from benchscore.common import BadInput, Format, loads_json, read_csv, read_json, read_jsonl, validate
from benchscore.common.readers import parse_finite_float


def write(tmp_path, name, data: bytes | str):
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


def test_read_json_ok(tmp_path):
    p = write(tmp_path, "a.json", '{"a": 1, "b": [1, 2, {"c": "x:y"}]}')
    assert read_json(p) == {"a": 1, "b": [1, 2, {"c": "x:y"}]}


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": Infinity}', '[-Infinity]'])
def test_non_finite_rejected(tmp_path, text):
    p = write(tmp_path, "a.json", text)
    with pytest.raises(BadInput, match=r"a\.json: .*NaN and Infinity are not allowed"):
        read_json(p)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '[{"x": {"k": "v:w", "k": "z"}}]',
        '{"a": "\\u003a", "a": 1}',
        '{"a": 1, "b": {"c": 1, "c": 1}}',
    ],
)
def test_duplicate_keys_rejected(tmp_path, text):
    p = write(tmp_path, "d.json", text)
    with pytest.raises(BadInput, match="key appears twice"):
        read_json(p)


def test_duplicate_key_names_the_record_of_a_list(tmp_path):
    p = write(tmp_path, "l.json", '[\n {"a": 1},\n {"b": {"c": 1}, "d": [1, {"e": 2, "e": 3}]}\n]')
    with pytest.raises(BadInput, match=r"/l\.json: record 2: field 'e': key appears twice"):
        read_json(p)


def test_escaped_colon_without_duplicates_is_fine(tmp_path):
    p = write(tmp_path, "e.json", '{"a\\u003a": "b\\u003a", "c": ":"}')
    assert read_json(p) == {"a:": "b:", "c": ":"}


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
))
def test_duplicate_check_never_rejects_valid_json(value):
    """Property: any JSON without duplicate keys (as json.dumps writes it) parses back unchanged."""
    raw = json.dumps(value).encode()
    assert loads_json(raw, "p.json") == value


def test_bad_utf8_and_malformed(tmp_path):
    p = write(tmp_path, "b.json", b'{"a": "\xff"}')
    with pytest.raises(BadInput, match="not valid UTF-8"):
        read_json(p)
    p = write(tmp_path, "m.json", '{"a": 1,,}')
    with pytest.raises(BadInput, match=r"m\.json: line 1 column \d+: malformed JSON"):
        read_json(p)


def test_missing_and_too_large(tmp_path):
    with pytest.raises(BadInput, match="file not found"):
        read_json(tmp_path / "nope.json")
    p = write(tmp_path, "big.json", "[" + "1," * 100 + "1]")
    with pytest.raises(BadInput, match="larger than the limit"):
        read_json(p, max_bytes=10)


def test_jsonl_reports_line(tmp_path):
    p = write(tmp_path, "r.jsonl", '{"a": 1}\n\n{"a": 2, "a": 3}\n')
    with pytest.raises(BadInput, match=r"r\.jsonl: line 3: field 'a': key appears twice"):
        read_jsonl(p)
    p = write(tmp_path, "s.jsonl", '{"a": 1}\n{"a": NaN}\n')
    with pytest.raises(BadInput, match=r"s\.jsonl: line 2"):
        read_jsonl(p)
    p = write(tmp_path, "t.jsonl", '{"a": 1}\n\n{"a": 2}\n')
    assert read_jsonl(p) == [{"a": 1}, {"a": 2}]


def test_csv_strict(tmp_path):
    p = write(tmp_path, "a.csv", "x,y\n1,2\n3,4\n")
    rows = read_csv(p, required=["x", "y"])
    assert [(r["x"], r["y"], r["__line__"]) for r in rows] == [("1", "2", "2"), ("3", "4", "3")]
    with pytest.raises(BadInput, match=r"a\.csv: line 1: field 'z': required column is missing"):
        read_csv(p, required=["x", "y", "z"])
    p = write(tmp_path, "b.csv", "x,y,y\n1,2,3\n")
    with pytest.raises(BadInput, match="column appears twice"):
        read_csv(p, required=["x", "y"])
    p = write(tmp_path, "c.csv", "x,y,w\n1,2,3\n")
    with pytest.raises(BadInput, match="field 'w': unknown column"):
        read_csv(p, required=["x", "y"])
    p = write(tmp_path, "d.csv", "x,y\n1,2\n3\n")
    with pytest.raises(BadInput, match=r"d\.csv: line 3: has 1 fields, the header has 2"):
        read_csv(p, required=["x", "y"])
    p = write(tmp_path, "e.csv", "\ufeffx,y\n1,2\n")
    assert read_csv(p, required=["x", "y"])[0]["x"] == "1"


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity", "abc", None, True, "", "1_0", " 1", "0x10", "1e"])
def test_parse_finite_float_rejects(value):
    with pytest.raises(BadInput, match=r"f\.csv: line 4: field 'score': expected a finite number"):
        parse_finite_float(value, source="f.csv", record="line 4", field="score")


def test_parse_finite_float_ok():
    assert parse_finite_float("0.25", source="f", record=1, field="x") == 0.25
    assert parse_finite_float(3, source="f", record=1, field="x") == 3.0
    for text, value in [("12", 12.0), ("-0.5", -0.5), ("+.5", 0.5), ("1e-3", 0.001), ("2.", 2.0)]:
        assert parse_finite_float(text, source="f", record=1, field="x") == value


class Item(Format):
    name: str
    weight: float = Field(ge=0)
    tags: list[str] = []


def test_validate_names_field():
    with pytest.raises(BadInput, match=r"c\.json: record 3: field 'weight': Input should be greater than or equal to 0"):
        validate(Item, {"name": "a", "weight": -1}, source="c.json", record=3)
    with pytest.raises(BadInput, match=r"field 'extra': Extra inputs are not permitted"):
        validate(Item, {"name": "a", "weight": 1, "extra": 2}, source="c.json")
    with pytest.raises(BadInput, match=r"field 'weight'.*finite"):
        validate(Item, {"name": "a", "weight": float("nan")}, source="c.json")
    with pytest.raises(BadInput, match=r"field 'tags\[1\]'"):
        validate(Item, {"name": "a", "weight": 1, "tags": ["x", 2]}, source="c.json")
