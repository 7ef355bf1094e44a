"""Parsers for values as literature tables print them (yields, ee, dr, temperatures, times).

Each parser takes the raw text and returns a number (or ``None`` for "no measured value");
text it cannot read raises :class:`ValueError` with a message saying what was expected.
What each special word becomes is a convention from :mod:`benchscore.rxn.conventions`.
"""

from __future__ import annotations

import re

from . import conventions as c

_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2012": "-", "\ufe63": "-", "\uff0d": "-"})
_NUMBER = r"[-+]?\d+(?:\.\d+)?"


def _clean(raw: str) -> str:
    return " ".join(raw.translate(_MINUS).split()).strip()


def _is_missing(text: str, raw: str) -> bool:
    return raw.strip() in c.MISSING_WORDS or text.lower() in c.MISSING_WORDS


def _percent(raw: str, what: str, *, low: float, high: float, suffix: str = "") -> float | None:
    """Shared body of yield and ee: a number, a bound, or a percentage, range-checked."""
    text = _clean(raw)
    if _is_missing(text, raw):
        return None
    body = text.lower()
    if suffix and body.endswith(suffix):
        body = body[: -len(suffix)].strip()
    body = body.rstrip("%").strip()
    m = re.fullmatch(rf"([<>]=?|≤|≥)?\s*({_NUMBER})\s*%?(?:\s*\(\s*{_NUMBER}\s*%?\s*\))?", body)
    if m is None:
        raise ValueError(f"cannot read {what} {raw!r}")
    bound, value = m.group(1), float(m.group(2))
    if bound in ("<", "<=", "≤"):
        value = value / 2
    elif bound in (">", ">=", "≥"):
        value = (value + high) / 2
    if not low <= value <= high:
        raise ValueError(f"{what} {raw!r} is outside [{low:g}, {high:g}]")
    return value


def parse_yield(raw: str) -> float | None:
    """Yield in percent from literature text.

    ``85%`` and ``85`` -> 85; ``>99%`` -> 99.5 and ``<5%`` -> 2.5 (middle of the open interval);
    ``trace`` -> 0; ``n.r.`` -> 0; ``n.d.``/``—``/empty -> None; ``62 (56)`` -> 62 (first value).
    Range 0..100.
    """
    word = _clean(raw).lower().rstrip(".")
    if word == "trace":
        return c.TRACE_YIELD
    if word in ("n.r", "nr", "no reaction"):
        return c.NO_REACTION_YIELD
    return _percent(raw, "yield", low=0.0, high=100.0)


def parse_ee(raw: str) -> float | None:
    """Enantiomeric excess in percent, -100..100.

    ``92% ee`` -> 92; ``-85`` (also with a unicode minus or en-dash) -> -85; ``rac`` -> 0;
    ``<5`` -> 2.5; ``>99`` -> 99.5; ``n.d.``/``—`` -> None.
    """
    text = _clean(raw).lower()
    if text in ("rac", "rac.", "racemic"):
        return c.RACEMIC_EE
    value = _percent(raw, "ee", low=-100.0, high=100.0, suffix="ee")
    return value


def parse_dr(raw: str) -> float | None:
    """Diastereomeric ratio as major/minor (seed section 8: ``20:1 -> 20``).

    ``10:1`` -> 10; ``3.5 : 1`` -> 3.5; ``92:8`` -> 11.5 (a split summing to 100 is the same
    rule: 92/8); ``>20:1`` -> 20 (the bound); ``1:1`` -> 1; a bare number ``5`` -> 5;
    ``n.d.``/``—`` -> None. A zero minor part is refused (write ``>99:1``).
    """
    text = _clean(raw)
    if _is_missing(text, raw):
        return None
    low = text.lower().removesuffix("dr").strip()
    m = re.fullmatch(r"([<>]=?|≥)?\s*(\d+(?:\.\d+)?)\s*(?:[:/]\s*(\d+(?:\.\d+)?))?", low)
    if m is None:
        raise ValueError(f"cannot read dr {raw!r}; expected a ratio like 10:1")
    a = float(m.group(2))
    b = float(m.group(3)) if m.group(3) is not None else 1.0
    if a == 0 or b == 0:
        raise ValueError(f"dr {raw!r} has a zero part; write a bound such as >99:1")
    return max(a, b) / min(a, b)


def parse_temperature(raw: str) -> float | str:
    """Temperature in °C: ``rt`` -> 25; ``80 °C`` -> 80; ``–78 °C`` -> -78; ``reflux`` -> ``"reflux"``."""
    text = _clean(raw).lower()
    if text in ("rt", "r.t.", "room temperature", "ambient"):
        return c.ROOM_TEMPERATURE_C
    if text == "reflux":
        return "reflux"
    m = re.fullmatch(rf"({_NUMBER})\s*(?:°\s*c|ºc|℃|c)?", text)
    if m is None:
        raise ValueError(f"cannot read temperature {raw!r}; expected e.g. 80 °C, rt or reflux")
    return float(m.group(1))


_TIME_UNITS = {
    "h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0,
    "min": 1 / 60, "mins": 1 / 60, "minute": 1 / 60, "minutes": 1 / 60,
    "d": 24.0, "day": 24.0, "days": 24.0,
    "s": 1 / 3600, "sec": 1 / 3600,
}


def parse_time(raw: str) -> float:
    """Reaction time in hours: ``12 h`` -> 12; ``30 min`` -> 0.5; ``2 d`` -> 48; ``overnight`` -> 16."""
    text = _clean(raw).lower()
    if text in ("overnight", "o/n", "on"):
        return c.OVERNIGHT_HOURS
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text)
    if m is None or m.group(2) not in _TIME_UNITS:
        raise ValueError(f"cannot read time {raw!r}; expected e.g. 12 h, 30 min, 2 d or overnight")
    return float(m.group(1)) * _TIME_UNITS[m.group(2)]
