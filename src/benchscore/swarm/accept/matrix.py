"""The acceptance matrix (seed sections 12 and 13): every check with its evidence, the compliance
score, and ``MINIMAL_CLOSED_LOOP_PASS`` / ``LOCAL_SCALE_AND_BUDGET_PASS`` computed from it.

Closed-loop items of seed section 13, as this code base evaluates them:

- ``A01_static_compile``: every ``.py`` file of ``benchscore.swarm`` compiles (``py_compile``).
- ``A02_unit_and_deterministic_scenarios``: the seed's worked examples recomputed now (section
  12: all ones -> 100/100; section 11: 3000 TPM / 50 -> 60 tasks, 1 minute; section 3's score
  branches) **and** a pytest JUnit report of ``tests/swarm`` (``--junit``) with at least one
  ``tests.swarm.*`` test case and no failure or error. Without a report A02 is FAIL ("not supplied").
- ``A03_swarm_behavior_acceptance``: the ledger audit of every run of this acceptance (S09's
  scaled runs, S10's run) says PASS (no duplicate claim, every task accounted for, consistent
  pheromone history).
- ``A04_swarm_vs_traditional_benchmark``: :mod:`.a04` on its default workload.
- ``A05_consensus_convergence_acceptance``: every consensus that ran converged as required
  (S09's questioning consensus; S07's quality consensus when S07 ran).
- ``A06`` is S09, ``A07`` is S10; S07 and S08 count only when ``live``.
"""

from __future__ import annotations

import py_compile
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from benchscore.common.errors import BadInput
from benchscore.common.models import Format
from benchscore.common.readers import read_bytes

from ..compliance import FEATURES, LOCAL, SCENARIOS, AppliedCap, minimal_compliance_score
from ..consensus import ConsensusResult
from .a04 import A04_CONDITION
from .evidence import Check, ScenarioResult, all_passed, evidence_line, one_line, scenario_verdict

SWARM_PACKAGE = Path(__file__).resolve().parents[1]
FEATURE_CHECKS = {
    "F01": "F01_decentralization", "F02": "F02_self_organization", "F03": "F03_emergence",
    "F04": "F04_robustness", "F05": "F05_scalability", "F06": "F06_implicit_collaboration",
}


class ScenarioSummary(Format):
    mode: str = Field(description="live (the gateway given by --base-url), replay (the built-in test server), "
                                  "local (no model) or not_run")
    verdict: str = Field(description="PASS or FAIL: the scenario's one verdict (S07/S08 are PASS only live)")
    verdict_reason: str = Field(default="", description="empty for a PASS; for a FAIL the reason that decides it")
    reason: str = Field(default="", description="why the scenario is replay or not_run")
    checks: dict[str, str] = Field(default_factory=dict, description="check name -> PASS/FAIL")
    failures: dict[str, str] = Field(default_factory=dict,
                                     description="failed check name (or 'scenario') -> its one-line reason")


class MatrixCheck(Format):
    id: str = Field(description="SCENARIO.check")
    verdict: str
    mode: str
    condition: str = Field(default="", description="the rule the check tests")
    reason: str = Field(default="", description="empty for a PASS; for a FAIL: condition, failing parts, evidence")
    evidence: dict[str, Any]


class AcceptanceMatrix(Format):
    """The output of ``benchscore swarm accept all`` (seed sections 12-13)."""

    matrix_id: str = "swarm.acceptance"
    scenarios: dict[str, ScenarioSummary]
    closed_loop: dict[str, str] = Field(description="the items of MINIMAL_CLOSED_LOOP_PASS -> PASS/FAIL")
    compliance_inputs: dict[str, int] = Field(description="F01-F06, S07, S08, S09, L01, L02 as 0/1")
    compliance_input_reasons: dict[str, str]
    swarmness_score: float
    raw_minimal_compliance_score: int
    minimal_compliance_score: float
    grade: str
    grade_label: str
    caps_applied: tuple[AppliedCap, ...]
    MINIMAL_CLOSED_LOOP_PASS: bool
    LOCAL_SCALE_AND_BUDGET_PASS: bool
    not_live: tuple[str, ...] = Field(description="scenarios that ran in replay or did not run, with why")
    checks: tuple[MatrixCheck, ...]
    consensus: dict[str, ConsensusResult] = Field(
        default_factory=dict, description="scenario -> its consensus run: preset, threshold, min_margin, "
                                          "evaporation and every round's scores, leader_share and margin")
    details: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] | None = None


