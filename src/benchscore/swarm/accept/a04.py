"""A04: pheromone-driven claiming against a traditional FIFO queue (seed section 13).

The workload (seeded, deterministic): ``roots`` tasks of hidden quality ``q`` drawn uniformly
in [0.3, 0.8]; a fraction of them are broken and fail every attempt (``max_attempts`` 2).
Completing a task of quality ``q`` gives ``task.score = q`` and puts a refinement task of
quality ``min(1, q + step)`` in the queue, up to ``max_depth``. The run has converged when a
task with ``score >= target`` is done. Each execution sleeps ``work_s`` (the stand-in for a
model call).

- **swarm**: the runtime's pool (SQLite); a refinement inherits its parent's pheromone
  (``pheromone = parent score``: the trail), agents claim ``argmax P_t`` (seed section 4) and
  failures cost ``P_t -= 1``.
- **fifo**: a plain ``collections.deque``; refinements and retries go to the back.

Measured for both: executions and seconds until convergence, and the accepted score
(seed section 5: the best done score) after the same execution budget.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import orjson

from benchscore.common.models import Format
from benchscore.swarm import Agent, Outcome, TaskSpec, open_pool


@dataclass(frozen=True)
class Workload:
    roots: int = 20
    broken_fraction: float = 0.2
    step: float = 0.08
    max_depth: int = 4
    target: float = 0.95
    budget: int = 40
    work_s: float = 0.002
    seed: int = 7

    def root_qualities(self) -> list[tuple[float, bool]]:
        """(quality, broken) of every root task, from the seed."""
        rng = random.Random(self.seed)
        out = []
        for _ in range(self.roots):
            q = round(rng.uniform(0.3, 0.8), 3)
            out.append((q, rng.random() < self.broken_fraction))
        return out


class StrategyResult(Format):
    strategy: str
    executions_to_convergence: int | None
    seconds_to_convergence: float | None
    accepted_score_at_budget: float
    executions: int
    failures: int
    wall_time_s: float


class A04Result(Format):
    workload: dict
    swarm: StrategyResult
    fifo: StrategyResult
    A04_PASS: bool


A04_CONDITION = ("the swarm converges in no more executions than FIFO (FIFO not converging counts as infinitely "
                 "many) and its accepted score at the same execution budget is >= FIFO's")


def a04_pass(swarm: StrategyResult, fifo: StrategyResult) -> bool:
    """A04 holds when the swarm converges (reaches ``target``) in no more executions than FIFO
    (FIFO not converging counts as infinitely many) and its accepted score after the same
    execution budget is at least FIFO's."""
    if swarm.executions_to_convergence is None:
        return False
    fifo_exec = fifo.executions_to_convergence if fifo.executions_to_convergence is not None else float("inf")
    return swarm.executions_to_convergence <= fifo_exec and swarm.accepted_score_at_budget >= fifo.accepted_score_at_budget


def _refine(w: Workload, q: float, depth: int) -> tuple[float, int] | None:
    if depth >= w.max_depth:
        return None
    return round(min(1.0, q + w.step), 3), depth + 1


def run_fifo(w: Workload, *, max_executions: int = 10_000) -> StrategyResult:
    """The traditional baseline: one FIFO queue, retries and refinements at the back."""
    queue: deque[tuple[float, bool, int, int]] = deque((q, broken, 0, 0) for q, broken in w.root_qualities())
    best = 0.0
    at_budget = 0.0
    executions = failures = 0
    conv_exec, conv_s = None, None
    t0 = time.perf_counter()
    while queue and executions < max_executions:
        q, broken, depth, attempts = queue.popleft()
        executions += 1
        if w.work_s:
            time.sleep(w.work_s)
        if broken:
            failures += 1
            if attempts + 1 < 2:
                queue.append((q, broken, depth, attempts + 1))
        else:
            best = max(best, q)
            nxt = _refine(w, q, depth)
            if nxt is not None:
                queue.append((nxt[0], False, nxt[1], 0))
            if conv_exec is None and q >= w.target:
                conv_exec, conv_s = executions, time.perf_counter() - t0
        if executions == w.budget:
            at_budget = best
        if conv_exec is not None and executions >= w.budget:
            break
    if executions < w.budget:
        at_budget = best
    return StrategyResult(strategy="fifo", executions_to_convergence=conv_exec, seconds_to_convergence=conv_s,
                          accepted_score_at_budget=at_budget, executions=executions, failures=failures,
                          wall_time_s=time.perf_counter() - t0)


