"""S10, the six swarm characteristics F01-F06 (seed section 10), computed from a run's ledger.

The S10 run: five agents that all have the capabilities ``analysis`` and ``review``; fourteen tasks
whose environment seeds an initial pheromone at three levels (high 2.0, medium 1.0, low 0.0);
one task fails on every attempt. Each agent's output is a list of ``finding: X`` lines. The
scalability feature (F05) reads the S09 scaled-claim runs (3/5/7 agents, 2n tasks).

Quantities the seed leaves loose, defined once here:

- **cluster**: the tasks of one capability. ``cluster_score(c) = sum of final P_t over the done
  tasks of c``. ``dominant_cluster = argmax(cluster_score)`` holds when the cluster of the run's
  accepted task (seed section 5, ``converge``) is the argmax (ties: none, a tie fails).
- **local interaction**: a ``claim`` event whose most recent earlier ``pheromone`` event on a
  task of the same capability was written by a *different* agent (an agent acting on a trace
  another agent left). ``local_interaction_count`` counts them over the ledger.
- **candidate group**: the done outputs of one cluster. With ``U`` the set of distinct findings
  over every done task, ``local_signal_i = |findings_i| / |U|`` for each done task and
  ``global_score(g) = |union of findings in g| / |U|``; the accepted candidate group is the
  cluster of the accepted task.
- **control keys**: payload keys, capability names or the last segment of the run's Redis keys matching
  ``controller|leader|coordinator|master|supervisor|orchestrat``; **direct message keys**: payload
  keys (or Redis key segments) matching ``message|inbox|mailbox|reply_to|to_agent|recipient``; **preseeded global plan**:
  a payload key matching ``plan|assign|owner|schedule|sequence|step_order``.
- **decision records**: tasks with at least one ``claim`` event (each claim is an agent's own
  argmax decision, recorded with the P_t it saw); ``decision_records = task_count``.
- **final_pheromone_high / medium**: mean final P_t of the tasks seeded at the highest / second
  highest initial level.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import Field

from benchscore.common.models import Format
from benchscore.swarm import Agent, Outcome, TaskSpec, audit_pool, open_pool, run_swarm

from .evidence import Check, ScenarioResult, all_passed
from .s09 import S09_SIZES, ClaimRunEvidence, run_claim_scale

CONTROL_KEY = re.compile(r"controller|leader|coordinator|master|supervisor|orchestrat", re.IGNORECASE)
DIRECT_MESSAGE_KEY = re.compile(r"message|inbox|mailbox|reply_to|to_agent|recipient", re.IGNORECASE)
GLOBAL_PLAN_KEY = re.compile(r"plan|assign|owner|schedule|sequence|step_order", re.IGNORECASE)
FINDING = re.compile(r"^\s*finding:\s*(.+?)\s*$", re.MULTILINE)
S10_CAPABILITIES = ("analysis", "review")
S10_AGENTS = 5


class LedgerRow(Format):
    seq: int
    task_id: int
    kind: str
    agent: str | None
    attempt: int
    value: float | None
    delta: float | None
    note: str | None


class TaskRow(Format):
    task_id: int
    capability: str
    payload: dict[str, Any]
    status: str
    initial_pheromone: float
    final_pheromone: float
    score: float | None
    output: str | None


class S10Evidence(Format):
    """Everything S10 reads: one run's ledger and tasks, its convergence, and the scale runs."""

    run_id: str
    events: tuple[LedgerRow, ...]
    tasks: tuple[TaskRow, ...]
    accepted_task_id: int | None
    duplicate_claims: list[int]
    participating_agents: list[str]
    scale_runs: tuple[ClaimRunEvidence, ...] = Field(default=())
    audit_verdict: str = ""
    store_keys: tuple[str, ...] = Field(default=(), description="the run's Redis mirror keys, when one is attached")


# -- the loose quantities ------------------------------------------------------------------------


