"""Judges measured before their verdicts count (issue 36): a judge's agreement with known verdicts, and the
overall Task Success and Reliability corrected for its errors, beside the contract's own numbers.

- :func:`agreement_of` pairs known verdicts with a judge's and gives the agreement block (sensitivity,
  specificity, Cohen's kappa with their 95 % intervals: :mod:`benchscore.stats.agreement`), the share of each
  answer, and whether the judge always gives one answer.
- :func:`report` is ``mira judge-report``: a calibration set and a judge's verdicts on it.
- :func:`score_judge` is the ``judge`` block of ``mira score``: the contract's numbers stay exactly as the
  contract computes them (seed 003, "Deterministic scorer 与 Semantic Judge": the judge answers frozen binary
  questions); beside them, where a calibration set of this run's packets is given, each used repetition of the
  overall pool is rescored with the known verdicts where every judge packet of it has one, and Task Success and
  Reliability are estimated by prediction-powered inference (:func:`benchscore.stats.ppi.corrected_mean`, the
  case as the independent unit).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchscore.common.errors import BadInput
from benchscore.stats import agreement as A
from benchscore.stats.intervals import DEFAULT_SEED
from benchscore.stats.ppi import corrected_mean

from .formats import CalibrationPacket, Case
from .judge import build_packets

NOT_CALIBRATED = "judge not calibrated"
NOT_DECIDED = "not decided by a measured judge"
METHOD = {
    "agreement": "known verdicts (a calibration set) against the judge's: sensitivity = true_pass / known passes, "
    "specificity = true_fail / known fails (each with its exact mid-p 95 % interval, from 3 of its kind), "
    "Cohen's kappa = (p_o - p_e) / (1 - p_e) (its 95 % interval dirichlet_split, from 20 known verdicts); "
    "a judge_failed answer is counted apart, never in the table",
    "measured": "a judge is measured when kappa's 95 % interval lies above 0; otherwise the criteria it decides "
    "are not decided by a measured judge",
    "corrected": "prediction-powered inference (PPI++, Angelopoulos et al. 2023): a repetition whose every judge "
    "packet has a known verdict counts its value with the known verdicts; every other judged repetition counts "
    "lambda x its value with the judge's verdicts plus the mean of (known - lambda x judge) over the known ones; "
    "the case is the unit of the interval; the contract's numbers are unchanged",
}


def agreement_of(known: Sequence[str], given: Sequence[str], *, seed: int = DEFAULT_SEED,
                 name: str = "judge") -> dict[str, Any]:
    """The agreement block of known verdicts (``pass``/``fail``) against the judge's (``pass``/``fail``/
    ``judge_failed``), in the shape of :class:`~benchscore.mira.formats.JudgeAgreement`
    (:func:`benchscore.stats.agreement.agreement_block`)."""
    return A.agreement_block(known, given, seed=seed, name=name)


def report(calibration: list[CalibrationPacket], verdicts: list[Any], model: str, source: str,
           *, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """``mira judge-report`` without provenance: every calibration packet needs exactly one verdict of the judge
    on the same packet (id and sha256); a verdict for a packet outside the set is refused."""
    by_id = {v.packet_id: (i, v) for i, v in enumerate(verdicts)}
    rows = []
    for p in calibration:
        if p.packet_id not in by_id:
            raise BadInput(f"no verdict for calibration packet {p.packet_id!r}; judge the calibration set with "
                           "`benchscore mira judge --calibration`", source=source, field="verdicts")
        i, v = by_id[p.packet_id]
        if v.packet_sha256 != p.sha256:
            raise BadInput(f"the verdict is for another version of packet {p.packet_id!r} (packet_sha256 differs from "
                           "the calibration set's)", source=source, record=f"verdicts[{i}]", field="packet_sha256")
        rows.append({"packet_id": p.packet_id, "case_id": p.case_id, "repetition": p.repetition,
                     "criterion_id": p.criterion_id, "known_verdict": p.known_verdict, "verdict": v.verdict,
                     "agrees": None if v.verdict == "judge_failed" else v.verdict == p.known_verdict,
                     "known_reason": p.reason})
    ids = {p.packet_id for p in calibration}
    extra = next(((i, v) for i, v in enumerate(verdicts) if v.packet_id not in ids), None)
    if extra is not None:
        raise BadInput(f"packet {extra[1].packet_id!r} is not in the calibration set", source=source,
                       record=f"verdicts[{extra[0]}]", field="packet_id")
    return {
        "model": model,
        "agreement": agreement_of([r["known_verdict"] for r in rows], [r["verdict"] for r in rows], seed=seed,
                                  name=model),
        "packets": rows,
        "method": {k: METHOD[k] for k in ("agreement", "measured")},
    }


def status_words(agreement: dict[str, Any] | None, judged: list[str]) -> tuple[str, str]:
    """The judge's status and its words (what the terminal, the output and the page say)."""
    if not judged:
        return "no_judge_criteria", "no criterion is decided by the judge"
    named = ", ".join(judged)
    if agreement is None:
        return "not_calibrated", f"{NOT_CALIBRATED}: {named} counted as the judge answered (no calibration set given)"
    kappa = agreement["kappa"]
    if agreement["measured"]:
        low, high = kappa["ci95"]
        return "measured", (f"judge measured on {agreement['known']} known verdicts: kappa {kappa['value']:.3g} "
                            f"[{low:.3g}, {high:.3g}]")
    return "not_decided_by_a_measured_judge", f"{named}: {NOT_DECIDED} ({agreement['measured_reason']})"