def not_run(scenario: str, reason: str) -> ScenarioResult:
    return ScenarioResult(scenario=scenario, mode="not_run", passed=False, reason=reason)


def a01_static_compile(package: Path = SWARM_PACKAGE) -> ScenarioResult:
    """Compile every ``.py`` file of the swarm package into a scratch folder."""
    files = sorted(package.rglob("*.py"))
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, f in enumerate(files):
            try:
                py_compile.compile(str(f), cfile=str(Path(tmp) / f"{i}.pyc"), doraise=True)
            except py_compile.PyCompileError as exc:
                errors.append(f"{f.name}: {exc.msg}")
    check = Check(name="static_compile", passed=bool(files) and not errors,
                  condition="every .py file of benchscore.swarm compiles", evidence={"files": len(files), "errors": errors[:10]})
    return ScenarioResult(scenario="A01_static_compile", mode="local", passed=check.passed, checks=(check,))


def deterministic_examples() -> Check:
    """Seed worked examples recomputed now (sections 3, 11, 12)."""
    from ..budget import l02_derivation
    from ..scoring import score_output

    ones = minimal_compliance_score({k: 1 for k in FEATURES + SCENARIOS + LOCAL})
    l02 = l02_derivation(3000, 50)
    parts = {
        "section12_all_ones_100_100": ones.swarmness_score == 100 and ones.minimal_compliance_score == 100,
        "section11_l02_derivation": (l02["task_count"], l02["total_token_demand"], l02["simulated_minutes"])
        == (60, 3000, 1),
        "section3_risk_0_12": score_output(1.0, quality_pass=True, risk=True, step_index=0, final_step=True) == 0.12,
        "section3_final_step_1_0": score_output(0.8, quality_pass=True, risk=False, step_index=6,
                                                final_step=True) == 1.0,
    }
    return Check(name="deterministic_scenarios", passed=all(parts.values()),
                 condition="the seed's worked examples (sections 3, 11, 12) recompute to the seed's values",
                 evidence={"conditions": parts})


#: JUnit classnames of the swarm's tests: pytest's for a test under tests/swarm, and the bundled unit checks
#: (:mod:`benchscore.swarm.accept.unit_checks`, which ``benchscore demo`` runs)
SWARM_TEST_PREFIXES = ("tests.swarm.", "benchscore.swarm.unit_checks")
JUNIT_CONDITION = ("a JUnit report (--junit) with >= 1 swarm test case (pytest tests/swarm, or the bundled "
                   "benchscore.swarm.unit_checks), no failure, no error")


def junit_check(path: Path | None) -> Check:
    """A JUnit XML report of the swarm's tests: at least one test case whose classname is under
    ``tests.swarm.`` (pytest) or ``benchscore.swarm.unit_checks`` (the bundled checks), no failure, no
    error (a clean report of another suite is not evidence)."""
    if path is None:
        return Check(name="unit_tests_report", passed=False, condition=JUNIT_CONDITION,
                     evidence={"reason": "not supplied: run pytest tests/swarm --junitxml FILE and pass --junit FILE "
                                         "(benchscore demo runs the bundled unit checks and passes their report)"})
    data = read_bytes(path)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise BadInput(f"not a JUnit XML report: {exc}", source=path) from None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if not suites:
        raise BadInput("no <testsuite> element", source=path, field="testsuite")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        for k in totals:
            try:
                totals[k] += int(s.get(k, "0"))
            except ValueError:
                raise BadInput(f"attribute {k} is not an integer", source=path, field=k) from None
    swarm_cases = sum(1 for s in suites for tc in s.iter("testcase")
                      if (tc.get("classname") or "").startswith(SWARM_TEST_PREFIXES))
    passed = totals["tests"] > 0 and swarm_cases > 0 and totals["failures"] == 0 and totals["errors"] == 0
    return Check(name="unit_tests_report", passed=passed, condition=JUNIT_CONDITION,
                 evidence={**totals, "swarm_testcases": swarm_cases, "report": path.name})


def a02(junit: Path | None) -> ScenarioResult:
    checks = [deterministic_examples(), junit_check(junit)]
    return ScenarioResult(scenario="A02_unit_and_deterministic_scenarios", mode="local", passed=all_passed(checks),
                          checks=tuple(checks))


