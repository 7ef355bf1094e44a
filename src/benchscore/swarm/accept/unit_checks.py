"""The swarm's bundled unit checks: real checks of its formulas, run by ``benchscore demo`` for A02.

A02 (seed section 13) needs a JUnit report of the swarm's unit tests. The repository's tests
(``pytest tests/swarm --junitxml FILE``) are not installed with the package, so the demo runs these
checks instead and writes their JUnit XML report, which ``swarm accept --junit`` reads like any
other: each check calls the swarm's own functions and compares them with values derived by hand
from the seed's formulas; a check that raises is a failure (``AssertionError``) or an error (anything
else), recorded with its message. Nothing is written as passed that did not run and pass.

The report holds no time or timestamp, so the same code gives the same bytes (the demo's outputs are
byte-identical for the same inputs).
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree as ET

#: the JUnit classname of every check here (``swarm accept`` counts these as swarm test cases)
CLASSNAME = "benchscore.swarm.unit_checks"


def _require(condition: bool) -> None:
    """An assertion that ``python -O`` does not strip (a check must never pass by not running)."""
    if not condition:
        raise AssertionError("a condition of this check does not hold (see the traceback)")


def check_evaporation_and_vote_increment() -> None:
    """Seed section 7: ``S_j <- evaporation * S_j``; a vote adds ``max(0, confidence) * weight``."""
    from ..consensus import evaporate, vote_increment

    _require(evaporate({"a": 2.0, "b": 0.0}, 0.85) == {"a": 1.7, "b": 0.0})
    _require(vote_increment(0.9, 1.2) == 0.9 * 1.2)
    _require(vote_increment(-0.5, 1.0) == 0.0)  # a negative confidence adds nothing


def check_leader_share_and_margin() -> None:
    """Seed section 7: the leader's share of the positive scores and its margin over the second."""
    from ..consensus import consensus_converged, leader_stats

    leader, share, margin = leader_stats({"approve": 1.6, "more": 1.08, "reject": 0.0})
    _require(leader == "approve" and math.isclose(share, 1.6 / 2.68) and math.isclose(margin, 0.52))
    _require(not consensus_converged(share, margin, threshold=0.7, min_margin=0.2))  # share 0.597 < 0.7
    _require(consensus_converged(0.7, 0.2, threshold=0.7, min_margin=0.2))  # both bounds are inclusive
    _require(leader_stats({"a": 0.0, "b": 0.0}) == (None, 0.0, 0.0))  # no positive score: no leader


def check_vote_quorum() -> None:
    """A round converges only when the votes that named a candidate are a strict majority."""
    from ..consensus import vote_quorum

    _require(vote_quorum(2, 3) and not vote_quorum(1, 2) and not vote_quorum(0, 0))


def check_fusion_filters_and_weights() -> None:
    """Seed section 6: candidates under min_score are dropped, F = sum(score^2) / sum(score), lines merged once."""
    from ..fusion import Candidate, fuse_candidate_outputs

    fused = fuse_candidate_outputs([Candidate(id="q", text="a\nb", score=0.9),
                                    Candidate(id="c", text="b\nc", score=0.6),
                                    Candidate(id="noise", text="LOW", score=0.1)], min_score=0.5)
    _require(fused.sources == ("q", "c") and fused.filtered_out == ("noise",))
    _require(math.isclose(fused.score, (0.81 + 0.36) / 1.5))
    _require(fused.text.splitlines() == ["a", "b", "c"])


def check_l02_budget_formulas() -> None:
    """Seed section 11: task_count, demand, minutes and utilization; a window never exceeds target_tpm."""
    from ..budget import budget_utilization, first_fitting_window, l02_derivation, spread_overshoot

    _require(l02_derivation(3000, 70) == {"task_count": 42, "total_token_demand": 2940, "simulated_minutes": 1})
    _require(budget_utilization(2940, 1, 3000) == 0.98)
    _require(first_fitting_window({0: 2980}, 0, 50, 3000) == 1)  # 2980 + 50 > 3000: the next minute
    _require(spread_overshoot({0: 2990}, 0, 25, 3000) == [(0, 10), (1, 15)])


def check_expired_lease_policy() -> None:
    """A lost lease requeues the task while attempts remain (requeue policy), otherwise fails it."""
    from ..lease import CrashPolicy, resolve_expired_lease
    from ..tasks import TaskStatus

    _require(resolve_expired_lease(CrashPolicy.requeue, 1, 3, 0.7) == (TaskStatus.pending, 0.7))
    status, pheromone = resolve_expired_lease(CrashPolicy.requeue, 3, 3, 0.7)
    _require(status is TaskStatus.failed and pheromone < 0.7)  # a failure lowers the task's pheromone


def check_output_scoring() -> None:
    """Seed section 3: a risky output scores 0.12; a gate failure stays below a pass; the final step 1.0."""
    from ..scoring import score_output

    _require(score_output(1.0, quality_pass=True, risk=True, step_index=0, final_step=False) == 0.12)
    passed = score_output(0.8, quality_pass=True, risk=False, step_index=1, final_step=False)
    failed = score_output(0.8, quality_pass=False, risk=False, step_index=1, final_step=False)
    _require(failed < passed)
    _require(score_output(0.8, quality_pass=True, risk=False, step_index=6, final_step=True) == 1.0)


CHECKS: tuple[Callable[[], None], ...] = (
    check_evaporation_and_vote_increment, check_leader_share_and_margin, check_vote_quorum,
    check_fusion_filters_and_weights, check_l02_budget_formulas, check_expired_lease_policy, check_output_scoring,
)


def run_unit_checks(checks: tuple[Callable[[], None], ...] | None = None) -> bytes:
    """Run ``checks`` (default: :data:`CHECKS`) now and return their JUnit XML report (one test case
    each, failures and errors with their message and traceback)."""
    checks = CHECKS if checks is None else checks
    suite = ET.Element("testsuite", name=CLASSNAME)
    failures = errors = 0
    for check in checks:
        case = ET.SubElement(suite, "testcase", classname=CLASSNAME, name=check.__name__)
        try:
            check()
        except AssertionError as exc:
            failures += 1
            ET.SubElement(case, "failure", message=str(exc) or "assertion failed").text = traceback.format_exc()
        except Exception as exc:  # noqa: BLE001 - a check that crashes is an error of the report, not of the demo
            errors += 1
            ET.SubElement(case, "error", message=f"{type(exc).__name__}: {exc}").text = traceback.format_exc()
    suite.set("tests", str(len(checks)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", "0")
    root = ET.Element("testsuites")
    root.append(suite)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root) + b"\n"


def write_unit_checks(path: Path) -> Path:
    """Run the checks and write their JUnit XML report to ``path`` (atomically); returns ``path``."""
    from benchscore.common.atomic import atomic_write_bytes

    atomic_write_bytes(path, run_unit_checks())
    return path
