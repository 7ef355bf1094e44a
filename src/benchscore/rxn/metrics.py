"""Evaluation metrics of testsetV6 (seed sections 6.5 and 7.4), Python standard library only.

This module is copied verbatim into every build folder as ``rxn_metrics.py`` so that the
folder's ``evaluate_*.py`` scripts compute exactly what ``benchscore rxn eval-*`` computes.
It must therefore import nothing but the standard library.

A prediction file is a JSON object keyed by sample id. Multiple choice: an integer option
index or null. Fill in blank: an object ``{condition_key: integer candidate index}`` or null.
Null or an absent id is *missing*. Every other answer that is not a usable prediction is
*invalid* and scores like a wrong answer: an out-of-range index, a wrong key set, an index that
is not an integer (``"2"``, ``1.0``, ``true``, ``"XPhos"``), a multiple-choice answer that is not
an integer, a fill-in-blank answer that is not an object. Only an id that is not a sample id
is a :class:`PredictionError` (the caller refuses the file: bad input, exit 2).
"""

from __future__ import annotations

TOLERANCE = 1e-9


class PredictionError(ValueError):
    """A prediction for an unknown sample id."""

    def __init__(self, record: str, message: str) -> None:
        super().__init__(f"{record}: {message}")
        self.record = record
        self.message = message


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_prediction_ids(predictions: dict, known_ids: set) -> None:
    """Every predicted id must be a sample id of the datasets evaluated."""
    for key in predictions:
        if key not in known_ids:
            raise PredictionError(f"id {key!r}", "not a sample id of the dataset(s) given")


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


def score_multiple_choice(samples: list, predictions: dict) -> dict:
    """Multiple-choice metrics over ``samples`` (dicts as in the dataset file).

    - ``avg_relative_score`` (main) = sum over samples of ``option_relative_scores[p]`` / N, where
      a missing or invalid prediction scores 0 and stays in N;
    - ``exact_match_accuracy`` = #(p in answer) / N;
    - ``avg_yield_ratio`` = mean of ``option_yields[p] / best_yield`` over the samples whose
      ``best_yield`` is not null (missing/invalid = 0); the others are ``num_without_yield``;
    - ``num_invalid`` (not an integer, or out of range), ``num_missing`` (null or absent), ``num_samples``.
    """
    n = len(samples)
    rel_sum = 0.0
    exact = 0
    ratio_sum = 0.0
    ratio_n = 0
    invalid = 0
    missing = 0
    for s in samples:
        meta = s["meta"]
        best_yield = meta["best_yield"]
        if best_yield is not None:
            ratio_n += 1
        p = predictions.get(s["id"])
        if p is None:
            missing += 1
            continue
        rels = meta["option_relative_scores"]
        if not _is_int(p) or not 0 <= p < len(rels):
            invalid += 1
            continue
        rel_sum += rels[p]
        if p in s["answer"]:
            exact += 1
        if best_yield is not None:
            y = meta["option_yields"][p]
            ratio_sum += (y or 0.0) / best_yield
    return {
        "num_samples": n,
        "avg_relative_score": _mean(rel_sum, n),
        "exact_match_accuracy": _mean(exact, n),
        "avg_yield_ratio": _mean(ratio_sum, ratio_n),
        "num_invalid": invalid,
        "num_missing": missing,
        "num_without_yield": n - ratio_n,
    }


def index_fill_in_blank(samples: list) -> dict:
    """Prepare fill-in-blank samples for scoring: id -> (query_keys, sizes, lookup).

    ``lookup`` maps the tuple of candidate indices (in ``query_keys`` order) of every legal
    combination to its ``relative_score``. Build it once per dataset, then score any number of
    prediction files with :func:`score_fill_in_blank`.
    """
    index = {}
    for s in samples:
        keys = tuple(s["query_keys"])
        sizes = tuple(len(s["input"]["candidate_values"][k]) for k in keys)
        lookup = {}
        for combo in s["meta"]["legal_combinations"]:
            ind = combo["indices"]
            lookup[tuple(ind[k] for k in keys)] = combo["relative_score"]
        index[s["id"]] = (keys, sizes, lookup)
    return index


def score_fill_in_blank(index: dict, predictions: dict) -> dict:
    """Fill-in-blank metrics (seed section 7.4).

    A valid prediction is an object naming exactly the ``query_keys``, each with an in-range integer
    index; anything else (null or absent aside) is *invalid*.
    If its combination is in ``meta.legal_combinations`` it is *scored* with that combination's
    ``relative_score``; otherwise it is *unhit* and leaves the main denominator.

    - ``hit_rate`` = num_scored / num_samples;
    - ``avg_relative_score`` (main) = sum of scored relative scores / (num_samples - num_unhit)
      (missing and invalid predictions stay in the denominator with 0);
    - ``best_hit_rate_among_scored`` = #(scored with relative score 1) / num_scored;
    - ``num_scored``, ``num_unhit``, ``num_invalid``, ``num_missing``, ``num_samples``.
    """
    n = len(index)
    scored = unhit = invalid = missing = best = 0
    rel_sum = 0.0
    get = predictions.get
    for sid, (keys, sizes, lookup) in index.items():
        p = get(sid)
        if p is None:
            missing += 1
            continue
        ok = type(p) is dict and len(p) == len(keys)
        if ok:
            try:
                combo = tuple([p[k] for k in keys])
            except KeyError:
                ok = False
        if ok:
            for v, size in zip(combo, sizes):  # noqa: B905 - runs on any Python 3
                if type(v) is not int or not 0 <= v < size:
                    ok = False
                    break
        if not ok:
            invalid += 1
            continue
        rel = lookup.get(combo)
        if rel is None:
            unhit += 1
            continue
        scored += 1
        rel_sum += rel
        if rel >= 1.0 - TOLERANCE:
            best += 1
    return {
        "num_samples": n,
        "hit_rate": _mean(scored, n),
        "num_scored": scored,
        "num_unhit": unhit,
        "num_invalid": invalid,
        "num_missing": missing,
        "avg_relative_score": _mean(rel_sum, n - unhit),
        "best_hit_rate_among_scored": _mean(best, scored),
    }