def findings(text: str | None) -> set[str]:
    """The ``finding: X`` lines of an output, as a set of X."""
    return set(FINDING.findall(text or ""))


def cluster_scores(tasks: Sequence[TaskRow]) -> dict[str, float]:
    """``cluster_score(c) = sum of final P_t over the done tasks of capability c``."""
    out: dict[str, float] = {}
    for t in tasks:
        out.setdefault(t.capability, 0.0)
        if t.status == "done":
            out[t.capability] += t.final_pheromone
    return out


def local_interaction_count(events: Sequence[LedgerRow], capability_of: dict[int, str]) -> int:
    """Claims whose latest earlier pheromone event in the same capability was by another agent."""
    last_writer: dict[str, str | None] = {}
    count = 0
    for e in sorted(events, key=lambda e: e.seq):
        cap = capability_of.get(e.task_id)
        if cap is None:
            continue
        if e.kind == "claim":
            w = last_writer.get(cap)
            if w is not None and w != e.agent:
                count += 1
        elif e.kind == "pheromone" and e.agent is not None:
            last_writer[cap] = e.agent
    return count


def group_scores(tasks: Sequence[TaskRow]) -> tuple[dict[str, float], dict[int, float]]:
    """(``global_score`` per candidate group, ``local_signal`` per done task) as defined above."""
    done = [t for t in tasks if t.status == "done"]
    universe = set().union(*(findings(t.output) for t in done)) if done else set()
    if not universe:
        return {}, {}
    local = {t.task_id: len(findings(t.output)) / len(universe) for t in done}
    groups: dict[str, set[str]] = {}
    for t in done:
        groups.setdefault(t.capability, set()).update(findings(t.output))
    return {g: len(f) / len(universe) for g, f in groups.items()}, local


def _keys(tasks: Sequence[TaskRow], pattern: re.Pattern[str], *, capabilities: bool = False,
          store_keys: Sequence[str] = ()) -> list[str]:
    hits = {k for t in tasks for k in t.payload if pattern.search(k)}
    hits |= {k for k in store_keys if pattern.search(k.rsplit(":", 1)[-1])}
    if capabilities:
        hits |= {t.capability for t in tasks if pattern.search(t.capability)}
    return sorted(hits)


def _argmax_unique(scores: dict[str, float]) -> str | None:
    if not scores:
        return None
    best = max(scores.values())
    top = [k for k, v in scores.items() if v == best]
    return top[0] if len(top) == 1 else None


# -- the six features ----------------------------------------------------------------------------