def a03(s09: ScenarioResult, s10: ScenarioResult) -> ScenarioResult:
    verdicts: dict[str, str] = {}
    if s09.checks:
        for r in s09.checks[0].evidence.get("runs", []):
            verdicts[r["run_id"]] = r.get("audit_verdict", "")
    if "run_id" in s10.details:
        verdicts[s10.details["run_id"]] = s10.details.get("audit_verdict", "")
    check = Check(name="ledger_audits_pass", passed=bool(verdicts) and all(v == "PASS" for v in verdicts.values()),
                  condition="the ledger audit of every acceptance run (S09 scaled runs, S10) is PASS", evidence={"audits": verdicts})
    return ScenarioResult(scenario="A03_swarm_behavior_acceptance", mode="local", passed=check.passed, checks=(check,))


def a04_scenario(result: Any | None) -> ScenarioResult:
    if result is None:
        return not_run("A04_swarm_vs_traditional_benchmark", "not run")
    check = Check(name="swarm_vs_fifo", passed=result.A04_PASS, condition=A04_CONDITION, evidence={
        "swarm": result.swarm.model_dump(), "fifo": result.fifo.model_dump(), "workload": result.workload})
    return ScenarioResult(scenario="A04_swarm_vs_traditional_benchmark", mode="local", passed=check.passed,
                          checks=(check,))


def a05(s07: ScenarioResult, s09: ScenarioResult) -> ScenarioResult:
    checks = [c for c in s09.checks if c.name == "questioning_consensus_pass"]
    checks += [c for c in s07.checks if c.name == "multi_round_quality_consensus_accepts_chain"]
    return ScenarioResult(scenario="A05_consensus_convergence_acceptance", mode="local", passed=all_passed(checks),
                          checks=tuple(checks))


def compliance_inputs(results: Mapping[str, ScenarioResult]) -> tuple[dict[str, int], dict[str, str]]:
    """F01-F06, S07, S08, S09, L01, L02 as 0/1 with the reason of each; S07/S08 need ``live``."""
    bits: dict[str, int] = {}
    why: dict[str, str] = {}
    s10 = results["S10"]
    by_name = {c.name: c for c in s10.checks}
    for f, name in FEATURE_CHECKS.items():
        c = by_name.get(name)
        bits[f] = int(bool(c and c.passed))
        why[f] = "S10 " + (("PASS" if c.passed else "FAIL") if c else f"not run ({s10.reason})")
    for s in ("S07", "S08"):
        r = results[s]
        verdict, reason = scenario_verdict(r)
        bits[s] = int(verdict == "PASS")
        why[s] = "PASS in live mode" if bits[s] else f"FAIL {reason}"
    for s in ("S09", "L01", "L02"):
        r = results[s]
        bits[s] = int(r.passed)
        why[s] = ("PASS" if r.passed else "FAIL") + (f" ({r.mode}: {r.reason})" if r.mode == "not_run" else "")
    return bits, why


def build_matrix(results: Mapping[str, ScenarioResult], closed_loop: Mapping[str, ScenarioResult]) -> AcceptanceMatrix:
    """The matrix: scenarios, closed-loop items, every check, the score and the two verdicts."""
    bits, why = compliance_inputs(results)
    score = minimal_compliance_score(bits)
    checks = []
    for group in (results, closed_loop):
        for key, r in group.items():
            if not r.checks:
                checks.append({"id": f"{key}", "verdict": "FAIL", "mode": r.mode, "condition": "the scenario ran",
                               "reason": r.failures["scenario"], "evidence": {"reason": r.reason}})
            for c in r.checks:
                checks.append({"id": f"{key}.{c.name}", "verdict": c.verdict, "mode": r.mode, "condition": c.condition,
                               "reason": c.reason, "evidence": c.evidence})
    minimal_items = {**{k: scenario_verdict(v)[0] == "PASS" for k, v in closed_loop.items()},
                     "S07_live_external_github_code_reasoning": bool(bits["S07"]),
                     "S08_model_io_report_audit": bool(bits["S08"]),
                     "S09_next_boundary_minimal_acceptance": scenario_verdict(results["S09"])[0] == "PASS",
                     "S10_swarm_six_characteristics_acceptance": scenario_verdict(results["S10"])[0] == "PASS"}
    minimal = all(minimal_items.values())
    local = minimal and results["L01"].passed and results["L02"].passed
    not_live = [f"{k}: {r.mode}" + (f" ({r.reason})" if r.reason else "")
                for k, r in results.items() if r.mode in ("replay", "not_run")]
    return AcceptanceMatrix(
        scenarios={k: ScenarioSummary(mode=r.mode, verdict=scenario_verdict(r)[0], verdict_reason=scenario_verdict(r)[1],
                                      reason=r.reason,
                                      checks={c.name: c.verdict for c in r.checks}, failures=r.failures)
                   for k, r in results.items()},
        closed_loop={k: "PASS" if v else "FAIL" for k, v in minimal_items.items()},
        compliance_inputs=bits, compliance_input_reasons=why, swarmness_score=score.swarmness_score,
        raw_minimal_compliance_score=score.raw_minimal_compliance_score,
        minimal_compliance_score=score.minimal_compliance_score, grade=score.grade, grade_label=score.grade_label,
        caps_applied=score.caps_applied, MINIMAL_CLOSED_LOOP_PASS=minimal, LOCAL_SCALE_AND_BUDGET_PASS=local,
        not_live=tuple(not_live), checks=tuple(MatrixCheck(**c) for c in checks),
        consensus={k: r.consensus for k, r in results.items() if r.consensus is not None},
        details={k: r.details for k, r in {**results, **closed_loop}.items() if r.details},
    )


