"""Reading a model's free-text answer into the evaluator's format (``benchscore rxn predict``).

The rules are forgiving in a fixed, documented way (``conventions.py``, "model answers") and never
guess: when no rule matches, the answer is *unparseable* and :func:`parse_mc_answer` /
:func:`parse_fib_answer` return ``None``. Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

_FENCE = re.compile(r"^\s*```[^\n]*$", re.MULTILINE)
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
#: an integer that stands alone: not part of a word or SMILES (``C1``, ``_01``), a decimal or list
#: (``0.5``, ``1,4``), a ratio or a time (``20:1``, ``14:59``), a hyphenated name or date (``2-MeTHF``,
#: ``bh-1``, ``2018-03-24``), a percentage or a temperature (``80 °C``)
_STANDALONE_INT = re.compile(r"(?<![\w\-])(?<![0-9][.,:])([0-9]+)(?![\w\-]|[.,:][0-9])(?!\s*[%°])")
_DECODER = json.JSONDecoder()


def _strip_fences(text: str) -> str:
    return _FENCE.sub("", text).strip()


def _json_objects(text: str) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Every top-level JSON object in ``text``, in order: (start, end, object)."""
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            yield pos, end, value
            pos = text.find("{", end)
        else:  # pragma: no cover - raw_decode at "{" only yields objects
            pos = text.find("{", pos + 1)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_mc_answer(text: str, sample_id: str = "") -> int | None:
    """The option index a multiple-choice answer names, or None (unparseable).

    In order: the whole answer (code fences ignored) as an integer; the first JSON object with exactly
    one entry whose value is an integer; the first stand-alone integer outside JSON objects and
    double-quoted strings, with the sample id removed first.
    """
    body = _strip_fences(text)
    if re.fullmatch(r"[0-9]+", body):
        return int(body)
    rest, last = [], 0
    for start, end, obj in _json_objects(body):
        if len(obj) == 1:
            (value,) = obj.values()
            if _is_int(value):
                return value
        rest.append(body[last:start])
        last = end
    rest.append(body[last:])
    plain = " ".join(rest)
    if sample_id:
        plain = plain.replace(sample_id, " ")
    plain = _QUOTED.sub(" ", plain)
    match = _STANDALONE_INT.search(plain)
    return int(match.group(1)) if match else None


def parse_fib_answer(text: str, query_keys: Sequence[str]) -> dict[str, Any] | None:
    """The ``{key: index}`` object a fill-in-blank answer gives, or None (unparseable).

    The first JSON object (code fences ignored) whose keys are exactly ``query_keys``, also when it is
    wrapped in one outer key (``{"<sample id>": {...}}``). Its values are kept as written: an index
    written as text stays text and the evaluator counts the prediction invalid.
    """
    want = set(query_keys)
    for _, _, obj in _json_objects(_strip_fences(text)):
        if len(obj) == 1:
            (key, inner), = obj.items()
            if key not in want and isinstance(inner, dict):
                obj = inner
        if set(obj) == want:
            return obj
    return None
