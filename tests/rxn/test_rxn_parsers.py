"""Every literature value the issue lists, one case each (conventions from benchscore.rxn.conventions)."""

from __future__ import annotations

import pytest

from benchscore.rxn import conventions as c
from benchscore.rxn.parsers import parse_dr, parse_ee, parse_temperature, parse_time, parse_yield


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("85%", 85.0),
        ("85", 85.0),
        (">99%", 99.5),
        ("<5%", 2.5),
        ("trace", c.TRACE_YIELD),
        ("n.d.", None),
        ("n.r.", c.NO_REACTION_YIELD),
        ("—", None),
        ("62 (56)", 62.0),
        (" 85 % ", 85.0),
        ("", None),
    ],
)
def test_yield(raw, expected):
    assert parse_yield(raw) == expected


def test_trace_and_no_reaction_are_zero():
    assert parse_yield("trace") == 0.0
    assert parse_yield("n.r.") == 0.0


@pytest.mark.parametrize("raw", ["abc", "101%", "-5", "85%%x", "12 h"])
def test_yield_rejects(raw):
    with pytest.raises(ValueError):
        parse_yield(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("92% ee", 92.0),
        ("-85", -85.0),
        ("\u221285", -85.0),  # unicode minus
        ("\u201385", -85.0),  # en-dash
        ("rac", 0.0),
        ("<5", 2.5),
        (">99", 99.5),
        ("n.d.", None),
    ],
)
def test_ee(raw, expected):
    assert parse_ee(raw) == expected


@pytest.mark.parametrize("raw", ["150", "ee", "-101% ee"])
def test_ee_rejects(raw):
    with pytest.raises(ValueError):
        parse_ee(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (">20:1", 20.0),
        ("10:1", 10.0),
        ("3.5 : 1", 3.5),
        ("92:8", 11.5),
        ("1:10", 10.0),
        ("1:1", 1.0),
        ("20:1 dr", 20.0),
        ("—", None),
    ],
)
def test_dr(raw, expected):
    assert parse_dr(raw) == pytest.approx(expected)


def test_dr_split_summing_to_100_is_major_over_minor():
    assert parse_dr("92:8") == 92 / 8 == 11.5


@pytest.mark.parametrize("raw", ["100:0", "a:b", "10::1"])
def test_dr_rejects(raw):
    with pytest.raises(ValueError):
        parse_dr(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("rt", c.ROOM_TEMPERATURE_C),
        ("80 °C", 80.0),
        ("\u201378 °C", -78.0),
        ("\u221278 °C", -78.0),
        ("reflux", "reflux"),
        ("0 °C", 0.0),
    ],
)
def test_temperature(raw, expected):
    assert parse_temperature(raw) == expected


def test_temperature_rejects():
    with pytest.raises(ValueError):
        parse_temperature("hot")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("12 h", 12.0), ("overnight", c.OVERNIGHT_HOURS), ("30 min", 0.5), ("2 d", 48.0)],
)
def test_time(raw, expected):
    assert parse_time(raw) == expected


def test_time_rejects():
    with pytest.raises(ValueError):
        parse_time("12 fortnights")


def test_conventions_table_mentions_every_special_word():
    from benchscore.rxn.conventions import conventions_markdown

    text = conventions_markdown()
    for word in ("trace", "n.r.", "n.d.", ">20:1", "92:8", "rac", "reflux", "overnight", "62 (56)", "tanh"):
        assert word in text