def _calibration_on_run(calibration: list[CalibrationPacket], contract_sha256: str, cases: dict[str, Case],
                        records: list[dict[str, Any]], source: str, lines: list[int]) -> dict[tuple[str, int, str], str]:
    """The known verdict of each (case, repetition, criterion) of this run the calibration set holds; a packet of
    the set that is not a packet of these repetitions (or another version of one) is refused."""
    packets = {p["packet_id"]: p for p in build_packets(contract_sha256, cases, records)}
    known: dict[tuple[str, int, str], str] = {}
    for p, line in zip(calibration, lines, strict=True):
        mine = packets.get(p.packet_id)
        if mine is None:
            raise BadInput(f"packet {p.packet_id!r} is not a packet of these repetitions: a calibration set given to "
                           "mira score holds known verdicts of this run's packets", source=source, record=f"line {line}",
                           field="packet_id")
        if mine["sha256"] != p.sha256:
            raise BadInput(f"packet {p.packet_id!r} differs from this run's packet of that id (question, prompt, "
                           "evidence or contract changed)", source=source, record=f"line {line}", field="sha256")
        known[(p.case_id, p.repetition, p.criterion_id)] = p.known_verdict
    return known


def score_judge(result: dict[str, Any], cases: dict[str, Case], records: list[dict[str, Any]],
                judge_failed: dict[tuple[str, int, str], str], *, contract_sha256: str, model: str | None,
                calibration: tuple[list[CalibrationPacket], list[int], str] | None,
                seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The ``judge`` block of a score (:class:`~benchscore.mira.formats.ScoreJudge`). ``result`` is the score
    as :func:`benchscore.mira.scoring.score` made it (its numbers are read, never changed); ``records`` hold
    the judge's verdicts (merged); ``calibration``: the set, its line numbers and its path."""
    judged = [f"{c.case_id}:{k.id}" for c in cases.values() for k in c.criteria if k.scorer == "judge"]
    if calibration is None or not judged:
        status, words = status_words(None, judged)
        return {"status": status, "words": words, "model": model, "judged_criteria": judged, "agreement": None,
                "corrected": None}
    packets, lines, source = calibration
    known = _calibration_on_run(packets, contract_sha256, cases, records, source, lines)
    verdict_of = {(r["case_id"], r["repetition"]): r.get("judge_verdicts") or {} for r in records}
    keys = list(known)
    given = [verdict_of.get((c, r), {}).get(k) or "judge_failed" for c, r, k in keys]
    agreement = agreement_of([known[key] for key in keys], given, seed=seed, name=model or "judge")
    status, words = status_words(agreement, judged)
    return {"status": status, "words": words, "model": model, "judged_criteria": judged, "agreement": agreement,
            "corrected": corrected_numbers(result, cases, records, judge_failed, known)}


def corrected_numbers(result: dict[str, Any], cases: dict[str, Case], records: list[dict[str, Any]],
                      judge_failed: dict[tuple[str, int, str], str],
                      known: dict[tuple[str, int, str], str]) -> dict[str, dict[str, Any]]:
    """Task Success and Reliability of the overall (automated_scored) pool, corrected (see the module docstring)."""
    from .scoring import score_repetitions

    overall = result["overall"]
    out: dict[str, dict[str, Any]] = {}
    names = {"task_success": 1.0, "reliability": 100.0}
    if overall["task_success"]["value"] is None:
        why = "the contract's number is null (the score is incomplete): nothing to correct"
        for name in names:
            out[name] = {"value": None, "contract_value": None, "ci95": None, "ci_method": None, "ci_reason": why,
                         "lam": None, "known": 0, "judge_only": 0, "fixed": 0}
        return out
    judge_ids = {c.case_id: [k.id for k in c.criteria if k.scorer == "judge"] for c in cases.values()}
    rescored_records = []
    for rec in records:
        ids = judge_ids[rec["case_id"]]
        if ids and all((rec["case_id"], rec["repetition"], k) in known for k in ids):
            copy = dict(rec)
            copy["judge_verdicts"] = {k: known[(rec["case_id"], rec["repetition"], k)] for k in ids}
            rescored_records.append(copy)
    rescored = {(r["case_id"], r["repetition"]): r for r in score_repetitions(cases, rescored_records, judge_failed)}
    by_id = {r["id"]: r for r in result["repetitions"]}
    items = [by_id[rid] for c in result["cases"] if c["scoring_class"] == "automated_scored"
             for rid in c["repetitions_used"]]
    clusters = [r["case_id"] for r in items]
    judged = [bool(judge_ids[r["case_id"]]) for r in items]
    for name, scale in names.items():
        def value(r: dict[str, Any], name: str = name) -> float:
            return r["official_task_success"] if name == "task_success" else float(r["status"] == "pass")

        raw = [value(r) for r in items]
        known_values = [value(rescored[(r["case_id"], r["repetition"])]) if (r["case_id"], r["repetition"]) in rescored
                        else (value(r) if not j else None) for r, j in zip(items, judged, strict=True)]
        got = corrected_mean(raw, known_values, judged, clusters, unit="case")
        out[name] = {
            "value": got.estimate * scale,
            "contract_value": overall[name]["value"],
            "ci95": [got.low * scale, got.high * scale] if got.low is not None else None,
            "ci_method": got.method,
            **({"ci_reason": got.reason} if got.reason else {}),
            "lam": got.lam,
            "known": got.known,
            "judge_only": got.judge_only,
            "fixed": got.fixed,
        }
    return out


__all__ = ["METHOD", "NOT_CALIBRATED", "NOT_DECIDED", "agreement_of", "corrected_numbers", "report", "score_judge",
           "status_words"]