def evaluate_s10(ev: S10Evidence) -> ScenarioResult:
    """``S10_PASS = F01 decentralization and F02 self_organization and F03 emergence and
    F04 robustness and F05 scalability and F06 implicit_collaboration`` (seed section 10)."""
    tasks = list(ev.tasks)
    by_id = {t.task_id: t for t in tasks}
    capability_of = {t.task_id: t.capability for t in tasks}
    claims = [e for e in sorted(ev.events, key=lambda e: e.seq) if e.kind == "claim"]
    accepted = by_id.get(ev.accepted_task_id) if ev.accepted_task_id is not None else None
    checks: list[Check] = []

    # F01 decentralization
    control = _keys(tasks, CONTROL_KEY, capabilities=True, store_keys=ev.store_keys)
    decided = {e.task_id for e in claims}
    f01 = {"participating_agents": len(ev.participating_agents) >= 4, "duplicate_claims": not ev.duplicate_claims,
           "control_keys": not control, "decision_records": len(decided) == len(tasks) and bool(tasks)}
    checks.append(Check(name="F01_decentralization", passed=all(f01.values()), condition=(
        "participating_agents >= 4, no duplicate claim, no control key, decision_records = task_count"), evidence={
        "conditions": f01, "participating_agents": ev.participating_agents, "duplicate_claims": ev.duplicate_claims,
        "control_keys": control, "decision_records": len(decided), "task_count": len(tasks)}))

    # F02 self-organization
    plan = _keys(tasks, GLOBAL_PLAN_KEY)
    interactions = local_interaction_count(ev.events, capability_of)
    cscores = cluster_scores(tasks)
    dominant = _argmax_unique(cscores)
    f02 = {"no_preseeded_global_plan": not plan, "local_interaction_count": interactions >= 5,
           "dominant_cluster": accepted is not None and dominant == accepted.capability}
    checks.append(Check(name="F02_self_organization", passed=all(f02.values()), condition=(
        "no preseeded global plan, local_interaction_count >= 5, the accepted cluster is the unique argmax "
        "cluster_score"), evidence={
        "conditions": f02, "global_plan_keys": plan, "local_interaction_count": interactions,
        "cluster_score": cscores, "dominant_cluster": dominant,
        "accepted_cluster": accepted.capability if accepted else None}))

    # F03 emergence
    gscores, local = group_scores(tasks)
    accepted_group = accepted.capability if accepted else None
    best_group = _argmax_unique(gscores)
    max_local = max(local.values()) if local else 0.0
    f03 = {"global_exceeds_local": accepted_group is not None and gscores.get(accepted_group, 0.0) > max_local,
           "accepted_is_argmax_global": accepted_group is not None and accepted_group == best_group}
    checks.append(Check(name="F03_emergence", passed=all(f03.values()), condition=(
        "global_score(accepted group) > max local_signal, and the accepted group is the unique argmax "
        "global_score"), evidence={
        "conditions": f03, "global_score": gscores, "max_local_signal": max_local,
        "accepted_candidate_group": accepted_group}))

    # F04 robustness
    failed = sum(t.status == "failed" for t in tasks)
    completed = sum(t.status == "done" for t in tasks)
    negative = [e.seq for e in ev.events if e.kind == "pheromone" and e.delta is not None and e.delta < 0]
    f04 = {"failed_tasks": failed >= 1, "completed_tasks": completed >= 2, "negative_observation_exists": bool(negative),
           "run_status_converged": accepted is not None}
    checks.append(Check(name="F04_robustness", passed=all(f04.values()), condition=(
        "failed_tasks >= 1, completed_tasks >= 2, a negative pheromone observation, the run converged"), evidence={
        "conditions": f04, "failed_tasks": failed, "completed_tasks": completed,
        "negative_observations": len(negative)}))

    # F05 scalability
    by_n = {r.n: r for r in ev.scale_runs}
    per = {str(n): (r := by_n.get(n)) is not None and r.completed_tasks == 2 * n and r.failed_tasks == 0
           and not r.duplicate_claims and r.participating_agents == n for n in S09_SIZES}
    checks.append(Check(name="F05_scalability", passed=all(per.values()), condition=(
        f"for n in {S09_SIZES}: completed_tasks = 2n, failed_tasks = 0, no duplicate claim, "
        "participating_agents = n"), evidence={
        "per_n": per, "runs": [{"n": r.n, "run_id": r.run_id, "completed_tasks": r.completed_tasks,
                                "failed_tasks": r.failed_tasks, "duplicate_claims": r.duplicate_claims,
                                "participating_agents": r.participating_agents} for r in ev.scale_runs]}))

    # F06 implicit collaboration
    messages = _keys(tasks, DIRECT_MESSAGE_KEY, store_keys=ev.store_keys)
    trail = sum(e.kind == "pheromone" for e in ev.events)
    levels = sorted({t.initial_pheromone for t in tasks}, reverse=True)
    first = by_id.get(claims[0].task_id) if claims else None
    high = [t.final_pheromone for t in tasks if levels and t.initial_pheromone == levels[0]]
    medium = [t.final_pheromone for t in tasks if len(levels) > 1 and t.initial_pheromone == levels[1]]
    high_mean = sum(high) / len(high) if high else None
    medium_mean = sum(medium) / len(medium) if medium else None
    f06 = {"direct_message_keys": not messages, "environment_trail_exists": trail > 0,
           "first_claim_is_argmax_initial_pheromone": first is not None and first.initial_pheromone == levels[0],
           "final_pheromone_high_gt_medium": high_mean is not None and medium_mean is not None
           and high_mean > medium_mean}
    checks.append(Check(name="F06_implicit_collaboration", passed=all(f06.values()), condition=(
        "no direct message key, a pheromone trail exists, the first claim takes the highest initial P_t, "
        "final P_t of high-seeded tasks > medium-seeded (means)"), evidence={
        "conditions": f06, "direct_message_keys": messages, "pheromone_events": trail,
        "first_claim_task": first.task_id if first else None,
        "first_claim_initial_pheromone": first.initial_pheromone if first else None,
        "initial_levels": levels, "final_pheromone_high": high_mean, "final_pheromone_medium": medium_mean}))
    return ScenarioResult(scenario="S10", mode="local", passed=all_passed(checks), checks=tuple(checks))


