"""Question construction of testsetV6: multiple choice (seed section 6) and fill in blank (section 7).

Everything here is deterministic: every random draw uses ``random.Random`` seeded with the build
seed and the question's base id, so the same tables and seed give the same questions in any order.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from benchscore.common.errors import BadInput

from . import conventions as c
from .formats import ConditionRow, ConditionTable
from .formulas import best_indices, effective_score, relative_scores, spaced_positions

MC_TYPES = (
    "single_varying",
    "all_varying",
    "single_varying_reference",
    "all_varying_reference",
    "single_varying_reference_control",
    "all_varying_reference_control",
)
FIB_TYPES = ("all_blank", "all_blank_reference")

SKIP_NO_VARYING = "no varying condition key"
SKIP_FEW_OPTIONS = "fewer than 2 options"
SKIP_ZERO_BEST = "best effective score is 0"
SKIP_FEW_REFERENCES = "fewer than 2 reference candidates in the low-to-medium range"


@dataclass(frozen=True)
class Row:
    """A usable row: its values of the varying keys (in varying-key order) and its effective score."""

    values: tuple[str, ...]
    source: ConditionRow
    effective: float


@dataclass
class Prepared:
    """A table ready for question building."""

    table: ConditionTable
    varying: list[str]
    constant: dict[str, str]
    rows: list[Row]
    dropped_rows: int


def _measured(table: ConditionTable, row: ConditionRow) -> bool:
    """A row has a measured outcome: a yield in a yield table; an ee or a dr in a table without yields."""
    if table.yield_measure is not None:
        return row.yield_ is not None
    return row.ee is not None or row.dr is not None


def prepare(table: ConditionTable) -> Prepared:
    """Usable rows (rows without a measured outcome are dropped, see :func:`_measured`), varying keys,
    constant conditions."""
    usable = [r for r in table.rows if _measured(table, r)]
    varying = [k for k in table.condition_keys if len({r.conditions[k] for r in usable}) > 1]
    constant = dict(table.constant_conditions)
    for k in table.condition_keys:
        if k not in varying and usable:
            constant[k] = usable[0].conditions[k]
    rows = [
        Row(tuple(r.conditions[k] for k in varying), r, effective_score(r.yield_, r.ee, r.dr)) for r in usable
    ]
    rows.sort(key=lambda r: r.values)
    return Prepared(table, varying, constant, rows, len(table.rows) - len(usable))


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(":".join([str(seed), *parts]))


@dataclass
class Build:
    """Samples per question type, skipped questions per type and reason, dropped rows."""

    samples: dict[str, list[dict[str, Any]]]
    skipped: dict[str, Counter] = field(default_factory=dict)
    dropped_rows: int = 0

    def skip(self, types: tuple[str, ...], reason: str) -> None:
        for t in types:
            self.skipped.setdefault(t, Counter())[reason] += 1


def _source(t: ConditionTable) -> dict[str, Any]:
    return {"dataset": t.source.dataset, "table_id": t.table_id, "file": t.source.file, "doi": t.source.doi}


def _outcome(p: Prepared, row: Row, indices: dict[str, int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"conditions": dict(zip(p.varying, row.values, strict=True))}
    if indices is not None:
        out["indices"] = indices
    out["yield"] = row.source.yield_
    out["ee"] = row.source.ee
    out["dr"] = row.source.dr
    return out


def select_references(pool: list[Row], local_best: float) -> list[Row]:
    """Reference rows (seed section 9): from ``pool``, only rows whose effective score is below
    ``REFERENCE_MAX_RELATIVE x local_best`` (low-to-medium: never the best, never above it);
    ``REFERENCE_MAX`` of them (or all, if fewer) evenly spaced over that range sorted by score.
    Fewer than ``REFERENCE_MIN`` candidates gives ``[]``.
    """
    limit = c.REFERENCE_MAX_RELATIVE * local_best
    eligible = sorted((r for r in pool if r.effective < limit), key=lambda r: (r.effective, r.values))
    if len(eligible) < c.REFERENCE_MIN:
        return []
    return [eligible[i] for i in spaced_positions(len(eligible), c.REFERENCE_MAX)]


def choose_fixed_group(groups: dict[tuple[str, ...], list[Row]], rng: random.Random) -> tuple[tuple[str, ...], int]:
    """Seed section 6.4 step 2: the real fixed group covering the most target values.

    Returns (group key, number of tied groups). Among tied groups those whose best effective
    score is positive come first (an all-zero group would be skipped); the rest of the tie is
    broken by ``rng`` over the sorted keys.
    """
    most = max(len(rows) for rows in groups.values())
    tied = sorted(k for k, rows in groups.items() if len(rows) == most)
    scoring = [k for k in tied if max(r.effective for r in groups[k]) > 0]
    tied = scoring or tied
    return (tied[0] if len(tied) == 1 else rng.choice(tied)), len(tied)


def sample_options(rows: list[Row], max_options: int, rng: random.Random) -> list[Row]:
    """At most ``max_options`` rows, always keeping one best row (ties: drawn by ``rng``)."""
    if len(rows) <= max_options:
        return list(rows)
    best = max(r.effective for r in rows)
    tops = [r for r in rows if r.effective >= best * (1 - c.TIE_TOLERANCE)]
    keep = rng.choice(tops)
    rest = [r for r in rows if r is not keep]
    return [keep, *rng.sample(rest, max_options - 1)]


def _mc_question(
    p: Prepared, target: str | None, seed: int, max_options: int
) -> tuple[dict[str, Any], list[Row], float] | str:
    """The base question (before references) or the reason it is skipped."""
    t = p.table
    base = f"{t.table_id}:{target}" if target else t.table_id
    rng = _rng(seed, base)
    selection: dict[str, Any]
    fixed: dict[str, str] | None = None
    if target is not None:
        pos = p.varying.index(target)
        others = [i for i in range(len(p.varying)) if i != pos]
        groups: dict[tuple[str, ...], list[Row]] = {}
        for r in p.rows:
            groups.setdefault(tuple(r.values[i] for i in others), []).append(r)
        chosen, n_tied = choose_fixed_group(groups, rng)
        candidates = groups[chosen]
        fixed = {p.varying[i]: v for i, v in zip(others, chosen, strict=True)}
        selection = {
            "num_fixed_groups": len(groups),
            "num_tied_groups": n_tied,
            "covered_values": len(candidates),
            "option_source": "target values really run with fixed_conditions",
        }
    else:
        candidates = p.rows
        selection = {"num_rows": len(candidates), "option_source": "real rows of the table"}
    options = sample_options(candidates, max_options, rng)
    selection["num_candidates"] = len(candidates)
    selection["sampled"] = len(options) < len(candidates)
    if len(options) < 2:
        return SKIP_FEW_OPTIONS
    best = max(r.effective for r in options)
    if not best > 0:
        return SKIP_ZERO_BEST
    rng.shuffle(options)
    rel = relative_scores([r.effective for r in options])
    if target is not None:
        pos = p.varying.index(target)
        shown = [{target: r.values[pos]} for r in options]
    else:
        shown = [dict(zip(p.varying, r.values, strict=True)) for r in options]
    yields = [r.source.yield_ for r in options]
    question = {
        "id": base,
        "question_type": None,
        "input": {
            "reaction": dict(t.reaction),
            "constant_conditions": p.constant,
            "varying_keys": list(p.varying),
            "target_key": target,
            "fixed_conditions": fixed,
            "yield_measure": t.yield_measure,
        },
        "options": shown,
        "answer": best_indices(rel),
        "meta": {
            "option_relative_scores": rel,
            "option_effective_scores": [r.effective for r in options],
            "option_yields": yields,
            "best_yield": max(yields) if t.yield_measure is not None else None,  # type: ignore[type-var]
            "best_effective_score": best,
            "yield_measure": t.yield_measure,
            "selection_info": selection,
            "source": _source(t),
        },
    }
    return question, options, best


def _typed(question: dict[str, Any], qtype: str) -> dict[str, Any]:
    out = dict(question)
    out["id"] = f"{qtype}:{question['id']}"
    out["question_type"] = qtype
    out["input"] = dict(question["input"])
    out["meta"] = dict(question["meta"])
    return out


def build_multiple_choice(tables: list[Prepared], *, seed: int, max_options: int) -> Build:
    """The six multiple-choice sub-datasets (seed section 6.1)."""
    b = Build({t: [] for t in MC_TYPES})
    seen_ids: set[str] = set()
    for p in tables:
        t_id = p.table.table_id
        b.dropped_rows += p.dropped_rows
        if not p.varying:
            b.skip(MC_TYPES, SKIP_NO_VARYING)
            continue
        for kind in ("single_varying", "all_varying"):
            targets: list[str | None] = list(p.varying) if kind == "single_varying" else [None]
            ref_t, ctl_t = f"{kind}_reference", f"{kind}_reference_control"
            for target in targets:
                made = _mc_question(p, target, seed, max_options)
                if isinstance(made, str):
                    b.skip((kind, ref_t, ctl_t), made)
                    continue
                question, options, best = made
                sample_id = f"{kind}:{question['id']}"
                if sample_id in seen_ids:
                    raise BadInput(f"two questions get the sample id {sample_id!r} (a table_id or condition key "
                                   "containing ':'); rename a table_id", record=f"table {t_id!r}", field="table_id")
                seen_ids.add(sample_id)
                b.samples[kind].append(_typed(question, kind))
                chosen = {id(r) for r in options}
                pool = [r for r in p.rows if id(r) not in chosen] if target is not None else p.rows
                refs = select_references(pool, best)
                if not refs:
                    b.skip((ref_t, ctl_t), SKIP_FEW_REFERENCES)
                    continue
                ref_q = _typed(question, ref_t)
                ref_q["input"]["reference_conditions"] = [_outcome(p, r) for r in refs]
                ref_q["meta"]["reference_info"] = {
                    "pool": "real rows outside the options" if target is not None else "real rows of the table",
                    "pool_size": len(pool),
                    "max_relative_score": c.REFERENCE_MAX_RELATIVE,
                    "reference_relative_scores": [r.effective / best for r in refs],
                }
                b.samples[ref_t].append(ref_q)
                b.samples[ctl_t].append(_typed(question, ctl_t))
    return b


def _indices(p: Prepared, position: dict[str, dict[str, int]], row: Row) -> dict[str, int]:
    return {k: position[k][v] for k, v in zip(p.varying, row.values, strict=True)}


def _legal(p: Prepared, position: dict[str, dict[str, int]], rows: list[Row], best: float) -> list[dict[str, Any]]:
    """``meta.legal_combinations``: every given real row as candidate indices with its relative score."""
    out = [
        {"indices": _indices(p, position, r), "relative_score": r.effective / best, "effective_score": r.effective,
         "yield": r.source.yield_}
        for r in rows
    ]
    out.sort(key=lambda d: tuple(d["indices"].values()))
    return out


def build_fill_in_blank(tables: list[Prepared], *, seed: int) -> Build:
    """The two fill-in-blank sub-datasets (seed section 7.1)."""
    b = Build({t: [] for t in FIB_TYPES})
    for p in tables:
        b.dropped_rows += p.dropped_rows
        t = p.table
        if not p.varying:
            b.skip(FIB_TYPES, SKIP_NO_VARYING)
            continue
        if len(p.rows) < 2:
            b.skip(FIB_TYPES, SKIP_FEW_OPTIONS)
            continue
        best = max(r.effective for r in p.rows)
        if not best > 0:
            b.skip(FIB_TYPES, SKIP_ZERO_BEST)
            continue
        candidates: dict[str, list[str]] = {}
        position: dict[str, dict[str, int]] = {}
        for i, key in enumerate(p.varying):
            values = sorted({r.values[i] for r in p.rows})
            _rng(seed, t.table_id, key).shuffle(values)
            candidates[key] = values
            position[key] = {v: j for j, v in enumerate(values)}

        yields = [r.source.yield_ for r in p.rows]
        sample = {
            "id": t.table_id,
            "question_type": None,
            "query_keys": list(p.varying),
            "input": {
                "reaction": dict(t.reaction),
                "constant_conditions": p.constant,
                "candidate_values": {
                    k: [{"index": j, "value": v} for j, v in enumerate(vals)] for k, vals in candidates.items()
                },
                "yield_measure": t.yield_measure,
            },
            "meta": {
                "legal_combinations": _legal(p, position, p.rows, best),
                "best_effective_score": best,
                "best_yield": max(yields) if t.yield_measure is not None else None,  # type: ignore[type-var]
                "yield_measure": t.yield_measure,
                "source": _source(t),
            },
        }
        b.samples["all_blank"].append(_typed(sample, "all_blank"))
        refs = select_references(p.rows, best)
        if not refs:
            b.skip(("all_blank_reference",), SKIP_FEW_REFERENCES)
            continue
        ref_ids = {id(r) for r in refs}
        ref = _typed(sample, "all_blank_reference")
        ref["input"]["reference_conditions"] = [_outcome(p, r, _indices(p, position, r)) for r in refs]
        ref["meta"]["legal_combinations"] = _legal(p, position, [r for r in p.rows if id(r) not in ref_ids], best)
        ref["meta"]["reference_info"] = {
            "pool": "real rows of the table; reference rows are not legal answers",
            "pool_size": len(p.rows),
            "max_relative_score": c.REFERENCE_MAX_RELATIVE,
            "reference_relative_scores": [r.effective / best for r in refs],
        }
        b.samples["all_blank_reference"].append(ref)
    return b
