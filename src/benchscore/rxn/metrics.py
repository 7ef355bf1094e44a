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


#: the outcome of one sample: ``scored`` (a usable prediction; fill in blank: its combination is a
#: table row), ``unhit`` (fill in blank: a usable combination that is no table row), ``invalid``,
#: ``missing``
SCORED, UNHIT, INVALID, MISSING = "scored", "unhit", "invalid", "missing"


def multiple_choice_outcome(sample: dict, p: object) -> tuple:
    """``(status, relative_score, exact_match, yield_ratio)`` of one multiple-choice sample and its
    prediction ``p``: ``relative_score`` as the main metric counts it (0 for an invalid or missing
    answer), ``yield_ratio`` None when the sample has no ``best_yield``."""
    meta = sample["meta"]
    best_yield = meta["best_yield"]
    if p is None:
        return MISSING, 0.0, False, None if best_yield is None else 0.0
    rels = meta["option_relative_scores"]
    if not _is_int(p) or not 0 <= p < len(rels):
        return INVALID, 0.0, False, None if best_yield is None else 0.0
    ratio = None if best_yield is None else (meta["option_yields"][p] or 0.0) / best_yield
    return SCORED, rels[p], p in sample["answer"], ratio


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
    get = predictions.get
    for s in samples:
        status, rel, hit, ratio = multiple_choice_outcome(s, get(s["id"]))
        if ratio is not None:
            ratio_n += 1
            ratio_sum += ratio
        if status is MISSING:
            missing += 1
        elif status is INVALID:
            invalid += 1
        else:
            rel_sum += rel
            exact += hit
    return {
        "num_samples": n,
        "avg_relative_score": _mean(rel_sum, n),
        "exact_match_accuracy": _mean(exact, n),
        "avg_yield_ratio": _mean(ratio_sum, ratio_n),
        "num_invalid": invalid,
        "num_missing": missing,
        "num_without_yield": n - ratio_n,
    }


def multiple_choice_samples(samples: list, predictions: dict) -> list:
    """Every sample's outcome, in dataset order: ``{"id", "status", "relative_score",
    "exact_match"}`` (the records :func:`score_multiple_choice` sums up)."""
    get = predictions.get
    out = []
    for s in samples:
        status, rel, hit, _ = multiple_choice_outcome(s, get(s["id"]))
        out.append({"id": s["id"], "status": status, "relative_score": rel, "exact_match": hit})
    return out


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


def fill_in_blank_outcome(keys: tuple, sizes: tuple, lookup: dict, p: object) -> tuple:
    """``(status, relative_score)`` of one fill-in-blank sample (as indexed by
    :func:`index_fill_in_blank`) and its prediction ``p``: ``relative_score`` as the main metric
    counts it (0 for an invalid or missing answer; None for an unhit one, which leaves the
    denominator)."""
    if p is None:
        return MISSING, 0.0
    if type(p) is not dict or len(p) != len(keys):
        return INVALID, 0.0
    try:
        combo = tuple([p[k] for k in keys])
    except KeyError:
        return INVALID, 0.0
    for v, size in zip(combo, sizes):  # noqa: B905 - runs on any Python 3
        if type(v) is not int or not 0 <= v < size:
            return INVALID, 0.0
    rel = lookup.get(combo)
    if rel is None:
        return UNHIT, None
    return SCORED, rel


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
        status, rel = fill_in_blank_outcome(keys, sizes, lookup, get(sid))
        if status is SCORED:
            scored += 1
            rel_sum += rel
            if rel >= 1.0 - TOLERANCE:
                best += 1
        elif status is UNHIT:
            unhit += 1
        elif status is INVALID:
            invalid += 1
        else:
            missing += 1
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


def fill_in_blank_samples(index: dict, predictions: dict) -> list:
    """Every sample's outcome, in dataset order: ``{"id", "status", "relative_score"}`` (the records
    :func:`score_fill_in_blank` sums up; ``relative_score`` None for an unhit answer)."""
    get = predictions.get
    out = []
    for sid, (keys, sizes, lookup) in index.items():
        status, rel = fill_in_blank_outcome(keys, sizes, lookup, get(sid))
        out.append({"id": sid, "status": status, "relative_score": rel})
    return out


def chance_multiple_choice(samples: list) -> dict:
    """What a uniform random answer scores on ``samples`` in expectation (the chance level users
    compare a headline with; the V6 metrics are unchanged):

    - ``avg_relative_score`` = mean over questions of the mean of ``option_relative_scores``;
    - ``exact_match_accuracy`` = mean over questions of len(answer) / len(options) (1/options when
      one option is best; tied best options each count);
    - ``num_samples``; both are None for no sample.
    """
    n = len(samples)
    rels = [s["meta"]["option_relative_scores"] for s in samples]  # one per option
    rel = sum(sum(r) / len(r) for r in rels)
    exact = sum(len(s["answer"]) / len(r) for s, r in zip(samples, rels))  # noqa: B905 - runs on any Python 3
    return {"predictor": "a uniform random option per question", "num_samples": n,
            "avg_relative_score": _mean(rel, n), "exact_match_accuracy": _mean(exact, n)}


def chance_fill_in_blank(index: dict) -> dict:
    """What a uniform random answer scores on fill-in-blank questions (indexed by
    :func:`index_fill_in_blank`) in expectation:

    - ``avg_relative_score`` = mean over questions of the mean ``relative_score`` of its legal
      combinations (a uniform pick among the legal combinations: every answer is scored);
    - ``hit_rate`` = mean over questions of (number of legal combinations) / (number of candidate
      combinations, the product of the candidate counts): how often a uniform pick over every
      candidate combination is a table row;
    - ``num_samples``; both are None for no sample.
    """
    n = len(index)
    rel = hits = 0.0
    for _keys, sizes, lookup in index.values():
        grid = 1
        for size in sizes:
            grid *= size
        rel += sum(lookup.values()) / len(lookup)
        hits += len(lookup) / grid
    return {"predictor": "a uniform random legal combination per question (hit_rate: a uniform random "
                         "combination of the candidates)", "num_samples": n,
            "avg_relative_score": _mean(rel, n), "hit_rate": _mean(hits, n)}


#: the rows of :func:`relative_score_histogram`: invalid and missing answers (0 as counted), ten
#: bins of the scored relative scores ([0, 0.1) ... [0.9, 1.0), then exactly 1), unhit answers
HISTOGRAM_ROWS = ("invalid (0)", "missing (0)", *(f"[{i / 10:.1f}, {(i + 1) / 10:.1f})" for i in range(10)),
                  "1.0 (best)", "unhit (no score)")


def relative_score_histogram(records: list) -> list:
    """Counts of per-sample records (:func:`multiple_choice_samples`, :func:`fill_in_blank_samples`)
    in the rows of :data:`HISTOGRAM_ROWS`; a scored relative score within TOLERANCE of 1 is best."""
    counts = [0] * len(HISTOGRAM_ROWS)
    for r in records:
        status = r["status"]
        if status == INVALID:
            counts[0] += 1
        elif status == MISSING:
            counts[1] += 1
        elif status == UNHIT:
            counts[-1] += 1
        elif r["relative_score"] >= 1.0 - TOLERANCE:
            counts[-2] += 1
        else:
            counts[2 + min(9, max(0, int(r["relative_score"] * 10)))] += 1
    return counts