# -- the run -------------------------------------------------------------------------------------


class S10Payload(Format):
    findings: list[str]
    score: float = Field(ge=0.0, le=1.0)
    always_fail: bool = False
    seconds: float = Field(default=0.01, ge=0.0, le=5.0)


def s10_handler(claim) -> Outcome:
    """The S10 agents' behaviour: report the task's findings with its score, or fail."""
    import time

    p = S10Payload.model_validate(orjson.loads(claim.payload))
    if p.seconds:
        time.sleep(p.seconds)
    if p.always_fail:
        return Outcome.failure("the task's input cannot be analysed (S10 robustness probe)")
    return Outcome.success(p.score, "\n".join(f"finding: {f}" for f in p.findings))


#: (capability, initial pheromone, findings, score, always_fail)
S10_TASKS: tuple[tuple[str, float, tuple[str, ...], float, bool], ...] = (
    ("analysis", 2.0, ("claim order", "lease fencing"), 0.95, False),
    ("analysis", 2.0, ("ledger audit", "lease fencing"), 0.9, False),
    ("analysis", 1.0, ("redis mirror", "budget windows"), 0.85, False),
    ("analysis", 1.0, ("blob store",), 0.8, False),
    ("analysis", 0.0, ("fusion",), 0.7, False),
    ("analysis", 0.0, ("claim order", "fusion"), 0.65, False),
    ("analysis", 0.0, ("quality gate",), 0.6, False),
    ("review", 1.0, ("claim order",), 0.75, False),
    ("review", 1.0, ("ledger audit",), 0.7, False),
    ("review", 0.0, ("consensus",), 0.6, False),
    ("review", 0.0, ("budget windows",), 0.6, False),
    ("review", 0.0, ("ledger audit",), 0.55, False),
    ("review", 0.0, ("consensus",), 0.5, False),
    ("review", 0.0, (), 0.0, True),
)


#: the state of a task row the ledger never created (it then has no claim either: F01 fails)
NOT_IN_LEDGER: dict[str, Any] = {"status": "not_in_ledger", "initial_pheromone": 0.0, "final_pheromone": 0.0,
                                 "score": None}


def ledger_task_states(events: Sequence[LedgerRow]) -> dict[int, dict[str, Any]]:
    """Replay the ledger: task id -> ``status``, ``initial_pheromone``, ``final_pheromone`` and
    ``score`` as the events say (``create`` sets P_t and ``pending``; ``claim`` -> ``claimed``;
    ``complete`` -> ``done`` with its score; ``fail`` / ``lease_expired`` -> their note;
    ``pheromone`` sets P_t)."""
    out: dict[int, dict[str, Any]] = {}
    for e in sorted(events, key=lambda e: e.seq):
        if e.kind == "create":
            p0 = float(e.value or 0.0)
            out[e.task_id] = {"status": "pending", "initial_pheromone": p0, "final_pheromone": p0, "score": None}
            continue
        t = out.get(e.task_id)
        if t is None:
            continue
        if e.kind == "claim":
            t["status"] = "claimed"
        elif e.kind == "complete":
            t["status"], t["score"] = "done", e.value
        elif e.kind in ("fail", "lease_expired"):
            t["status"] = e.note if e.note in ("pending", "failed") else "failed"
        elif e.kind == "pheromone" and e.value is not None:
            t["final_pheromone"] = float(e.value)
    return out


