"""Model-graded results corrected for their grader's errors (issue 36): ``compare`` / ``leaderboard``
``--judge-calibration FILE``.

An inspect_ai task graded by a model (``model_graded_qa``, ``model_graded_fact``, a custom grader) gives every
sample the grader's value; a person gave some samples their *known* value. The calibration file
(:class:`CalibrationEntry`, JSON Lines) names, per line, the result (its label in the comparison: the model),
the metric, the sample and the known value, as compare counts the sample (after the epoch reducer). Per result
and metric this module gives:

- the corrected value and its 95 % interval (:func:`benchscore.stats.ppi.corrected_mean`: prediction-powered
  inference; the ``--cluster`` unit as the independent unit), beside the value the grader's scores give;
- the grader's agreement with the known values when both are 0/1 (:func:`benchscore.stats.agreement.agreement_block`:
  sensitivity, specificity, Cohen's kappa with their intervals);
- per pair of results, the paired comparison on corrected values: the prediction-powered mean of the per-sample
  differences, known where both results' samples are known, and its interval (at ``1 - alpha``, or ``1 - alpha /
  pairs`` with three or more results, Bonferroni); ``differs`` when it excludes 0.

It computes no statistic of its own (they are in ``benchscore.stats``); it pairs the file with compare's entries.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from benchscore.common.errors import BadInput
from benchscore.common.models import Format
from benchscore.stats import agreement as A
from benchscore.stats.compare import Entry
from benchscore.stats.ppi import corrected_mean

METHOD = ("prediction-powered inference (PPI++, Angelopoulos et al. 2023) over the samples of each result: a sample "
          "with a known value counts it; every other sample counts lambda x the grader's value plus the mean of "
          "(known - lambda x grader) over the known samples (lambda 1 below 100 known values); 95 % interval "
          "Student t on the cluster-robust standard error, none below 20 known values; pairs: the same estimator on "
          "the per-sample differences, known where both samples are known, at 1 - alpha (1 - alpha / pairs with "
          "three or more results); agreement (0/1 values): sensitivity, specificity, Cohen's kappa")


class CalibrationEntry(Format):
    """One known value of a model-graded sample (``compare --judge-calibration``, JSON Lines, one per line)."""

    result: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="the result's label in the comparison (the model, or FILE:MODEL when two files share a model)")
    metric: Annotated[str, StringConstraints(min_length=1)] = Field(description="the metric compared (task/scorer)")
    sample_id: str | int
    known_value: Annotated[float, Field(allow_inf_nan=False)] = Field(
        description="the value a person gives the sample, on the metric's scale (1 correct, 0 incorrect)")
    reason: str | None = Field(None, description="one line: why")


def load(path: Path) -> tuple[list[CalibrationEntry], list[int]]:
    """The calibration file's entries and their line numbers; a (result, metric, sample) given twice is refused."""
    from benchscore.common.readers import loads_json, read_json_bytes, validate

    data = read_json_bytes(path, lines=True)
    out, lines = [], []
    seen: dict[tuple[str, str, str], int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        entry = validate(CalibrationEntry, loads_json(raw, path, line=number), source=path, record=f"line {number}")
        key = (entry.result, entry.metric, str(entry.sample_id))
        if key in seen:
            raise BadInput(f"sample {entry.sample_id!r} of {entry.result} on {entry.metric} appears twice (first on "
                           f"line {seen[key]})", source=path, record=f"line {number}", field="sample_id")
        seen[key] = number
        out.append(entry)
        lines.append(number)
    if not out:
        raise BadInput("no known value in the file", source=path)
    return out, lines


def _known(entries: Sequence[Entry], calibration: list[CalibrationEntry], lines: list[int],
           path: Path) -> dict[tuple[str, str], dict[str, float]]:
    """Per (result, metric), sample -> known value; an entry naming no result, metric or sample compared is refused."""
    metrics = {(e.label, m.name): m for e in entries for m in e.metrics}
    out: dict[tuple[str, str], dict[str, float]] = {}
    for c, line in zip(calibration, lines, strict=True):
        where = {"source": path, "record": f"line {line}"}
        if c.result not in {e.label for e in entries}:
            raise BadInput(f"result {c.result!r} is not compared (the results are "
                           f"{', '.join(e.label for e in entries)})", field="result", **where)
        m = metrics.get((c.result, c.metric))
        if m is None:
            raise BadInput(f"metric {c.metric!r} is not compared for {c.result}", field="metric", **where)
        sid = str(c.sample_id)
        if sid not in m.items:
            raise BadInput(f"sample {sid!r} is not among the samples compared for {c.result} on {c.metric}",
                           field="sample_id", **where)
        low, high = m.bounds
        if (low is not None and c.known_value < low) or (high is not None and c.known_value > high):
            raise BadInput(f"known_value {c.known_value} lies outside the metric's values [{low}, {high}]",
                           field="known_value", **where)
        out.setdefault((c.result, c.metric), {})[sid] = float(c.known_value)
    return out


def _value(item: tuple[float, float]) -> float:
    num, den = item
    return num / den


def _result_block(entry: Entry, name: str, known: dict[str, float]) -> dict[str, Any]:
    m = next(x for x in entry.metrics if x.name == name)
    ids = [i for i, v in m.items.items() if v[1] > 0]
    raw = [_value(m.items[i]) for i in ids]
    got = corrected_mean(raw, [known.get(i) for i in ids], [True] * len(ids),
                         None if m.clusters is None else [m.clusters[i] for i in ids],
                         bounds=(m.bounds[0] if m.bounds[0] is not None else min(raw),
                                 m.bounds[1] if m.bounds[1] is not None else max(raw)),
                         unit="sample" if m.clusters is None else "unit")
    pairs = [(known[i], v) for i, v in zip(ids, raw, strict=True) if i in known]
    binary = all(k in (0.0, 1.0) and v in (0.0, 1.0) for k, v in pairs)
    agreement = (A.agreement_block(["pass" if k else "fail" for k, _ in pairs], ["pass" if v else "fail" for _, v in pairs],
                                   name=f"{entry.label}/{name}") if pairs and binary else None)
    return {
        "value": sum(raw) / len(raw) * m.scale if raw else None,
        "corrected": got.estimate * m.scale,
        "ci95": [got.low * m.scale, got.high * m.scale] if got.low is not None else None,
        "ci_method": got.method,
        **({"ci_reason": got.reason} if got.reason else {}),
        "lam": got.lam, "known": got.known, "judge_only": got.judge_only,
        "agreement": agreement,
        **({} if agreement is not None else {"agreement_reason": "no sample has a known value" if not pairs else
                                              "the values are not all 0/1 (pass/fail): no kappa"}),
    }


def _pair_block(a: Entry, b: Entry, name: str, known_a: dict[str, float], known_b: dict[str, float],
                level: float) -> dict[str, Any]:
    ma = next(x for x in a.metrics if x.name == name)
    mb = next(x for x in b.metrics if x.name == name)
    ids = [i for i in ma.items if i in mb.items and ma.items[i][1] > 0 and mb.items[i][1] > 0]
    raw = [_value(ma.items[i]) - _value(mb.items[i]) for i in ids]
    known = [known_a[i] - known_b[i] if i in known_a and i in known_b else None for i in ids]
    low, high = ma.bounds
    span = (high - low) if low is not None and high is not None else max(map(abs, raw), default=1.0) * 2
    got = corrected_mean(raw, known, [True] * len(ids), None if ma.clusters is None else [ma.clusters[i] for i in ids],
                         bounds=(-span, span), level=level, unit="sample" if ma.clusters is None else "unit")
    scale = ma.scale
    if got.low is None:
        verdict, why = "cannot_separate_at_this_n", f"no interval: {got.reason}"
    elif got.low > 0 or got.high < 0:
        verdict, why = "differs", f"the corrected difference's {100 * level:.4g} % interval excludes 0"
    else:
        verdict, why = "not_separated", f"the corrected difference's {100 * level:.4g} % interval includes 0"
    return {"a": a.label, "b": b.label, "difference": sum(raw) / len(raw) * scale if raw else None,
            "corrected_difference": got.estimate * scale,
            "ci95": [got.low * scale, got.high * scale] if got.low is not None else None, "ci_level": level,
            "verdict": verdict, "verdict_reason": why, "known_pairs": got.known, "n_items": len(ids)}


def judge_block(entries: Sequence[Entry], doc: dict[str, Any], path: Path, *, alpha: float) -> dict[str, Any]:
    """The ``judge`` block of a comparison: per compared metric, each result's corrected value and its grader's
    agreement, and each pair's comparison on corrected values (module docstring)."""
    calibration, lines = load(path)
    known = _known(entries, calibration, lines, path)
    names = [m["name"] for m in doc["comparisons"][0]["metrics"]] if doc["comparisons"] else []
    pairs = list(itertools.combinations(entries, 2))
    level = 1.0 - (alpha / len(pairs) if len(entries) >= 3 else alpha)
    metrics = {}
    for name in names:
        if not any(key[1] == name for key in known):
            continue
        metrics[name] = {
            "results": {e.label: _result_block(e, name, known.get((e.label, name), {})) for e in entries},
            "pairs": [_pair_block(a, b, name, known.get((a.label, name), {}), known.get((b.label, name), {}), level)
                      for a, b in pairs],
        }
    return {"calibration": path.name, "method": METHOD, "metrics": metrics}


def print_judge(block: dict[str, Any]) -> None:
    """The corrected values, the graders' agreement and the pairs on corrected values (every number of the block)."""
    from benchscore.common.terminal import fmt, print_line, print_table
    from benchscore.stats.compare import VERDICT_WORDS

    def ci(v: dict[str, Any]) -> str:
        return f"[{fmt(v['ci95'][0])}, {fmt(v['ci95'][1])}]" if v.get("ci95") else f"none ({v.get('ci_reason')})"

    print_line(f"judge calibration {block['calibration']}: values corrected for the grader's errors (beside the "
               "graders' own)")
    for name, m in block["metrics"].items():
        print_table(f"{name}: corrected for the grader's errors", [
            "result", "value", "corrected", "ci95", "ci_method", "known", "judge_only", "kappa", "kappa ci95",
            "grader"], [
            (label, fmt(r["value"]), fmt(r["corrected"]), ci(r), r["ci_method"], r["known"], r["judge_only"],
             *((fmt(r["agreement"]["kappa"]["value"]), ci(r["agreement"]["kappa"]),
                "measured" if r["agreement"]["measured"] else f"not measured: {r['agreement']['measured_reason']}")
               if r["agreement"] else ("-", "-", r.get("agreement_reason"))))
            for label, r in m["results"].items()])
        print_table(f"{name}: pairs on corrected values", [
            "a", "b", "verdict", "difference", "corrected_difference", "ci", "ci_level", "known_pairs"], [
            (p["a"], p["b"], VERDICT_WORDS[p["verdict"]], fmt(p["difference"]), fmt(p["corrected_difference"]),
             ci(p) if p["ci95"] else "-", fmt(p["ci_level"]), p["known_pairs"]) for p in m["pairs"]])
        for p in m["pairs"]:
            print_line(f"  {p['a']} vs {p['b']}: {VERDICT_WORDS[p['verdict']]} ({p['verdict_reason']})")


__all__ = ["METHOD", "CalibrationEntry", "judge_block", "load", "print_judge"]
