"""Tasks, claims and the pheromone rules of the swarm (seed sections 4 and 5).

The formulas here are pure functions on plain values; the stores apply the same rules in SQL
(and tests check that both agree).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from benchscore.common.models import Format

#: P_t of a new task, unless the environment seeds another value (seed section 4).
INITIAL_PHEROMONE = 0.0
#: what a failure costs a task's pheromone (seed section 4: P_t <- P_t - 1.0).
FAILURE_PENALTY = 1.0
#: attempts a task gets before it is ``failed`` when its spec does not say.
DEFAULT_MAX_ATTEMPTS = 3


class TaskStatus(StrEnum):
    """The four states of a task (issue 5): ``pending -> claimed -> done | pending | failed``."""

    pending = "pending"
    claimed = "claimed"
    done = "done"
    failed = "failed"


#: input formats take JSON types as they are: no true -> 1.0, "0.5" -> 0.5 or 2.0 -> 2 coercion
STRICT_INPUT = ConfigDict(strict=True)


class TaskSpec(Format):
    """One task to put in the pool (one line of a tasks JSONL file)."""

    model_config = STRICT_INPUT

    capability: str = Field(min_length=1, max_length=200, description="what an agent must be able to do")
    payload: dict[str, Any] = Field(description="the task's input; opaque to the pool, a JSON object")
    pheromone: float = Field(default=INITIAL_PHEROMONE, description="initial P_t (seed section 4: 0)")
    max_attempts: int = Field(default=DEFAULT_MAX_ATTEMPTS, ge=1, le=1000)

    @field_validator("capability")
    @classmethod
    def _no_blank(cls, value: str) -> str:
        if value.strip() != value or any(c in value for c in "\n\r\t"):
            raise ValueError("must not have surrounding whitespace or control characters")
        return value


class AgentSpec(Format):
    """One agent of a run (one entry of an agents JSON file)."""

    model_config = STRICT_INPUT

    agent_id: str = Field(min_length=1, max_length=200)
    capabilities: list[str] = Field(min_length=1)

    @field_validator("capabilities")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("capabilities must be distinct")
        if any(not c for c in value):
            raise ValueError("capabilities must be non-empty strings")
        return value


@dataclass(frozen=True, slots=True)
class Claim:
    """A task held by one agent: the lease runs until ``lease_expires_at`` (epoch seconds).

    ``attempt`` is the fencing token: completing or failing with an attempt that is no longer
    the task's current claim is refused by the store.
    """

    task_id: int
    attempt: int
    agent_id: str
    capability: str
    payload: str  # JSON text, as stored
    pheromone: float  # P_t at the claim; it cannot change while the claim is current
    max_attempts: int
    lease_expires_at: float


@dataclass(frozen=True, slots=True)
class Task:
    """A snapshot of one task row."""

    task_id: int
    capability: str
    payload: str
    status: TaskStatus
    pheromone: float
    score: float | None
    output: str | None
    attempts: int
    max_attempts: int
    claimed_by: str | None = None


class ConvergeResult(Format):
    """Seed section 5: the winner among ``done`` tasks."""

    accepted_task_id: int
    accepted_score: float
    accepted_output: str


def pheromone_on_success(pheromone: float, score: float) -> float:
    """Seed section 4: on success ``P_t <- P_t + task.score``."""
    return pheromone + score


def pheromone_on_failure(pheromone: float) -> float:
    """Seed section 4: on failure ``P_t <- P_t - 1.0``."""
    return pheromone - FAILURE_PENALTY


def status_after_failure(attempts: int, max_attempts: int) -> TaskStatus:
    """Issue 5: a failed attempt returns the task to ``pending`` until ``attempts == max_attempts``,
    then the task is ``failed``."""
    return TaskStatus.failed if attempts >= max_attempts else TaskStatus.pending


def claim_order(candidates: Iterable[Task], capabilities: Iterable[str]) -> list[Task]:
    """Seed section 4: ``claim_task = argmax(P_t)`` over pending tasks whose capability the agent
    has; ties go to the oldest task (lowest id). Returns the candidates in claim order, so the
    first ``n`` are what a batch claim of ``n`` takes."""
    caps = set(capabilities)
    eligible = [t for t in candidates if t.status is TaskStatus.pending and t.capability in caps]
    return sorted(eligible, key=lambda t: (-t.pheromone, t.task_id))


def converge(done: Iterable[tuple[int, float, str]]) -> ConvergeResult | None:
    """Seed section 5: ``winner = argmax_{t in T_done} task.score_t``; ``accepted_output =
    winner.output``, ``accepted_score = winner.score``, ``accepted_task_id = winner.id``.

    ``done`` holds ``(task_id, score, output)`` of the ``done`` tasks. Ties go to the oldest task
    (lowest id). Returns None when no task is done.
    """
    best: tuple[int, float, str] | None = None
    for task_id, score, output in done:
        if not math.isfinite(score):
            raise ValueError(f"task {task_id}: score {score!r} is not finite")
        if best is None or score > best[1] or (score == best[1] and task_id < best[0]):
            best = (task_id, score, output)
    if best is None:
        return None
    return ConvergeResult(accepted_task_id=best[0], accepted_score=best[1], accepted_output=best[2])


def unknown_capabilities(tasks: Sequence[TaskSpec], agents: Sequence[AgentSpec]) -> dict[int, str]:
    """Task index -> capability for every task that no agent can claim."""
    offered = {c for a in agents for c in a.capabilities}
    return {i: t.capability for i, t in enumerate(tasks) if t.capability not in offered}
