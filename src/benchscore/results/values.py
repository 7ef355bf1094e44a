"""inspect_ai's score values as numbers, and its epoch reducers (docs/results.md).

inspect_ai scores a sample with a ``Value``: a string, a number, a boolean, a list or a dict. Its
metrics read a value with ``value_to_float``: ``"C"`` (correct) 1, ``"I"`` (incorrect) 0, ``"P"``
(partial) 0.5, ``"N"`` (no answer) 0, a number or a boolean as it is, ``"yes"`` / ``"true"`` 1,
``"no"`` / ``"false"`` 0, a string holding a finite number that number. A NaN value means
"unscored" (inspect_ai's own sentinel). A dict value is one metric per key, a list one per index.
Any other value is not a number: :class:`NotNumeric` (inspect_ai would warn and count it 0; benchscore
does not guess). Neither is a number beyond :data:`MAX_MAGNITUDE` (1e100) in magnitude: the squares and
cubes the intervals and tests take of such values overflow (1e308 gives an infinite standard error), so
every reader of this room refuses them (here: :class:`NotNumeric`) instead of publishing a broken number.

The epochs of a sample are reduced as the task declared (``mean`` when it declared nothing), with
the formulas of the reducers inspect_ai ships (``inspect_ai/scorer/_reducer/reducer.py``): ``mean``,
``median``, ``max``, ``mode`` (the most frequent value as the scorer wrote it, ties to the first
epoch), ``majority`` (a value more than half the epochs carry; none: undefined), ``at_least_k`` (1
when at least k epochs score >= 1), ``pass_at_k`` (Chen et al. 2021: 1 - C(n - c, k) / C(n, k) with c
epochs scoring >= 1 of n) and ``pass_k_k`` (C(c, k) / C(n, k)). inspect_ai's ``collect`` keeps every
epoch's value as a list (no number per sample) and a custom reducer (``@score_reducer`` in the task)
cannot be known from its name: :func:`reducer` refuses both (:class:`UnknownReducer`).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

CORRECT, INCORRECT, PARTIAL, NOANSWER = "C", "I", "P", "N"
_LETTERS = {CORRECT: 1.0, INCORRECT: 0.0, PARTIAL: 0.5, NOANSWER: 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: the reducer when a task declares none (inspect_ai's default)
DEFAULT_REDUCER = "mean"
#: the largest magnitude of a score value read as a number (its cube stays finite: the statistics cannot overflow)
MAX_MAGNITUDE = 1e100


class NotNumeric(ValueError):
    """A score value that inspect_ai's conventions do not read as a number."""


class UnknownReducer(ValueError):
    """An epoch reducer benchscore cannot apply: a custom one, or one that gives no number per sample."""