def collect_s10_evidence(store: str, run_id: str, scale_runs: Sequence[ClaimRunEvidence], *,
                         redis_url: str | None = None) -> S10Evidence:
    """Read the S10 evidence back from the run's ledger: every task's status, initial and final
    P_t and score come from :func:`ledger_task_states`; only capability, payload and output (which
    the ledger does not carry) are read from the task rows."""
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        events = [LedgerRow(seq=e.seq, task_id=e.task_id, kind=e.kind.value, agent=e.agent, attempt=e.attempt,
                            value=e.value, delta=e.delta, note=e.note) for e in pool.events()]
        states = ledger_task_states(events)
        tasks = tuple(TaskRow(task_id=t.task_id, capability=t.capability, payload=orjson.loads(t.payload),
                              output=t.output, **states.get(t.task_id, NOT_IN_LEDGER))
                      for t in pool.tasks())
        conv = pool.convergences().get("run")
        audit = audit_pool(pool)
        store_keys = tuple(pool.mirror.keys()) if pool.mirror is not None else ()
    return S10Evidence(run_id=run_id, events=tuple(events), tasks=tasks,
                       accepted_task_id=conv["accepted_task_id"] if conv else None,
                       duplicate_claims=audit.duplicate_claims, participating_agents=audit.participating_agents,
                       scale_runs=tuple(scale_runs), audit_verdict=audit.verdict,
                       store_keys=store_keys)


def run_s10_swarm(store: str, run_id: str, *, redis_url: str | None = None,
                  blob_root: str | Path | None = None, processes: int = 2) -> None:
    """The S10 run: five agents with both capabilities, the fourteen tasks of :data:`S10_TASKS`."""
    with open_pool(store, run_id, redis_url=redis_url) as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability=cap, pheromone=p0, max_attempts=2,
                                 payload={"findings": list(f), "score": s, "always_fail": bad})
                        for cap, p0, f, s, bad in S10_TASKS])
    agents = [Agent(f"s10-agent-{a}", list(S10_CAPABILITIES), s10_handler) for a in range(S10_AGENTS)]
    run_swarm(store, run_id, agents, processes=processes, redis_url=redis_url, blob_root=blob_root)


def run_s10(store: str, *, redis_url: str | None = None, blob_root: str | Path | None = None,
            prefix: str | None = None, scale_runs: Sequence[ClaimRunEvidence] | None = None) -> ScenarioResult:
    """Run S10 (and the 3/5/7 scale runs unless given) and evaluate it from the ledger."""
    prefix = prefix or f"accept-{uuid.uuid4().hex[:8]}"
    if scale_runs is None:
        scale_runs = [run_claim_scale(store, f"{prefix}-s10-scale-{n}", n, redis_url=redis_url, blob_root=blob_root)
                      for n in S09_SIZES]
    run_id = f"{prefix}-s10"
    run_s10_swarm(store, run_id, redis_url=redis_url, blob_root=blob_root)
    ev = collect_s10_evidence(store, run_id, scale_runs, redis_url=redis_url)
    result = evaluate_s10(ev)
    return result.model_copy(update={"details": {"run_id": run_id, "audit_verdict": ev.audit_verdict,
                                                  "scale_audit_verdicts": [r.audit_verdict for r in scale_runs]}})
