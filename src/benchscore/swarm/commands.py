"""What the swarm runtime's commands do (``run``, ``status``, ``audit``, ``stress``, ``budget``, the demo).

:mod:`benchscore.swarm.cli` declares the commands and imports this module only when one runs, so
``benchscore swarm --help`` stays fast. The functions only wire the runtime modules together.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import click
import orjson
from pydantic import ValidationError

from benchscore.common.atomic import atomic_write_bytes, atomic_write_json
from benchscore.common.cli import exit_for
from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance
from benchscore.common.readers import read_bytes, read_json, read_jsonl, validate
from benchscore.common.terminal import console, err_console, fmt, print_line, print_table, progress

from .agents import Agent, SimulatedPayload, simulated_handler
from .audit import AuditReport, audit_pool
from .budget import BudgetReport, run_l02
from .cli_accept import ACCEPT_FORMATS, demo_acceptance
from .defaults import DEFAULT_MAX_OUTAGE
from .pool import RunExists, RunNotFound, open_pool
from .run import RunReport, redact, run_swarm
from .stress import StressReport, run_stress
from .tasks import AgentSpec, TaskSpec, unknown_capabilities

FORMATS: dict[str, type] = {
    "swarm-task": TaskSpec,
    "swarm-agent": AgentSpec,
    "swarm-simulated-payload": SimulatedPayload,
    "swarm-run-report": RunReport,
    "swarm-audit-report": AuditReport,
    "swarm-stress-report": StressReport,
    "swarm-budget-report": BudgetReport,
}

# ---- input -------------------------------------------------------------------------------------
def load_tasks(path: Path) -> list[TaskSpec]:
    records = read_jsonl(path)
    if not records:
        raise BadInput("no tasks", source=path)
    tasks = []
    for i, rec in enumerate(records, 1):
        spec = validate(TaskSpec, rec, source=path, record=f"line {i}")
        try:
            SimulatedPayload.model_validate(spec.payload)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = "payload." + ".".join(str(x) for x in err["loc"]) if err["loc"] else "payload"
            raise BadInput(err["msg"], source=path, record=f"line {i}", field=field) from None
        tasks.append(spec)
    return tasks


def load_agents(path: Path) -> list[AgentSpec]:
    data = read_json(path)
    if isinstance(data, dict) and set(data) == {"agents"}:
        data = data["agents"]
    if not isinstance(data, list) or not data:
        raise BadInput('expected a non-empty list of agents (or {"agents": [...]})', source=path)
    agents = [validate(AgentSpec, rec, source=path, record=i) for i, rec in enumerate(data)]
    seen: set[str] = set()
    for i, a in enumerate(agents):
        if a.agent_id in seen:
            raise BadInput(f"duplicate agent_id {a.agent_id!r}", source=path, record=i, field="agent_id")
        seen.add(a.agent_id)
    return agents


def _write(output: Path | None, obj: dict[str, Any]) -> None:
    if output is not None:
        atomic_write_json(output, obj)
        err_console.print(f"wrote {output}")


def _open(store: str, run_id: str, redis_url: str | None = None, max_outage: float = DEFAULT_MAX_OUTAGE):
    return open_pool(store, run_id, redis_url=redis_url, max_outage=max_outage)


def report_rows(body: dict[str, Any], *, skip: tuple[str, ...] = (), prefix: str = "") -> list[tuple[str, Any]]:
    """Every value of a report as a table row (nested objects as ``outer.inner``; a list as its
    length and first 8 items), so the terminal shows every number the JSON holds."""
    rows: list[tuple[str, Any]] = []
    for key, value in body.items():
        if key in skip or key == "provenance":
            continue
        name = prefix + key
        if isinstance(value, dict):
            rows += report_rows(value, prefix=name + ".") if value else [(name, "{}")]
        elif isinstance(value, list):
            shown = ", ".join(fmt(v) for v in value[:8]) + (", ..." if len(value) > 8 else "")
            rows.append((name, f"{len(value)} items: {shown}" if value else "0 items"))
        else:
            rows.append((name, value))
    return rows


def service_rows(service: dict[str, Any]) -> list[tuple[str, Any]]:
    """Retries per service and the number of incidents (their text is in the JSON)."""
    return report_rows({"retries": service["retries"]}, prefix="service.") + [
        ("service.incidents", len(service["incidents"]))]


def print_violations(violations: list, total: int) -> None:
    """One line per violation, naming its task and ledger seq."""
    for v in violations:
        task = "-" if v.task_id is None else v.task_id
        seq = "-" if v.seq is None else v.seq
        console.print(f"violation: task {task} seq {seq} attempt {v.attempt if v.attempt is not None else '-'} "
                      f"agent {v.agent or '-'}: {v.reason}", markup=False, highlight=False, soft_wrap=True)
    if total > len(violations):
        console.print(f"... and {total - len(violations)} more violations (the JSON lists the first {len(violations)})",
                      markup=False, highlight=False, soft_wrap=True)


# ---- run ---------------------------------------------------------------------------------------
def _open_new_run(store: str, run_id: str, redis_url: str | None, max_outage: float, *, crash_policy: str,
                  lease_seconds: float, tasks: list[TaskSpec]) -> None:
    """Create the run with its tasks (one transaction). On failure (the run id is taken, the disk
    is full, ...) nothing is left behind: no run, and no store file this command created."""
    pool = _open(store, run_id, redis_url, max_outage)
    try:
        pool.create_run(crash_policy=crash_policy, lease_seconds=lease_seconds, tasks=tasks)
    except RunExists as exc:
        pool.discard()
        raise BadInput(f"{exc}; pass another --run-id, or continue it with --join {run_id}") from None
    except BaseException:
        pool.discard()
        raise
    pool.close()


def _check_join(store: str, run_id: str, redis_url: str | None, max_outage: float, tasks: list[TaskSpec],
                tasks_file: Path) -> None:
    """The run to join exists and holds the tasks of TASKS_FILE (capability and payload, in order)."""
    with _open(store, run_id, redis_url, max_outage) as pool:
        try:
            pool.settings  # noqa: B018
        except RunNotFound as exc:
            raise BadInput(f"--join {run_id}: {exc}; nothing to join") from None
        stored = [(t.capability, t.payload) for t in pool.tasks()]
    wanted = [(t.capability, orjson.dumps(t.payload).decode()) for t in tasks]
    if stored != wanted:
        where = next((i for i, (a, b) in enumerate(zip(stored, wanted, strict=False)) if a != b),
                     min(len(stored), len(wanted)))
        raise BadInput(f"--join {run_id}: the run holds {len(stored)} tasks, this file {len(wanted)}, and they "
                       f"differ from line {where + 1} on; join with the tasks file the run was started with",
                       source=tasks_file)


def run_cmd(tasks_file: Path, agents_file: Path, store: str, redis_url: str | None, run_id: str | None,
            join: str | None, processes: int | None, batch: int, crash_policy: str, lease_seconds: float,
            max_outage: float, blobs: str, output: Path | None) -> None:
    """The ``swarm run`` command (options: see ``benchscore swarm run --help``)."""
    if join is not None and run_id is not None:
        raise BadInput("--run-id and --join: give one (--join RUN_ID names the run to continue)")
    tasks_raw, agents_raw = read_bytes(tasks_file), read_bytes(agents_file)
    tasks = load_tasks(tasks_file)
    agent_specs = load_agents(agents_file)
    unknown = unknown_capabilities(tasks, agent_specs)
    if unknown:
        i, cap = next(iter(unknown.items()))
        raise BadInput(f"unknown capability {cap!r}: no agent in {agents_file} has it", source=tasks_file,
                       record=f"line {i + 1}", field="capability")
    run_id = join or run_id or "run-" + hashlib.sha256(tasks_raw + b"\0" + agents_raw).hexdigest()[:12]
    if join is not None:
        _check_join(store, run_id, redis_url, max_outage, tasks, tasks_file)
    else:
        _open_new_run(store, run_id, redis_url, max_outage, crash_policy=crash_policy, lease_seconds=lease_seconds,
                      tasks=tasks)
    agents = [Agent(a.agent_id, a.capabilities, simulated_handler) for a in agent_specs]
    with progress() as bar:
        job = bar.add_task(f"swarm run {run_id}", total=len(tasks))
        report, audit = run_swarm(
            store, run_id, agents, processes=processes or os.cpu_count() or 1, batch=batch, redis_url=redis_url,
            blob_root=blobs, on_progress=lambda c: bar.update(job, completed=c["done"] + c["failed"]),
            max_outage=max_outage, joined=join is not None,
        )
    body = report.model_dump(exclude={"wall_time_s", "tasks_per_second"})
    rows = report_rows(report.model_dump(), skip=("service",)) + service_rows(report.service)
    print_table("swarm run", ["key", "value"], rows)
    body["provenance"] = provenance("swarm.run", {"tasks": tasks_raw, "agents": agents_raw},
                                    extra={"store": report.store})
    _write(output, body)
    exit_for(report.converged, report.audit_verdict)


# ---- status / audit ----------------------------------------------------------------------------
def _known_run(pool) -> None:
    try:
        pool.settings  # noqa: B018
    except RunNotFound as exc:
        raise BadInput(str(exc)) from None


def status_cmd(run_id: str, store: str, redis_url: str | None, as_json: bool) -> None:
    """The ``swarm status`` command (options: see ``benchscore swarm status --help``)."""
    with _open(store, run_id, redis_url) as pool:
        _known_run(pool)
        counts = pool.counts()
        conv = pool.convergences()
        policy, lease = pool.settings
        leaders: dict[str, list] = {}
        for task_id, cap, p in pool.pheromones():
            leaders.setdefault(cap, []).append((p, -task_id))
        top = {cap: [[-t, p] for p, t in sorted(v, reverse=True)[:3]] for cap, v in sorted(leaders.items())}
        head = pool.ledger_head()
        mirror = None
        if pool.mirror is not None:
            mirror = pool.mirror.reconcile(pool)
            mirror |= {"keys": len(pool.mirror.keys()), "stream_events": pool.mirror.stream_event_count()}
    body = {"run_id": run_id, "store": redact(store), "crash_policy": policy.value, "lease_seconds": lease,
            "counts": counts, "ledger_events": head.events, "ledger_seq": head.seq, "ledger_head": head.hash.hex(),
            "convergence": conv, "pheromone_leaders": top, "redis_mirror": mirror}
    if as_json:
        click.echo(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
        return
    print_table(f"swarm status {run_id}", ["key", "value"], report_rows(body, skip=("convergence", "pheromone_leaders")))
    for scope, c in conv.items():
        console.print(f"converged ({scope}): task {c['accepted_task_id']} score {fmt(c['accepted_score'])} "
                      f"blob {c['blob_sha256'] or '-'}", markup=False, highlight=False, soft_wrap=True)
    for cap, items in top.items():
        console.print(f"pheromone leaders {cap}: " + ", ".join(f"task {t} P={fmt(p)}" for t, p in items),
                      markup=False, highlight=False, soft_wrap=True)


def audit_cmd(run_id: str, store: str, history: bool, expect_head: str | None, output: Path | None) -> None:
    """The ``swarm audit`` command (options: see ``benchscore swarm audit --help``)."""
    if expect_head is not None and (len(expect_head) != 64 or any(c not in "0123456789abcdef" for c in expect_head)):
        raise BadInput(f"--expect-head {expect_head!r}: expected 64 lowercase hex digits")
    with _open(store, run_id) as pool:
        _known_run(pool)
        report = audit_pool(pool, history=history, expect_head=expect_head)
    rows = report_rows(report.model_dump(), skip=("violations", "final_pheromone", "pheromone_history",
                                                  "pheromone_points"))
    if report.pheromone_points is not None:
        rows.append(("pheromone_points (tasks: points, each seq/P_t/event in the JSON)",
                     f"{len(report.pheromone_points)}: {sum(map(len, report.pheromone_points.values()))}"))
    print_table(f"swarm audit {run_id}", ["check", "value"], rows)
    print_violations(report.violations, report.violation_count)
    body = report.model_dump()
    body["provenance"] = provenance("swarm.audit", {}, extra={"store": redact(store), "run_id": run_id})
    _write(output, body)
    exit_for(report.verdict)


# ---- L01 / L02 ---------------------------------------------------------------------------------
def stress_cmd(total_agents: int, total_tasks: int, store: str, redis_url: str | None, processes: int | None,
               batch: int | None, blobs: str | None, run_id: str | None, join: str | None, lease_seconds: float,
               max_outage: float, cleanup: bool, output: Path | None) -> None:
    """The ``swarm stress`` command (options: see ``benchscore swarm stress --help``)."""
    with progress() as bar:
        job = bar.add_task("L01 stress", total=None if join else total_tasks)

        def show(c: dict[str, int]) -> None:
            bar.update(job, completed=c["done"] + c["failed"], total=sum(c.values()))

        try:
            report = run_stress(store, total_agents=total_agents, total_tasks=total_tasks,
                                worker_processes=processes, redis_url=redis_url, batch=batch, blob_root=blobs,
                                cleanup=cleanup, on_progress=show, run_id=run_id, join=join,
                                lease_seconds=lease_seconds, max_outage=max_outage)
        except RunExists as exc:
            raise BadInput(f"{exc}; pass another --run-id, or continue it with --join {run_id}") from None
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    d = report.model_dump()
    rows = report_rows(d, skip=("service", "L01_PASS")) + service_rows(report.service)
    rows.append(("L01_PASS", "reduced (not the seed's size)" if report.L01_verdict == "reduced" else report.L01_PASS))
    print_table(f"L01 stress ({report.store})", ["key", "value"], rows)
    body = dict(d)
    body["provenance"] = provenance("swarm.L01", {}, extra={"store": report.store})
    _write(output, body)
    exit_for(report.L01_verdict)  # 0 PASS; 1 FAIL or reduced (not the seed's size), the report written


def budget_cmd(target_tpm: int, tokens_per_task: int, agent_count: int, store: str | None,
               output: Path | None) -> None:
    """The ``swarm budget`` command (options: see ``benchscore swarm budget --help``)."""
    report = run_l02(target_tpm, tokens_per_task, agent_count=agent_count, url=store)
    d = report.model_dump()
    print_table("L02 TPM budget", ["key", "value"], report_rows(d, skip=("windows",)))
    print_table("L02 minute windows", ["minute", "reserved_tokens", "actual_tokens", "target_tpm"],
                [(w.minute, w.reserved_tokens, w.actual_tokens, w.target_tpm) for w in report.windows])
    body = dict(d)
    body["provenance"] = provenance("swarm.L02", {}, extra={"target_tpm": target_tpm,
                                                              "tokens_per_task": tokens_per_task})
    _write(output, body)
    exit_for(report.L02_PASS)


# ---- demo --------------------------------------------------------------------------------------
DEMO_CAPABILITIES = ("review", "summarise")


def demo_tasks() -> list[dict[str, Any]]:
    """Eight review/summary tasks; two fail their first attempt, one seeds an initial pheromone."""
    out = []
    for i in range(8):
        cap = DEMO_CAPABILITIES[i % 2]
        payload: dict[str, Any] = {"output": f"{cap} #{i}: finding {i}", "score": round(0.5 + 0.05 * i, 2)}
        if i in (2, 5):
            payload["fail_attempts"] = 1
        rec: dict[str, Any] = {"capability": cap, "payload": payload}
        if i == 3:
            rec["pheromone"] = 0.5
        out.append(rec)
    return out


def demo_agents() -> list[dict[str, Any]]:
    return [
        {"agent_id": "reviewer-a", "capabilities": ["review"]},
        {"agent_id": "reviewer-b", "capabilities": ["review", "summarise"]},
        {"agent_id": "summariser", "capabilities": ["summarise"]},
    ]


def demo(out_dir: Path) -> None:
    """A small swarm run on SQLite (8 tasks, 3 agents, 2 worker processes; converge and audit with the
    pheromone history), a reduced L01 (8 agents, 4,096 tasks: labelled ``reduced``), L02 at the seed's
    numbers, and the acceptance matrix."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks_path, agents_path = out_dir / "tasks.jsonl", out_dir / "agents.json"
    atomic_write_bytes(tasks_path, b"".join(orjson.dumps(t) + b"\n" for t in demo_tasks()))
    atomic_write_json(agents_path, demo_agents())
    db = out_dir / "run.db"
    store = f"sqlite:///{db}"
    tasks, agent_specs = load_tasks(tasks_path), load_agents(agents_path)
    with open_pool(store, "demo") as pool:
        pool.create_run(crash_policy="requeue", lease_seconds=30)
        pool.add_tasks(tasks)
    agents = [Agent(a.agent_id, a.capabilities, simulated_handler) for a in agent_specs]
    report, _ = run_swarm(store, "demo", agents, processes=2, blob_root=out_dir / "blobs")
    with open_pool(store, "demo") as pool:
        audit = audit_pool(pool, history=True)
    from benchscore.common.provenance import recording

    from . import cli

    body = report.model_dump(exclude={"wall_time_s", "tasks_per_second"})
    with recording("benchscore swarm run", cli.run_cmd, tasks_file=tasks_path, agents_file=agents_path, store=store,
                   run_id="demo", processes=2, blobs=str(out_dir / "blobs"), output=out_dir / "run-report.json"):
        body["provenance"] = provenance("swarm.run", {"tasks": tasks_path, "agents": agents_path})
    atomic_write_json(out_dir / "run-report.json", body)
    audit_body = audit.model_dump()
    with recording("benchscore swarm audit", cli.audit_cmd, run_id="demo", store=store, history=True,
                   output=out_dir / "audit.json"):
        audit_body["provenance"] = provenance("swarm.audit", {}, extra={"run_id": "demo"})
    atomic_write_json(out_dir / "audit.json", audit_body)
    conv = report.convergence
    print_table("swarm demo (SQLite, 2 worker processes)", ["key", "value"], [
        ("completed_tasks", report.completed_tasks), ("failed_tasks", report.failed_tasks),
        ("participating_agents", report.participating_agents),
        ("accepted_task_id", conv.accepted_task_id if conv else None),
        ("accepted_score", conv.accepted_score if conv else None),
        ("accepted_output", conv.accepted_output if conv else None),
        ("audit", f"{audit.verdict} ({audit.violation_count} violations, {audit.duplicate_claim_count} duplicate claims)"),
        ("ledger_head", audit.ledger_head),
    ])
    print_line(f"reproduce: benchscore swarm run {tasks_path} {agents_path} --store sqlite:///{out_dir}/again.db")

    stress = run_stress(f"sqlite:///{out_dir / 'l01.db'}", total_agents=8, total_tasks=4096, worker_processes=2)
    stress_body = stress.model_dump()
    with recording("benchscore swarm stress", cli.stress_cmd, total_agents=8, total_tasks=4096,
                   store=f"sqlite:///{out_dir / 'l01.db'}", processes=2, output=out_dir / "l01-reduced.json"):
        stress_body["provenance"] = provenance("swarm.L01", {}, extra={"store": stress.store})
    atomic_write_json(out_dir / "l01-reduced.json", stress_body)
    budget = run_l02(3000, 50, agent_count=4, url=f"sqlite:///{out_dir / 'l02.db'}")
    budget_body = budget.model_dump()
    with recording("benchscore swarm budget", cli.budget_cmd, target_tpm=3000, tokens_per_task=50, agent_count=4,
                   store=f"sqlite:///{out_dir / 'l02.db'}", output=out_dir / "l02.json"):
        budget_body["provenance"] = provenance("swarm.L02", {}, extra={"target_tpm": 3000, "tokens_per_task": 50})
    atomic_write_json(out_dir / "l02.json", budget_body)
    print_table("L01 (reduced: 8 agents, 4096 tasks) and L02 (seed numbers)", ["key", "value"], [
        ("L01 verdict", f"{stress.L01_verdict} (not the seed's size: 128 agents, 131072 tasks)"),
        ("L01 tasks_per_second", stress.tasks_per_second),
        ("L01 duplicate_claims", len(stress.duplicate_claims)),
        ("L02_PASS", budget.L02_PASS), ("L02 max_tokens_in_a_minute", budget.max_tokens_in_a_minute),
        ("L02 budget_utilization", budget.budget_utilization),
    ])
    demo_acceptance(out_dir / "acceptance")  # the acceptance layer's part of the demo (never raises)


FORMATS.update(ACCEPT_FORMATS)
