"""Agents: a name, capabilities and a handler. Agents never talk to each other.

An agent's loop is short: claim a batch from the pool (argmax P_t), run its handler on each
claim, complete or fail the batch. All coordination is the pool's pheromones and statuses (the
seed's implicit collaboration); there is no message channel between agents, no controller and
no stored global plan.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import orjson
from pydantic import Field

from benchscore.common.errors import BenchscoreError
from benchscore.common.models import Format

from .pool import TaskPool
from .tasks import STRICT_INPUT, Claim


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a handler made of one claim: success with a score and an output, or a failure."""

    ok: bool
    score: float = 0.0
    output: str = ""
    error: str = ""

    @classmethod
    def success(cls, score: float, output: str) -> Outcome:
        if not math.isfinite(score):
            raise ValueError("score must be finite")
        return cls(True, float(score), output)

    @classmethod
    def failure(cls, error: str) -> Outcome:
        return cls(False, error=error)


#: a handler turns a claim into an outcome; an exception it raises is a failure of the task
Handler = Callable[[Claim], Outcome]


@dataclass
class Agent:
    agent_id: str
    capabilities: Sequence[str]
    handler: Handler


@dataclass
class AgentStats:
    claimed: int = 0
    completed: int = 0
    failed: int = 0
    stale: int = 0
    per_agent: dict[str, int] = field(default_factory=dict)

    def add(self, other: AgentStats) -> None:
        self.claimed += other.claimed
        self.completed += other.completed
        self.failed += other.failed
        self.stale += other.stale
        for k, v in other.per_agent.items():
            self.per_agent[k] = self.per_agent.get(k, 0) + v


class SimulatedPayload(Format):
    """Payload of a task run by the simulated agent (``benchscore swarm run``): the handler returns
    ``output`` with ``score``, after failing the first ``fail_attempts`` attempts."""

    model_config = STRICT_INPUT

    output: str
    score: float = Field(ge=0.0, le=1.0)
    fail_attempts: int = Field(default=0, ge=0)
    seconds: float = Field(default=0.0, ge=0.0, le=60.0, description="simulated work time")


def simulated_handler(claim: Claim) -> Outcome:
    """The built-in agent behaviour: no model call, the payload says what happens."""
    p = SimulatedPayload.model_validate(orjson.loads(claim.payload))
    if p.seconds:
        time.sleep(p.seconds)
    if claim.attempt <= p.fail_attempts:
        return Outcome.failure(f"simulated failure of attempt {claim.attempt}")
    return Outcome.success(p.score, p.output)


def noop_handler(claim: Claim) -> Outcome:
    """L01's handler: no work; a deterministic score in [0, 1) from the task id."""
    return Outcome.success(((claim.task_id * 7919) % 1000) / 1000.0, "")


def _outcome(agent: Agent, claim: Claim) -> Outcome:
    try:
        out = agent.handler(claim)
    except BenchscoreError:
        raise  # the environment is broken (a service is down, ...): stop loudly, not fail tasks
    except Exception as exc:  # noqa: BLE001 - any other error of the handler is a failure of the task
        return Outcome.failure(" ".join(f"{type(exc).__name__}: {exc}".split())[:500])
    if not isinstance(out, Outcome):
        return Outcome.failure(f"handler returned {type(out).__name__}, expected Outcome")
    return out


