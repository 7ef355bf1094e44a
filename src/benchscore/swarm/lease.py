"""Leases, attempt fencing and the crash policy.

A claim holds the task for ``lease_seconds``. A worker that dies (``kill -9``) stops completing
its claims; when the lease has expired, the next agent that touches the pool (any agent: there is
no controller) applies the run's :class:`CrashPolicy` to the task. The claim's ``attempt`` is the
fencing token: the dead worker's late completion names an attempt that is no longer current, so
the store refuses it, and a task is never completed twice.
"""

from __future__ import annotations

from enum import StrEnum

from .defaults import DEFAULT_LEASE_SECONDS
from .tasks import TaskStatus, pheromone_on_failure

__all__ = ["DEFAULT_LEASE_SECONDS", "CrashPolicy", "resolve_expired_lease"]  # the default is re-exported


class CrashPolicy(StrEnum):
    """What an expired lease does to its task.

    - ``requeue``: the task goes back to ``pending`` (P_t unchanged: the agent died, the task did
      not fail) unless the expired attempt was its last, in which case it is ``failed`` and
      P_t -= 1.0.
    - ``fail``: the task is ``failed`` at once and P_t -= 1.0 (seed section 4's failure rule).
    """

    requeue = "requeue"
    fail = "fail"


def resolve_expired_lease(
    policy: CrashPolicy, attempts: int, max_attempts: int, pheromone: float
) -> tuple[TaskStatus, float]:
    """(new status, new P_t) of a task whose claim (attempt number ``attempts``) lost its lease."""
    if policy is CrashPolicy.requeue and attempts < max_attempts:
        return TaskStatus.pending, pheromone
    return TaskStatus.failed, pheromone_on_failure(pheromone)
