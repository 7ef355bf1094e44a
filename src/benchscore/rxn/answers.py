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

#: a code-fence marker: a run of three or more backticks and the language tag glued to it (```` ```json ````).
#: Only the marker goes, never the rest of its line: ```` ``` {"solvent": 0} ``` ```` keeps its object.
_FENCE = re.compile(r"`{3,}(?:[A-Za-z][\w+.-]*)?")  # a tag starts with a letter: ```2``` keeps its 2
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
#: an integer that stands alone: not part of a word or SMILES (``C1``, ``_01``), a decimal or list
#: (``0.5``, ``1,4``), a ratio or a time (``20:1``, ``14:59``), a hyphenated name or date (``2-MeTHF``,
#: ``bh-1``, ``2018-03-24``), a percentage or a temperature (``80 °C``)
_STANDALONE_INT = re.compile(r"(?<![\w\-])(?<![0-9][.,:])([0-9]+)(?![\w\-]|[.,:][0-9])(?!\s*[%°])")
_DECODER = json.JSONDecoder()
#: what may stand before an index at the start of an answer: markup and punctuation, no word, no number
_LEAD = re.compile(r"[\s*_`>#(\[\-–.:]*")
#: an answer cue right before the index: "Option 3", "answer: 3", "The answer is #3", "I choose option 3", "-> 6"
_CUE = re.compile(r"(?:\b(?:option|answer|index|choice|choose|chose|pick|select)(?:\s+(?:is|=|number|no\.?))?"
                  r"|->|=>|→)[\s*_`:#(\[]*$", re.IGNORECASE)
#: arithmetic around a number: an operator (or an `x` between numbers) before or after it, spaces allowed
_ARITH_BEFORE = re.compile(r"(?:[+/=×÷^<>]|(?<!\*)\*|[0-9.]\s*[x−-])\s*$")
_ARITH_AFTER = re.compile(r"^\s*(?:[+/=×÷^<>−]|\*(?!\*)|-\s*[0-9]|x\s*[0-9(])")


def _strip_fences(text: str) -> str:
    return _FENCE.sub(" ", text).strip()


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
    double-quoted strings (the sample id removed first), and only when it opens the answer (markup and
    punctuation aside: ``**2**``, ``(0)``, ``3: {...}``) or follows an answer cue (``Option 3``,
    ``The answer is 2``, ``-> 6``), and is not part of arithmetic (an operator, or an ``x`` between
    numbers, on either side). A first integer inside arithmetic or prose is not an index: the answer is
    unparseable (invalid), and no later integer is looked for.
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
    if match is None:
        return None
    before, after = plain[:match.start(1)], plain[match.end(1):]
    cue = _CUE.search(before) is not None
    if _ARITH_AFTER.search(after) or (not cue and _ARITH_BEFORE.search(before)):
        return None  # the first integer sits in arithmetic ("0.15 * 2 = 4", "0.15x + 24 = 38"): not an index
    if not (cue or _LEAD.fullmatch(before)):
        return None  # the first integer sits in prose ("There are 3 options, the best is 2"): not an index
    return int(match.group(1))


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