def run_swarm_strategy(w: Workload, store: str | None = None, *, agents: int = 4, trail: bool = True,
                       max_executions: int = 10_000) -> StrategyResult:
    """The swarm: the runtime's pool, refinements inherit the parent's score as pheromone.

    ``trail=False`` is the ablation: refinements start at ``P_t = 0`` (the pool then claims oldest
    first, like a queue, except that failures still cost ``P_t -= 1``)."""
    tmp = None
    if store is None:
        tmp = tempfile.TemporaryDirectory(prefix="a04-")
        store = f"sqlite:///{Path(tmp.name) / 'a04.db'}"
    state = {"executions": 0, "failures": 0, "best": 0.0, "at_budget": None, "conv": None, "conv_s": None}
    t0 = time.perf_counter()
    try:
        with open_pool(store, f"a04-{w.seed}-{time.time_ns()}") as pool:
            pool.create_run()
            pool.add_tasks([TaskSpec(capability="a04", max_attempts=2,
                                     payload={"q": q, "broken": broken, "depth": 0})
                            for q, broken in w.root_qualities()])

            def handler(claim) -> Outcome:
                p = orjson.loads(claim.payload)
                state["executions"] += 1
                if w.work_s:
                    time.sleep(w.work_s)
                if p["broken"]:
                    state["failures"] += 1
                    return Outcome.failure("broken task")
                nxt = _refine(w, p["q"], p["depth"])
                if nxt is not None:
                    pool.add_tasks([TaskSpec(capability="a04", max_attempts=2, pheromone=p["q"] if trail else 0.0,
                                             payload={"q": nxt[0], "broken": False, "depth": nxt[1]})])
                return Outcome.success(p["q"], f"quality {p['q']}")

            team = [Agent(f"a04-agent-{i}", ["a04"], handler) for i in range(agents)]
            from benchscore.swarm.agents import AgentStats, work_once

            stats = AgentStats()
            while state["executions"] < max_executions:
                took = 0
                for agent in team:
                    took += work_once(pool, agent, batch=1, stats=stats)
                    done = pool.converge("a04")
                    best = done.accepted_score if done is not None else 0.0
                    if state["executions"] >= w.budget and state["at_budget"] is None:
                        state["at_budget"] = best
                    if state["conv"] is None and best >= w.target:
                        state["conv"], state["conv_s"] = state["executions"], time.perf_counter() - t0
                    state["best"] = best
                if took == 0 or (state["conv"] is not None and state["executions"] >= w.budget):
                    break
    finally:
        if tmp is not None:
            tmp.cleanup()
    at_budget = state["at_budget"] if state["at_budget"] is not None else state["best"]
    return StrategyResult(strategy="swarm" if trail else "pool_without_trail", executions_to_convergence=state["conv"],
                          seconds_to_convergence=state["conv_s"], accepted_score_at_budget=at_budget,
                          executions=state["executions"], failures=state["failures"],
                          wall_time_s=time.perf_counter() - t0)


def run_a04(w: Workload | None = None, store: str | None = None) -> A04Result:
    """Both strategies on the same workload."""
    w = w or Workload()
    swarm = run_swarm_strategy(w, store)
    fifo = run_fifo(w)
    return A04Result(workload={k: getattr(w, k) for k in w.__dataclass_fields__}, swarm=swarm, fifo=fifo,
                     A04_PASS=a04_pass(swarm, fifo))