def render_markdown(m: AcceptanceMatrix) -> str:
    """The matrix as Markdown: scenarios with their mode, compliance, closed loop, every failure
    with its reason, every consensus round, every check with its full evidence."""
    matrix = m.model_dump()
    out = ["# Swarm acceptance matrix", "",
           f"- swarmness_score: **{matrix['swarmness_score']:.1f}**",
           f"- minimal_compliance_score: **{matrix['minimal_compliance_score']:g}** "
           f"(raw {matrix['raw_minimal_compliance_score']}), grade **{matrix['grade']}** ({matrix['grade_label']})",
           "- caps applied: " + (", ".join(f"{c['name']} (cap {c['cap']}, failed {','.join(c['failed_items'])}, "
                                          f"lowered {c['lowered_score']})" for c in matrix["caps_applied"]) or "none"),
           f"- MINIMAL_CLOSED_LOOP_PASS: **{matrix['MINIMAL_CLOSED_LOOP_PASS']}**",
           f"- LOCAL_SCALE_AND_BUDGET_PASS: **{matrix['LOCAL_SCALE_AND_BUDGET_PASS']}**", ""]
    if matrix["not_live"]:
        out += ["**Not live / not run:**", ""] + [f"- {x}" for x in matrix["not_live"]] + [""]
    out += ["## Scenarios", "", "| scenario | mode | verdict | reason |", "| --- | --- | --- | --- |"]
    out += [f"| {k} | **{v['mode']}** | {v['verdict']} | {_cell(v['verdict_reason'] or v['reason'])} |"
            for k, v in matrix["scenarios"].items()]
    out += ["", "## Compliance inputs", "", "| item | value | why |", "| --- | ---: | --- |"]
    for k, v in matrix["compliance_inputs"].items():
        out.append(f"| {k} | {v} | {matrix['compliance_input_reasons'][k]} |")
    out += ["", "## Section 13 closed loop", "", "| item | verdict |", "| --- | --- |"]
    out += [f"| {k} | {v} |" for k, v in matrix["closed_loop"].items()]
    failed = [c for c in matrix["checks"] if c["verdict"] == "FAIL"]
    if failed:
        out += ["", "## Failures", "", "| check | mode | reason |", "| --- | --- | --- |"]
        out += [f"| {c['id']} | {c['mode']} | {_cell(c['reason'])} |" for c in failed]
    for key, c in matrix["consensus"].items():
        out += ["", f"## {key} consensus ({c['preset']}: threshold {c['threshold']}, min_margin {c['min_margin']}, "
                    f"evaporation {c['evaporation']}, min_rounds {c['min_rounds']})", "",
                "| round | leader | leader_share | margin | converged | scores |", "| ---: | --- | ---: | ---: | --- | --- |"]
        out += [f"| {r['round']} | {r['leader']} | {r['leader_share']!r} | {r['margin']!r} | {r['converged']} | "
                f"{_cell(one_line(r['scores']))} |" for r in c["rounds"]]
    out += ["", "## Every check", "", "| check | mode | verdict | condition | evidence |", "| --- | --- | --- | --- | --- |"]
    for c in matrix["checks"]:
        out.append(f"| {c['id']} | {c['mode']} | {c['verdict']} | {_cell(c['condition'])} | "
                   f"{_cell(evidence_line(c['evidence']))} |")
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """A Markdown table cell: no pipe, no newline."""
    return text.replace("|", "/").replace("\n", " ")
