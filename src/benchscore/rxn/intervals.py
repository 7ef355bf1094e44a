"""95 % intervals beside the headline metrics of ``rxn eval-mc`` / ``rxn eval-fib`` (issue 16).

Questions built from one condition table share its substrates, its conditions and its measured
outcomes, so they are not independent: a model that understands one table tends to answer all its
questions well. Every interval therefore treats the condition table (``meta.source.table_id``, unique in a build; written
beside each per-sample record as ``table_id``) as the unit of independence:

- ``avg_relative_score`` (in [0, 1]), ``exact_match_accuracy`` and ``hit_rate`` (0/1 outcomes):
  :func:`benchscore.stats.intervals.item_interval` with the tables as units (``exact_mid_p`` when every
  table gives one question, else ``cluster_wilson``, or ``units_wilson`` when too few tables hold a
  success or a failure to estimate their spread);
- ``avg_yield_ratio`` (a chosen yield over the best condition's yield: it can exceed 1): the
  ``skew_corrected_t`` interval from 20 tables on, else none.

The per-sample outcomes come from :mod:`benchscore.rxn.metrics` (the records the metrics sum up),
so an interval always describes exactly the number beside it.
"""

from __future__ import annotations

from typing import Any

from benchscore.stats import intervals as S

from . import metrics

NO_SAMPLES = "no samples"
#: what a cluster is, in the reason of a missing interval
UNIT = "condition table"


def _tables(samples: list[dict[str, Any]]) -> list[str]:
    return [s["meta"]["source"]["table_id"] for s in samples]


def _mean(values: list[float], tables: list[str], bounded: bool) -> dict[str, Any]:
    if not values:
        return S.beside(None, unavailable=NO_SAMPLES, method="cluster_wilson" if bounded else "skew_corrected_t")
    return S.beside(lambda: S.item_interval(values, tables, bounded=bounded, unit=UNIT),
                    method="cluster_wilson" if bounded else "skew_corrected_t")


def _proportion(hits: list[bool], tables: list[str]) -> dict[str, Any]:
    return _mean([float(h) for h in hits], tables, True)


def multiple_choice(samples: list[dict[str, Any]], records: list[dict[str, Any]],
                    predictions: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Intervals of ``avg_relative_score``, ``exact_match_accuracy`` and ``avg_yield_ratio`` for the
    samples of a multiple-choice evaluation and their per-sample records (same order)."""
    tables = _tables(samples)
    ratios, ratio_tables = [], []
    get = predictions.get
    for s, t in zip(samples, tables, strict=True):
        if s["meta"]["best_yield"] is not None:
            ratios.append(metrics.multiple_choice_outcome(s, get(s["id"]))[3])
            ratio_tables.append(t)
    return {
        "avg_relative_score": _mean([r["relative_score"] for r in records], tables, True),
        "exact_match_accuracy": _proportion([r["exact_match"] for r in records], tables),
        "avg_yield_ratio": _mean(ratios, ratio_tables, False),
    }


def fill_in_blank(samples: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Intervals of ``avg_relative_score`` (over the samples that are not unhit: the metric's
    denominator) and ``hit_rate`` for a fill-in-blank evaluation."""
    tables = _tables(samples)
    kept = [(r["relative_score"], t) for r, t in zip(records, tables, strict=True) if r["status"] != metrics.UNHIT]
    return {
        "avg_relative_score": _mean([v for v, _ in kept], [t for _, t in kept], True),
        "hit_rate": _proportion([r["status"] == metrics.SCORED for r in records], tables),
    }


def evaluation_intervals(task: str, parsed: list[tuple[str, list[dict[str, Any]]]],
                         per_sample: dict[str, list[dict[str, Any]]], predictions: dict[str, Any]) -> dict[str, Any]:
    """The ``intervals`` block of an evaluation: ``{"per_dataset": {question_type: {metric: record}},
    "overall": {metric: record}}``, beside the output's ``per_dataset`` and ``overall`` numbers.
    ``parsed`` is each sub-dataset's samples, ``per_sample`` their records (same order)."""
    every = [x for _, samples in parsed for x in samples]
    records = [r for q, _ in parsed for r in per_sample[q]]
    if task == "multiple_choice":
        return {"per_dataset": {q: multiple_choice(s, per_sample[q], predictions) for q, s in parsed},
                "overall": multiple_choice(every, records, predictions)}
    return {"per_dataset": {q: fill_in_blank(s, per_sample[q]) for q, s in parsed},
            "overall": fill_in_blank(every, records)}