def work_once(pool: TaskPool, agent: Agent, *, batch: int, stats: AgentStats,
              held: dict[str, list[Claim]] | None = None, next_agent: Agent | None = None) -> int:
    """One round of one agent: claim up to ``batch``, handle, complete/fail. Returns claims taken.
    With ``held`` (agent id -> claims) and ``next_agent`` (the agent that runs right after this one
    in this process, maybe itself), the round starts with the claims ``held`` has for the agent and
    ends by finishing its batch and claiming the next agent's batch in one transaction
    (:meth:`~benchscore.swarm.pool.TaskPool.finish_and_claim`: one commit per round, not two; the
    claims wait for no other agent's work)."""
    claims = held.pop(agent.agent_id, None) if held is not None else None
    if not claims:
        claims = pool.claim(agent.agent_id, agent.capabilities, limit=batch)
    if not claims:
        return 0
    stats.claimed += len(claims)
    stats.per_agent[agent.agent_id] = stats.per_agent.get(agent.agent_id, 0) + len(claims)
    done: list[tuple[Claim, float, str]] = []
    failed: list[tuple[Claim, str]] = []
    for claim in claims:
        out = _outcome(agent, claim)
        if out.ok:
            done.append((claim, out.score, out.output))
        else:
            failed.append((claim, out.error))
    if held is not None and next_agent is not None:
        limit = 0 if held.get(next_agent.agent_id) else batch
        accepted, statuses, claimed = pool.finish_and_claim(done, failed, next_agent.agent_id,
                                                            next_agent.capabilities, limit=limit)
        if claimed:
            held[next_agent.agent_id] = claimed
    else:
        accepted = pool.complete_many(done) if done else []
        statuses = pool.fail_many(failed) if failed else []
    stats.completed += sum(accepted)
    stats.stale += len(accepted) - sum(accepted)
    stats.failed += sum(1 for s in statuses if s is not None)
    stats.stale += sum(1 for s in statuses if s is None)
    return len(claims)


def run_agent(pool: TaskPool, agent: Agent, *, batch: int = 1, idle_sleep: float = 0.05) -> AgentStats:
    """Run one agent until no task of its capabilities is pending or claimed."""
    return run_agents(pool, [agent], batch=batch, idle_sleep=idle_sleep)


def run_agents(
    pool: TaskPool, agents: Sequence[Agent], *, batch: int = 1, idle_sleep: float = 0.05,
    should_stop: Callable[[], bool] | None = None,
) -> AgentStats:
    """Run several agents in turn in this process (each claims its own batches) until none has
    anything left: a task claimed by someone else keeps an agent waiting, since its lease may
    expire and the task come back. Each agent finishes its batch and claims the batch of the
    agent that runs next in one transaction (see :func:`work_once`); with ``should_stop`` every
    round claims and finishes on its own, so that a stop leaves no claim held."""
    stats = AgentStats()
    held: dict[str, list[Claim]] | None = {} if should_stop is None else None
    active = list(agents)
    idle_rounds = 0
    while active:
        if should_stop is not None and should_stop():
            break
        took = 0
        still = []
        for i, agent in enumerate(active):
            n = work_once(pool, agent, batch=batch, stats=stats, held=held, next_agent=active[(i + 1) % len(active)])
            took += n
            if n or (held and held.get(agent.agent_id)) or pool.has_open(agent.capabilities):
                still.append(agent)
        if held:  # an agent that was handed claims after its turn ended keeps its place
            still += [a for a in active if held.get(a.agent_id) and a not in still]
        active = still
        if took == 0 and active:
            idle_rounds += 1
            time.sleep(min(1.0, idle_sleep * idle_rounds))
        else:
            idle_rounds = 0
    return stats


def llm_handler(client, model: str, score: Callable[[Claim, str], float], *,
                max_tokens: int | None = None) -> Handler:
    """A handler that asks a model (a :class:`benchscore.common.llm.LLMClient`, which reserves and
    reconciles its tokens with its ``budget``, e.g. a :class:`~benchscore.swarm.budget.TPMBudget`).

    The task payload holds ``messages`` (a chat) or ``prompt`` (one user message); the output is
    the model's text and ``score(claim, text)`` gives task.score (the acceptance layer's formula
    of seed section 3). A failed call is a failure of the task.
    """
    from benchscore.common.llm import LLMError

    def handle(claim: Claim) -> Outcome:
        payload = orjson.loads(claim.payload)
        messages = payload.get("messages") or [{"role": "user", "content": str(payload.get("prompt", ""))}]
        try:
            result = client.chat(model, messages, max_tokens=max_tokens)
        except LLMError as exc:
            return Outcome.failure(" ".join(str(exc).split())[:500])
        return Outcome.success(score(claim, result.text), result.text)

    return handle
