"""CLI of benchscore.swarm: ``run``, ``status``, ``audit``, ``stress``, ``budget`` and ``accept``.

The commands are declared here with light imports only (``benchscore swarm --help`` loads no
runtime module); what they do lives in :mod:`benchscore.swarm.commands` (the runtime) and
:mod:`benchscore.swarm.cli_accept` (the acceptance layer), imported when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from benchscore.common.cli import LazyGroup

from .defaults import (
    CRASH_POLICIES,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_OUTAGE,
    DEFAULT_STORE_URL,
    STRESS_LEASE_SECONDS,
)

#: the provenance metric ids this domain's outputs carry -> what writes them (``benchscore list``)
METRIC_IDS = {
    "swarm.run": "swarm run: a run's convergence, counts and ledger head",
    "swarm.audit": "swarm audit: the ledger and task table proved or refuted",
    "swarm.L01": "swarm stress: L01, 128 agents on 131,072 tasks (or a labelled reduced size)",
    "swarm.L02": "swarm budget: L02, the TPM budget ledger",
    "swarm.acceptance.{scenario}": "swarm accept: one scenario (S07-S10, L01, L02) or the whole matrix (all)",
}


def __getattr__(name: str) -> Any:
    """``FORMATS`` (format name -> pydantic model, for ``benchscore schema``), built on first use."""
    if name == "FORMATS":
        from .commands import FORMATS

        return FORMATS
    if name in ("demo_tasks", "demo_agents", "load_tasks", "load_agents"):
        from . import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


store_option = click.option("--store", "store", default=DEFAULT_STORE_URL, show_default=True,
                            help="sqlite:///PATH or postgresql://USER@HOST:PORT/DB[?schema=NAME]")
redis_option = click.option("--redis", "redis_url", default=None,
                            help="redis://HOST:PORT/DB[?prefix=KEYPREFIX]: mirror pheromones and events")
max_outage_option = click.option(
    "--max-outage", type=click.FloatRange(0, 86400), default=DEFAULT_MAX_OUTAGE, show_default=True,
    help="seconds the store (PostgreSQL restarting, SQLite locked) may be unavailable mid-run: every worker "
         "retries with backoff until then, and the run goes on; longer, and the run stops with one line (continue "
         "it later with --join)")
output_option = click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
                             help="write the JSON report here (atomically)")


@click.group("swarm", cls=LazyGroup, lazy={"accept": (
    "benchscore.swarm.cli_accept", "accept",
    "Run acceptance scenarios (S07-S10, L01, L02, or all) and report every check with its evidence.")})
def group() -> None:
    """swarm-minimal runtime: a pheromone task pool with agents, leases and an audit ledger."""


@group.command("run")
@click.argument("tasks_file", type=click.Path(path_type=Path))
@click.argument("agents_file", type=click.Path(path_type=Path))
@store_option
@redis_option
@click.option("--run-id", default=None, help="default: run- + sha256 of the two input files (12 hex)")
@click.option("--join", "join", default=None, metavar="RUN_ID",
              help="join the run RUN_ID already in the store (started here or on another machine, running or "
                   "stopped) instead of creating one: work its pending and expired-lease tasks with AGENTS_FILE's "
                   "agents, then converge and audit the whole run; TASKS_FILE must be the run's")
@click.option("--processes", type=click.IntRange(1, 512), default=None, help="worker processes (default: CPUs)")
@click.option("--batch", type=click.IntRange(1, 10000), default=1, show_default=True, help="tasks per claim")
@click.option("--crash-policy", type=click.Choice(CRASH_POLICIES), default="requeue",
              show_default=True, help="what an expired lease does to its task")
@click.option("--lease-seconds", type=click.FloatRange(0.001, 86400), default=DEFAULT_LEASE_SECONDS,
              show_default=True, help="how long a claim holds its task (a joined run keeps its own)")
@max_outage_option
@click.option("--blobs", default="swarm-blobs", show_default=True,
              help="blob store (folder or fsspec URL) for the convergence artifact")
@output_option
def run_cmd(**options: Any) -> None:
    """Run simulated agents (AGENTS_FILE) on the tasks of TASKS_FILE (JSONL) until the run converges."""
    from . import commands

    commands.run_cmd(**options)


@group.command("status")
@click.argument("run_id")
@store_option
@redis_option
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def status_cmd(**options: Any) -> None:
    """Counts per status, convergence and pheromone leaders of RUN_ID; with --redis, the mirror is
    compared with the store (and rebuilt from it when they differ)."""
    from . import commands

    commands.status_cmd(**options)


@group.command("audit")
@click.argument("run_id")
@store_option
@click.option("--history", is_flag=True,
              help="include every task's pheromone history: (ledger seq, P_t, event) points")
@click.option("--expect-head", default=None,
              help="a ledger head (hex) recorded earlier, e.g. from the run report: refute the run unless the "
                   "ledger's chain passes through it")
@output_option
def audit_cmd(**options: Any) -> None:
    """Prove or refute: the ledger's hash chain, zero duplicate claims, every task accounted for,
    participating agents, pheromone history, and the task table against the ledger. Exit 1 when
    refuted (each violation is printed with its task and ledger seq)."""
    from . import commands

    commands.audit_cmd(**options)


@group.command("stress")
@click.option("--agents", "total_agents", type=click.IntRange(1, 100000), default=128, show_default=True,
              help="Agents contending on the pool (L01's size is 128; fewer makes the run `reduced`).")
@click.option("--tasks", "total_tasks", type=click.IntRange(1, 10**8), default=131072, show_default=True,
              help="No-op tasks in the pool (L01's size is 131072; fewer makes the run `reduced`).")
@store_option
@redis_option
@click.option("--processes", type=click.IntRange(1, 512), default=None,
              help="worker processes (default and L01 requirement: logical CPUs)")
@click.option("--batch", type=click.IntRange(1, 10000), default=None, help="tasks per claim (default: automatic)")
@click.option("--blobs", default=None,
              help="blob store for the shard convergence artifacts (default: none, because the no-op tasks' "
                   "artifacts prove nothing the report does not; --blobs swarm-blobs, swarm run's default, keeps them)")
@click.option("--run-id", default=None, help="default: l01- + 12 random hex")
@click.option("--join", "join", default=None, metavar="RUN_ID",
              help="join the stress run RUN_ID already in the store (running or stopped, this machine or another) "
                   "instead of creating one: work its pending and expired-lease tasks with --agents agents, then "
                   "check the whole run (--tasks is the run's)")
@click.option("--lease-seconds", type=click.FloatRange(0.001, 86400), default=STRESS_LEASE_SECONDS,
              show_default=True, help="how long a claim holds its task (a joined run keeps its own)")
@max_outage_option
@click.option("--cleanup", is_flag=True,
              help="delete the run (tasks, ledger, Redis keys) after the report; on PostgreSQL also VACUUM the "
                   "swarm tables, so repeated runs stay as fast as the first")
@output_option
def stress_cmd(**options: Any) -> None:
    """L01: TOTAL_AGENTS agents in worker processes = logical CPUs on one shared pool of no-op tasks."""
    from . import commands

    commands.stress_cmd(**options)


@group.command("budget")
@click.option("--tpm", "target_tpm", type=click.IntRange(1, 10**9), default=3000, show_default=True,
              help="target_tpm: tokens a minute window may hold.")
@click.option("--tokens-per-task", type=click.IntRange(1, 10**9), default=50, show_default=True,
              help="Tokens each task reserves before its model call.")
@click.option("--agents", "agent_count", type=click.IntRange(1, 1000), default=4, show_default=True,
              help="Agents that run the tasks.")
@click.option("--store", "store", default=None,
              help="where the run and the budget ledger live (default: a temporary SQLite file, deleted after the "
                   "run, because the budget's evidence is the JSON report; --store sqlite:///run.db, the default "
                   "of swarm run, audit, status and stress, keeps it)")
@output_option
def budget_cmd(**options: Any) -> None:
    """L02: a swarm run whose tasks reserve tokens in discrete minute windows before each model call."""
    from . import commands

    commands.budget_cmd(**options)


def demo(out_dir: Path) -> None:
    """The swarm part of ``benchscore demo`` (see :func:`benchscore.swarm.commands.demo`)."""
    from .commands import demo as run_demo

    run_demo(out_dir)


def verify_kinds() -> list[Any]:
    """The kinds of swarm output, each told apart by validation against its model as written (``benchscore
    verify``): each is evidence of a run (concurrent agents on a store, measured), never a function of files."""
    from benchscore.common.verify import Kind

    from .outputs import output_formats

    formats = output_formats()
    accept = ("swarm accept runs agents against a store and a model gateway: its timings and interleavings are "
              "measured, not computed (and S07/S08 live answers come from a live model)")

    def acceptance(m: str) -> bool:
        return m.startswith("swarm.acceptance.")

    return [
        Kind("swarm run report", (formats["run"],), lambda m: m == "swarm.run", "swarm.run", ("benchscore swarm run",),
             live="a swarm run is concurrent agents on a store: its interleaving, leases and timings are not a "
                  "function of its input files"),
        Kind("swarm audit", (formats["audit"],), lambda m: m == "swarm.audit", "swarm.audit",
             ("benchscore swarm audit",),
             live="swarm audit reads a run's ledger from a store, a database the output does not hash"),
        Kind("swarm L01 stress report", (formats["L01"],), lambda m: m == "swarm.L01", "swarm.L01",
             ("benchscore swarm stress",), live="swarm stress measures throughput and latency of a live run"),
        Kind("swarm L02 budget report", (formats["L02"],), lambda m: m == "swarm.L02", "swarm.L02",
             ("benchscore swarm budget",), live="swarm budget measures a live run against a token budget"),
        Kind("swarm acceptance matrix", (formats["acceptance-matrix"],), acceptance, "swarm.acceptance.WHICH",
             ("benchscore swarm accept",), live=accept),
        Kind("swarm model IO record", (formats["model-io"],), acceptance, "swarm.acceptance.WHICH",
             ("benchscore swarm accept",), live=accept),
        Kind("swarm acceptance scenario", (formats["scenario"],), acceptance, "swarm.acceptance.WHICH",
             ("benchscore swarm accept",), live=accept),
    ]