def scalar(value: Any) -> float | None:
    """One scalar score value as a float; None when unscored (NaN or None). Raises :class:`NotNumeric`."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        try:
            out = float(value)
        except OverflowError:  # an integer beyond the largest float
            raise NotNumeric(f"{shown_number(value)} is too large for a float") from None
        if math.isnan(out):
            return None
        if math.isinf(out):
            raise NotNumeric(f"{value!r} is not a finite number")
        return _bounded(out, value)
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        low = value.strip().lower()
        if low in _WORDS:
            return _WORDS[low]
        if _NUMBER.fullmatch(value.strip()):
            out = float(value)
            if math.isfinite(out):
                return _bounded(out, value)
    raise NotNumeric(f"{value!r} is none of C / I / P / N, a number, a boolean, yes / no or a numeric string")


def shown_number(value: Any) -> str:
    """A number as a message shows it: a huge integer by its digit count, not its thousands of digits."""
    from benchscore.common.errors import shown

    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an integer of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
    return shown(value)


def within_magnitude(value: float) -> bool:
    """Whether a finite value is one the statistics take without overflow (:data:`MAX_MAGNITUDE`)."""
    return abs(value) <= MAX_MAGNITUDE


def _bounded(out: float, value: Any) -> float:
    if not within_magnitude(out):
        raise NotNumeric(f"{value!r} is beyond {MAX_MAGNITUDE:g} in magnitude (the statistics of such values "
                         "overflow)")
    return out


def flatten(name: str, value: Any) -> dict[str, float | None]:
    """A scorer's value as ``{metric: float | None}``: a scalar under the scorer's own name, a dict one
    metric per key (``scorer/key``), a list one per index (``scorer/0``). Raises :class:`NotNumeric`."""
    if isinstance(value, Mapping):
        return {f"{name}/{k}": scalar(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return {f"{name}/{i}": scalar(v) for i, v in enumerate(value)}
    return {name: scalar(value)}


def written(name: str, value: Any) -> dict[str, Any]:
    """A scorer's value as :func:`flatten` keys it, each value as the scorer wrote it (``"C"``, ``True``, 3):
    what a counting reducer (``mode``, ``majority``) counts. Call after :func:`flatten` accepted the value."""
    if isinstance(value, Mapping):
        return {f"{name}/{k}": v for k, v in value.items()}
    if isinstance(value, list | tuple):
        return {f"{name}/{i}": v for i, v in enumerate(value)}
    return {name: value}


def _k_of(name: str, prefix: str) -> int | None:
    m = re.fullmatch(re.escape(prefix) + r"_(\d+)", name)
    return int(m.group(1)) if m else None


def _pass_at(values: Sequence[float], k: int) -> float:
    n = len(values)
    c = sum(1 for v in values if v >= 1.0)
    if n < k:
        return math.nan
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / j for j in range(n - c + 1, n + 1))


def _pass_k(values: Sequence[float], k: int) -> float:
    n = len(values)
    if n < k:
        return math.nan
    return math.comb(sum(1 for v in values if v >= 1.0), k) / math.comb(n, k)


def _at_least(values: Sequence[float], k: int) -> float:
    return 1.0 if sum(1 for v in values if v >= 1.0) >= k else 0.0


def _mode(values: Sequence[Any]) -> float:
    """inspect_ai's ``mode``: the most frequent value as written (``"I"`` and ``"N"`` are two values), ties
    to the one seen first."""
    return scalar(Counter(values).most_common(1)[0][0])  # type: ignore[return-value]


def _majority(values: Sequence[Any]) -> float:
    """inspect_ai's ``majority``: the value more than half of the epochs carry (as written), else undefined
    (NaN: no strict majority)."""
    value, count = Counter(values).most_common(1)[0]
    return scalar(value) if 2 * count > len(values) else math.nan  # type: ignore[return-value]


_PLAIN: dict[str, Callable[[Sequence[Any]], float]] = {
    "mean": statistics.fmean, "median": statistics.median, "mode": _mode, "majority": _majority, "max": max,
}
#: the reducers that count values as the scorer wrote them (they get raw values, not numbers)
COUNTING = frozenset({"mode", "majority"})
_WITH_K: dict[str, Callable[[Sequence[float], int], float]] = {
    "at_least": _at_least, "pass_at": _pass_at, "pass_k": _pass_k,
}
#: reducers inspect_ai ships that give no number per sample
_NOT_A_NUMBER = {"collect": "it keeps every epoch's value as a list, not one number per sample"}


def reducer(name: str) -> Callable[[Sequence[Any]], float]:
    """The reduction inspect_ai names ``name`` (see the module docstring): a function of the epochs' values
    (numbers; for :data:`COUNTING` reducers the values as written) giving the sample's value, NaN where the
    reducer is undefined. Raises :class:`UnknownReducer` for any other name."""
    if name in _PLAIN:
        return _PLAIN[name]
    for prefix, fn in _WITH_K.items():
        k = _k_of(name, prefix)
        if k is not None and k >= 1:
            return lambda values, fn=fn, k=k: fn(values, k)
    if name in _NOT_A_NUMBER:
        raise UnknownReducer(f"epoch reducer {name!r} gives no number per sample: {_NOT_A_NUMBER[name]}")
    raise UnknownReducer(f"epoch reducer {name!r} is not one inspect_ai ships (a custom reducer: benchscore "
                         f"cannot know what it computes; the reducers it applies: {', '.join(known_reducers())})")


def known_reducers() -> list[str]:
    """The epoch reducers benchscore applies (K: any k >= 1), those inspect_ai ships that give a number."""
    return [*_PLAIN, *(f"{p}_K" for p in _WITH_K)]


__all__ = ["COUNTING", "DEFAULT_REDUCER", "MAX_MAGNITUDE", "NotNumeric", "UnknownReducer", "flatten", "known_reducers", "reducer",
           "scalar", "shown_number", "within_magnitude", "written"]
