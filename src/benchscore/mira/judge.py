"""Judge isolation: packets, running the judge, and merging verdicts back (seed "Deterministic scorer 与 Semantic Judge").

A packet holds one (repetition, judge criterion): the frozen binary question, the user-visible
prompt and that repetition's own evidence, nothing else (no other repetition, no private
fixtures, no hidden evaluator details, no raw trajectory). Each packet is judged in a fresh
conversation. Where the endpoint enforces a schema (``benchscore.common.llm.LLMClient.constraint_for``)
the judge asks for :data:`VERDICT_FORMAT`, ``{"verdict": "pass"}`` or ``{"verdict": "fail"}``, under
that constraint; otherwise (``none``) for exactly one word, with at most :data:`MAX_TOKENS` tokens.
The answer is a verdict only under :data:`ANSWER_RULE`, anything else is ``judge_failed``: a
constrained answer outside the schema is never repaired.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from benchscore.common.errors import BadInput
from benchscore.common.llm import AnswerFormat
from benchscore.common.provenance import sha256_bytes

from .formats import Case, JudgePacket, JudgeVerdict

SYSTEM_PROMPT = (
    "You are the Semantic Judge of the Mira benchmark. You receive one frozen binary question about one "
    "repetition, the task's user-visible prompt and that repetition's own evidence. Judge only from this "
    "packet. Reply with exactly one word, pass or fail, and nothing else."
)
SYSTEM_PROMPT_STRUCTURED = (
    "You are the Semantic Judge of the Mira benchmark. You receive one frozen binary question about one "
    "repetition, the task's user-visible prompt and that repetition's own evidence. Judge only from this "
    'packet. Reply with the JSON object {"verdict": "pass"} or {"verdict": "fail"} and nothing else.'
)
#: The completion cap of a free-text judge call: room for one word (and a period), not for an essay.
MAX_TOKENS = 4
#: The judge's answer where the endpoint enforces a schema (the seed's binary rule: pass | fail).
VERDICT_FORMAT = AnswerFormat("mira_verdict", {"verdict": ["pass", "fail"]})
#: When an answer is a verdict (the seed's binary rule: v0.1 only allows pass | fail).
ANSWER_RULE = ("under a constraint (json_schema, json_object_schema, grammar): exactly one JSON object "
               '{"verdict": "pass"} or {"verdict": "fail"}, never repaired; free text (constraint none): exactly '
               "'pass' or 'fail' (lowercase) once surrounding whitespace and one trailing period are stripped; any "
               "other answer, and a failed call, is judge_failed")


def max_tokens(constraint: str) -> int:
    """The completion cap of a judge call under ``constraint``."""
    return MAX_TOKENS if constraint == "none" else VERDICT_FORMAT.max_tokens


def packet_id(case_id: str, repetition: int, criterion_id: str) -> str:
    return f"{case_id}.r{repetition}.{criterion_id}"


def packet_body(contract_sha256: str, case: Case, record: dict[str, Any], criterion_id: str) -> dict[str, Any]:
    """The packet without its sha256: built from the allowlisted fields only."""
    crit = next(c for c in case.criteria if c.id == criterion_id)
    return {
        "packet_id": packet_id(case.case_id, record["repetition"], criterion_id),
        "case_id": case.case_id,
        "repetition": record["repetition"],
        "criterion_id": criterion_id,
        "question": crit.question,
        "prompt": case.prompt,
        "evidence": dict(record.get("evidence") or {}),
        "contract_sha256": contract_sha256,
    }


def packet_sha256(body: dict[str, Any]) -> str:
    """sha256 of the packet's canonical JSON (sorted keys, no whitespace), ``sha256`` field excluded."""
    body = {k: v for k, v in body.items() if k != "sha256"}
    return sha256_bytes(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))


def build_packets(contract_sha256: str, cases: dict[str, Case], records: list[dict[str, Any]], *,
                  source: str | None = None, lines: list[int] | None = None) -> list[dict[str, Any]]:
    """One packet per (scorable repetition, judge criterion); ``invalid`` repetitions get none.

    Two (case, repetition, criterion) triples that spell the same ``packet_id`` (ids may contain
    dots: case ``A`` rep 1 criterion ``r2.x`` and case ``A.r1`` rep 2 criterion ``x``) are refused,
    since one packet would replace the other; ``source``/``lines`` name the record in the message.
    """
    out = []
    owner: dict[str, tuple[str, int, str]] = {}
    for i, rec in enumerate(records):
        if rec["execution_mode"] == "invalid":
            continue
        case = cases[rec["case_id"]]
        for crit in case.criteria:
            if crit.scorer != "judge":
                continue
            body = packet_body(contract_sha256, case, rec, crit.id)
            pid = body["packet_id"]
            if pid in owner:
                first = owner[pid]
                raise BadInput(
                    f"packet id {pid!r} of (case {case.case_id!r}, repetition {rec['repetition']}, criterion "
                    f"{crit.id!r}) is also that of (case {first[0]!r}, repetition {first[1]}, criterion {first[2]!r}); "
                    "rename a case or criterion id",
                    source=source, record=f"line {lines[i]}" if lines else f"record {i + 1}", field="case_id",
                )
            owner[pid] = (case.case_id, rec["repetition"], crit.id)
            body["sha256"] = packet_sha256(body)
            out.append(body)
    return out


def user_message(packet: JudgePacket, constraint: str = "none") -> str:
    evidence = "\n\n".join(f"### {name}\n{text}" for name, text in sorted(packet.evidence.items())) or "(no evidence)"
    ask = ("Reply with exactly one word, `pass` or `fail`, and nothing else." if constraint == "none" else
           'Reply with {"verdict": "pass"} or {"verdict": "fail"} and nothing else.')
    return (
        f"## Task prompt (user-visible)\n{packet.prompt}\n\n"
        f"## Evidence of this repetition only\n{evidence}\n\n"
        f"## Frozen question\n{packet.question}\n\n"
        f"{ask}"
    )


