from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from benchscore.common import BadInput, Format, loads_json, read_csv, read_json, read_jsonl, readers, validate
from benchscore.common.readers import (
    MAX_DEPTH,
    check_file,
    check_nesting,
    parse_finite_float,
    read_bytes,
    read_csv_table,
    read_json_bytes,
)


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


# ---- issue 15, point 5: anything that is not a regular file is refused; the size limit holds while reading
@pytest.fixture
def specials(tmp_path):
    """A FIFO, links to /dev/zero and /dev/null, a link loop, a dangling link, a folder."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero, null, loop, dangling = (tmp_path / n for n in ("zero.json", "null.json", "loop.json", "dangling.json"))
    zero.symlink_to("/dev/zero")
    null.symlink_to("/dev/null")
    loop.symlink_to(loop.name)
    dangling.symlink_to("missing.json")
    folder = tmp_path / "folder.json"
    folder.mkdir()
    return {"fifo": (fifo, "is a FIFO (named pipe), not a regular file"),
            "dev_zero": (zero, "is a character device (a symbolic link to /dev/zero), not a regular file"),
            "dev_null": (null, "is a character device (a symbolic link to /dev/null), not a regular file"),
            "loop": (loop, "symbolic link loop"),
            "dangling": (dangling, "file not found (a symbolic link to 'missing.json', which does not exist)"),
            "folder": (folder, "is a folder, expected a file")}


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "dev_null", "loop", "dangling", "folder"])
@pytest.mark.parametrize("reader", [read_bytes, read_json, read_jsonl, read_json_bytes, check_file,
                                    lambda p: read_csv(p, required=["x"]), read_csv_table])
def test_only_regular_files_are_read(specials, kind, reader):
    """A FIFO never blocks the reader (it is refused before it is opened, and opened without blocking),
    /dev/zero is never read, a link loop is one line (it was an OSError traceback)."""
    path, message = specials[kind]
    with pytest.raises(BadInput) as exc:
        reader(path)
    assert str(exc.value).startswith(f"{path}: {message}"), str(exc.value)


def test_a_fifo_swapped_in_after_the_check_does_not_block(tmp_path, monkeypatch):
    """The open file is checked again: a FIFO that replaces the file between stat and open is refused."""
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    regular = os.stat(__file__)
    real_stat = os.stat
    monkeypatch.setattr(readers.os, "stat", lambda p, *a, **k: regular if str(p) == str(fifo) else real_stat(p, *a, **k))
    with pytest.raises(BadInput, match="is a FIFO"):
        read_bytes(fifo)


def test_the_size_limit_is_enforced_while_reading(monkeypatch):
    """A file longer than it says (a /proc file says 0 bytes) is read only up to limit + 1 bytes."""
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("needs /proc (Linux)")
    assert status.stat().st_size == 0 and len(status.read_bytes()) > 101
    got: list[int] = []
    real_read = os.read

    def counting(fd, n):
        chunk = real_read(fd, n)
        got.append(len(chunk))
        return chunk

    monkeypatch.setattr(readers.os, "read", counting)
    with pytest.raises(BadInput, match=r"status: file is more than 100 bytes, larger than the limit of 100"):
        read_bytes(status, max_bytes=100)
    assert sum(got) == 101
    monkeypatch.setattr(readers, "DEFAULT_MAX_BYTES", 100)  # the default limit is looked up at each call
    got.clear()
    with pytest.raises(BadInput, match="larger than the limit of 100"):
        read_bytes(status)
    assert sum(got) == 101


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:  # sparse: 3 GiB on disk in no time
        fh.truncate(3 * 1024**3)
    monkeypatch.setattr(readers.os, "read", lambda fd, n: pytest.fail("read a file over the limit"))
    with pytest.raises(BadInput, match=r"big\.json: file is 3221225472 bytes, larger than the limit of 2147483648"):
        read_bytes(big)


def test_a_file_that_fits_is_read_whole(tmp_path):
    p = write(tmp_path, "ok.json", b'{"a": 1}' * 1000)
    assert read_bytes(p, max_bytes=8000) == b'{"a": 1}' * 1000
    with pytest.raises(BadInput, match="larger than the limit of 7999"):
        read_bytes(p, max_bytes=7999)


# ---- issue 15, point 6: one nesting limit, on the bytes, before anything recurses
def _nested(depth: int, *, objects: bool = False, leaf: str = "1") -> str:
    if objects:
        return '{"k":' * depth + leaf + "}" * depth
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize("objects", [False, True])
def test_nesting_up_to_the_limit_is_fine_one_more_is_refused(tmp_path, objects):
    ok = write(tmp_path, "ok.json", _nested(MAX_DEPTH, objects=objects))
    read_json(ok)
    deep = write(tmp_path, "deep.json", _nested(MAX_DEPTH + 1, objects=objects))
    with pytest.raises(BadInput, match=rf"deep\.json: line 1: nested deeper than {MAX_DEPTH} levels"):
        read_json(deep)


@pytest.mark.parametrize("depth", [255, 1000, 100_000])
def test_deep_nesting_is_one_line_whatever_the_depth(tmp_path, depth):
    """255 broke orjson.dumps in mira, 1000 the stdlib parser of the duplicate-key check (tracebacks)."""
    p = write(tmp_path, "d.json", _nested(depth))
    with pytest.raises(BadInput, match=f"nested deeper than {MAX_DEPTH}"):
        read_json(p)
    q = write(tmp_path, "d.jsonl", '{"a": 1}\n{"a": ' + _nested(depth) + "}\n")
    with pytest.raises(BadInput, match=rf"d\.jsonl: line 2: nested deeper than {MAX_DEPTH}"):
        read_jsonl(q)


def test_brackets_inside_strings_do_not_count(tmp_path):
    text = '{"a": "' + "[" * 500 + '", "b": "\\"' + "{" * 500 + '\\\\", "c": [' + '"]]]]",' * 200 + "1]}"
    assert read_json(write(tmp_path, "s.json", text))["a"] == "[" * 500
    # closing brackets in a string never hide real depth
    hidden = "[" * 60 + '"' + "]" * 60 + '",' + _nested(60) + "]" * 60
    with pytest.raises(BadInput, match="nested deeper than"):
        read_json(write(tmp_path, "h.json", hidden))


def test_json_lines_are_counted_line_by_line(tmp_path):
    lines = "".join(_nested(MAX_DEPTH) + "\n" for _ in range(50))
    assert len(read_jsonl(write(tmp_path, "l.jsonl", lines))) == 50
    # a broken line (an unclosed bracket) is malformed, it does not add depth to the next lines
    broken = "[\n" * 300
    with pytest.raises(BadInput, match="malformed JSON"):
        read_jsonl(write(tmp_path, "b.jsonl", broken))


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


_TRICKY = st.text(alphabet='[]{}"\\:,ab \n\t\u00e9', max_size=6)


@given(st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3), st.lists(st.sampled_from(["list", "dict"]), min_size=1, max_size=4),
       st.lists(_TRICKY, max_size=4), st.integers(0, 3))
def test_the_nesting_check_agrees_with_the_real_depth(depth, kinds, strings, siblings):
    """Property: whatever strings hold (brackets, quotes, backslashes), refused exactly when deeper than the limit."""
    value = strings or "leaf"
    for level in range(depth):
        kind = kinds[level % len(kinds)]
        extra = [s for s in strings[:siblings]]
        value = [*extra, value] if kind == "list" else {**{f"s{i}": s for i, s in enumerate(extra)}, "v": value}
    raw = json.dumps(value).encode()
    real = _depth(value)
    if real > MAX_DEPTH:
        with pytest.raises(BadInput, match="nested deeper than"):
            check_nesting(raw, "p.json")
    else:
        check_nesting(raw, "p.json")
        assert loads_json(raw, "p.json") == value
