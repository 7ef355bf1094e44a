"""Retry with exponential backoff for services that can drop out mid-run (PostgreSQL, SQLite, Redis).

Two budgets: a number of retries (the Redis mirror, which is not the source of truth, gives up
after a few and fills the gap from the store later), or an outage length (``max_outage``: the
stores, PostgreSQL and SQLite, are retried until they have been unavailable for that many seconds
in a row, :data:`~benchscore.swarm.defaults.DEFAULT_MAX_OUTAGE` by default, ``--max-outage``).
Every retry is recorded in a :class:`ServiceLog` so a run reports it; when the budget is used up,
:class:`~benchscore.common.errors.ServiceUnavailable` is raised (one line, exit 2): a service that
stays down stops the run loudly, never silently.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from benchscore.common.backoff import backoff_delay as _backoff_delay
from benchscore.common.errors import ServiceUnavailable

T = TypeVar("T")

DEFAULT_RETRIES = 6
DEFAULT_BASE_DELAY = 0.05
DEFAULT_MAX_DELAY = 2.0
#: the stores (PostgreSQL, SQLite) are retried at least once a second during an outage, so a run resumes
#: within about a second of the store coming back
STORE_MAX_DELAY = 1.0


@dataclass
class ServiceLog:
    """What went wrong with which service during a run, and what the retries did about it."""

    retries: dict[str, int] = field(default_factory=dict)
    incidents: list[dict] = field(default_factory=list)

    def record(self, service: str, error: BaseException, attempt: int, delay: float) -> None:
        self.retries[service] = self.retries.get(service, 0) + 1
        if len(self.incidents) < 100:
            self.incidents.append(
                {"service": service, "attempt": attempt, "delay_s": round(delay, 3), "error": _one_line(error)}
            )

    def as_dict(self) -> dict:
        return {"retries": dict(sorted(self.retries.items())), "incidents": list(self.incidents)}


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:300]


def backoff_delay(attempt: int, base: float = DEFAULT_BASE_DELAY, cap: float = DEFAULT_MAX_DELAY) -> float:
    """Delay before retry number ``attempt`` (1-based), with the swarm's defaults (common.backoff)."""
    return _backoff_delay(attempt, base, cap)


def with_retry(
    fn: Callable[[], T],
    *,
    service: str,
    errors: tuple[type[BaseException], ...],
    log: ServiceLog,
    on_error: Callable[[BaseException], None] | None = None,
    retries: int = DEFAULT_RETRIES,
    base: float = DEFAULT_BASE_DELAY,
    what: str = "",
    max_outage: float | None = None,
    cap: float = DEFAULT_MAX_DELAY,
) -> T:
    """Call ``fn``; on one of ``errors`` call ``on_error`` (e.g. drop the broken connection), wait,
    try again: up to ``retries`` times, or, with ``max_outage``, until the calls have been failing
    for ``max_outage`` seconds (counted from the start of the first failed call).

    ``fn`` itself must do whatever a retry needs (reconnect, ...), so that a failure to recover is
    just one more failed call of the same budget, never an error that escapes the loop."""
    attempt = 0
    first_failure: float | None = None
    while True:
        started = time.monotonic()
        try:
            return fn()
        except errors as exc:
            attempt += 1
            if first_failure is None:
                first_failure = started
            down = time.monotonic() - first_failure
            label = f"{service}{' ' + what if what else ''}"
            if max_outage is None and attempt > retries:
                raise ServiceUnavailable(
                    f"{label}: still unreachable after {retries} retries: {_one_line(exc)}") from None
            if max_outage is not None and down >= max_outage:
                raise ServiceUnavailable(
                    f"{label}: unavailable for {down:.1f} s, longer than the outage limit of {max_outage:g} s "
                    f"(--max-outage): {_one_line(exc)}") from None
            delay = backoff_delay(attempt, base, cap)
            if max_outage is not None:
                delay = max(0.0, min(delay, max_outage - down))
            log.record(service, exc, attempt, delay)
            if on_error is not None:
                on_error(exc)
            time.sleep(delay)