def messages_for(packet: JudgePacket, constraint: str = "none") -> list[dict[str, str]]:
    """The fresh conversation that judges ``packet`` under ``constraint``."""
    system = SYSTEM_PROMPT if constraint == "none" else SYSTEM_PROMPT_STRUCTURED
    return [{"role": "system", "content": system}, {"role": "user", "content": user_message(packet, constraint)}]


def parse_answer(text: str) -> str | None:
    """The verdict of an answer under :data:`ANSWER_RULE`: ``pass`` or ``fail``, else None.

    ``" pass\n"`` and ``"fail."`` are verdicts; ``"Pass"``, ``"pass.."``, ``"pass, mostly"`` are not.
    """
    word = text.strip().removesuffix(".")
    return word if word in ("pass", "fail") else None


def read_verdict(text: str, constraint: str) -> str | None:
    """The verdict of an answer produced under ``constraint`` (:data:`ANSWER_RULE`), else None."""
    if constraint == "none":
        return parse_answer(text)
    value = VERDICT_FORMAT.read(text)
    return value["verdict"] if value is not None else None


def judge_packet(packet: JudgePacket, chat: Callable[[list[dict[str, str]]], tuple[str | None, dict[str, Any] | None, str | None]],
                 constraint: str = "none") -> dict[str, Any]:
    """Judge one packet in a fresh conversation; ``chat(messages) -> (text, call_record, error)`` asks under
    ``constraint`` (the mode the endpoint enforces, ``none`` for free text)."""
    text, call, error = chat(messages_for(packet, constraint))
    verdict = read_verdict(text, constraint) if text is not None else None
    reason = None
    if text is None:
        reason = f"judge call failed: {error}"
    elif verdict is None and constraint == "none":
        reason = "answer is not exactly 'pass' or 'fail' (after stripping whitespace and one trailing period)"
    elif verdict is None:
        reason = (f'answer is not the JSON object {{"verdict": "pass"|"fail"}} asked for under the {constraint} '
                  "constraint (never repaired)")
    return JudgeVerdict(
        packet_id=packet.packet_id,
        packet_sha256=packet.sha256,
        case_id=packet.case_id,
        repetition=packet.repetition,
        criterion_id=packet.criterion_id,
        verdict=verdict or "judge_failed",
        answer=text,
        reason=reason,
        call=call,
    ).model_dump(mode="json")


def merge_verdicts(
    contract_sha256: str,
    cases: dict[str, Case],
    records: list[dict[str, Any]],
    verdicts: list[JudgeVerdict],
    source: str,
) -> dict[tuple[str, int, str], str]:
    """Put judge verdicts into the records' ``judge_verdicts``; return the ``judge_failed`` reasons.

    Refused: a verdict whose ``packet_id`` is not the id of its (case, repetition, criterion) packet
    (a second verdict for one packet under another id), a verdict for an unknown repetition, for a
    deterministic or unknown criterion, for a packet whose sha256 no longer matches (the evidence or
    question changed), or contradicting a verdict already in the record.
    """
    by_key = {(r["case_id"], r["repetition"]): r for r in records}
    failed: dict[tuple[str, int, str], str] = {}
    seen: dict[str, int] = {}
    for i, v in enumerate(verdicts):
        where = f"verdicts[{i}]"
        if v.packet_id in seen:
            raise BadInput(f"packet {v.packet_id!r} has a second verdict (first at verdicts[{seen[v.packet_id]}])",
                           source=source, record=where, field="packet_id")
        seen[v.packet_id] = i
        expected_id = packet_id(v.case_id, v.repetition, v.criterion_id)
        if v.packet_id != expected_id:
            raise BadInput(f"packet_id {v.packet_id!r} is not the packet of (case {v.case_id!r}, repetition "
                           f"{v.repetition}, criterion {v.criterion_id!r}), which is {expected_id!r}",
                           source=source, record=where, field="packet_id")
        rec = by_key.get((v.case_id, v.repetition))
        if rec is None:
            raise BadInput(f"no repetition {v.repetition} of case {v.case_id!r} in the repetitions file",
                           source=source, record=where, field="repetition")
        case = cases[v.case_id]
        owner = {c.id: c.scorer for c in case.criteria}.get(v.criterion_id)
        if owner != "judge":
            msg = (f"criterion {v.criterion_id!r} is scored by the deterministic scorer; the judge may not answer it"
                   if owner == "deterministic" else f"unknown criterion {v.criterion_id!r} for case {v.case_id!r}")
            raise BadInput(msg, source=source, record=where, field="criterion_id")
        expected = packet_sha256(packet_body(contract_sha256, case, rec, v.criterion_id))
        if v.packet_sha256 != expected:
            raise BadInput("packet_sha256 does not match the packet built from this contract and repetition "
                           "(question, prompt or evidence changed)", source=source, record=where, field="packet_sha256")
        current = (rec.get("judge_verdicts") or {}).get(v.criterion_id)
        if v.verdict == "judge_failed":
            if current is None:
                failed[(v.case_id, v.repetition, v.criterion_id)] = f"judge_failed ({v.reason or 'no reason'})"
            continue
        if current is not None and current != v.verdict:
            raise BadInput(f"verdict {v.verdict!r} contradicts {current!r} already in the repetition record",
                           source=source, record=where, field="verdict")
        rec.setdefault("judge_verdicts", {})[v.criterion_id] = v.verdict
    return failed
