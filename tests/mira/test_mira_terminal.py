"""Issue 10 item 2: the terminal output of every mira command tells the whole truth.

Every count and metric of the JSON a command writes appears in what it prints, in plain aligned tables
when piped (CliRunner's stdout is not a terminal), never truncated; ``--quiet`` prints nothing.
Tables are separated by a blank line: a title line, a header line of JSON key names, then rows whose
cells are separated by at least two spaces. Floats are printed exactly as in the JSON (shortest repr),
booleans as yes/no, null as '-'.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from mira_helpers import DATA, run, write_json, write_jsonl

from benchscore.common.terminal import PERCENT_METRICS, fmt
from benchscore.common.testserver import OpenAITestServer

EX = Path(__file__).resolve().parents[2] / "examples" / "mira"


def cell(value: Any, name: str = "") -> str:
    """What the terminal shows for a JSON value: floats rounded to 4 significant digits, percentages
    (Reliability, Pass@1, Stable@3, Complete@3) with %."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float) and name in PERCENT_METRICS:
        return f"{fmt(value)} %"
    if isinstance(value, float):
        return fmt(value)
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "-"
    return str(value)


def tables(stdout: str) -> dict[str, list[dict[str, str]]]:
    """Title -> rows (each a dict header -> cell) of every table printed."""
    out: dict[str, list[dict[str, str]]] = {}
    for block in stdout.strip().split("\n\n"):
        lines = block.splitlines()
        if len(lines) < 2:
            continue
        header = re.split(r" {2,}", lines[1].strip())
        rows = []
        for line in lines[2:]:
            cells = re.split(r" {2,}", line.strip())
            assert len(cells) == len(header), (lines[0], line)
            rows.append(dict(zip(header, cells, strict=True)))
        out[lines[0]] = rows
    return out


def by(rows: list[dict[str, str]], key: str) -> dict[str, dict[str, str]]:
    return {r[key]: r for r in rows}


def _check_metrics(rows: list[dict[str, str]], metrics: dict[str, Any]) -> None:
    got = {r["metric"]: r["value"] for r in rows}
    assert got == {name: cell(value, name) for name, value in metrics.items()}


def _check_cases(t: dict[str, list[dict[str, str]]], cases: list[dict[str, Any]], values_of) -> None:
    for scoring_class in ("automated_scored", "diagnostic_untimed"):
        mine = [c for c in cases if c["scoring_class"] == scoring_class]
        if not mine:
            continue
        rows = by(t[f"cases ({scoring_class})"], "case_id")
        assert set(rows) == {c["case_id"] for c in mine}
        for c in mine:
            row = rows[c["case_id"]]
            for key in ("status", "planned_repetitions", "valid_comparable_repetition_count", "beyond_planned_count"):
                assert row[key] == cell(c[key]), (c["case_id"], key)
            for name, value in values_of(c).items():
                assert row[name] == cell(value, name), (c["case_id"], name)


def _check_deviations(t, deviations) -> None:
    rows = by(t["deviations"], "id")
    for d in deviations:
        assert rows[d["id"]]["text"] == d["text"] and rows[d["id"]]["affects"] == cell(d.get("affects", []))


@pytest.mark.parametrize("reps", ["repetitions.jsonl", "repetitions_incomplete.jsonl"])
def test_score_prints_every_number_of_its_json(tmp_path: Path, reps: str) -> None:
    res = run("score", "--contract", DATA / "contract.json", "--repetitions", DATA / reps,
              "--deviations", DATA / "deviations.json", "--output", tmp_path / "s.json")
    out = orjson.loads((tmp_path / "s.json").read_bytes())
    assert res.exit_code == (0 if out["status"] == "complete" else 1), res.output  # 1: incomplete, still written
    t = tables(res.stdout)
    head = by(t[f"mira score: {out['benchmark_id']} {out['contract_version']}"], "field")
    assert head["status"]["value"] == out["status"]
    assert head["infrastructure_invalid_count"]["value"] == str(out["infrastructure_invalid_count"]["value"])
    assert head["contract_sha256"]["value"] == out["contract_sha256"]
    _check_metrics(t["overall (automated_scored)"], {k: m["value"] for k, m in out["overall"].items()})
    _check_metrics(t["diagnostic_untimed"], {k: m["value"] for k, m in out["diagnostic_untimed"].items()})
    # issue 16: every interval beside its number (cases are the unit), null ones with their reason
    intervals = {(r["aggregate"], r["metric"]): r for r in t["95 % intervals (ci95: cases are the unit; docs/statistics.md)"]}
    expected = {(a, k): m for a in ("overall", "diagnostic_untimed") for k, m in out[a].items() if "ci_method" in m}
    assert set(intervals) == set(expected) >= {("overall", n) for n in (
        "task_success", "reliability", "pass_at_1", "stable_at_3", "complete_at_3")}
    for key, m in expected.items():
        low, high = m["ci95"] or (None, None)
        assert intervals[key] == {"aggregate": key[0], "metric": key[1], "value": cell(m["value"], key[1]),
                                  "ci95_low": cell(low, key[1]), "ci95_high": cell(high, key[1]),
                                  "ci_method": m["ci_method"],
                                  "ci_reason": cell(m.get("ci_reason"))}
    _check_cases(t, out["cases"], lambda c: {k: m["value"] for k, m in c["metrics"].items()})
    rows = by(t["repetitions"], "id")
    assert set(rows) == {r["id"] for r in out["repetitions"]}
    for r in out["repetitions"]:
        for key in ("execution_mode", "comparability", "status", "raw_success", "timing_band", "timing_credit",
                    "official_task_success", "untimed_task_success", "elapsed_s", "soft_timeout",
                    "needed_task_solving_help", "hard_fail_rules", "derivation"):
            assert rows[r["id"]][key] == cell(r[key]), (r["id"], key)
        violations = [f"{v['kind']} ({v['severity']})" for v in r["governance_violations"]]
        assert rows[r["id"]]["governance_violations"] == cell(violations)
    if out["missing"]:
        rows = by(t["missing"], "case_id")
        for m in out["missing"]:
            for key, value in m.items():
                assert rows[m["case_id"]][key] == cell(value), key
    else:
        assert "missing" not in t
    _check_deviations(t, out["deviations"])
    assert res.stdout.rstrip().endswith(f"wrote {tmp_path / 's.json'}")


def test_quiet_prints_nothing(tmp_path: Path) -> None:
    res = run("score", "--contract", DATA / "contract.json", "--repetitions", DATA / "repetitions_incomplete.jsonl",
              "--output", tmp_path / "s.json", "--quiet")
    assert res.exit_code == 1 and res.stdout == "" and res.stderr == ""  # incomplete: exit 1, silently
    res = run("project", "--score", tmp_path / "s.json", "--output", tmp_path / "p.json", "--quiet")
    assert res.exit_code == 1 and res.stdout == "" and res.stderr == ""
    res = run("calibrate", "--contract", DATA / "contract.json", "--observations", DATA / "observations.jsonl",
              "--output", tmp_path / "c.json", "--quiet")
    assert res.exit_code == 0 and res.stdout == "" and res.stderr == ""
    res = run("judge-packets", "--contract", EX / "contract.json", "--repetitions", EX / "repetitions_unjudged.jsonl",
              "--output-dir", tmp_path / "packets", "--quiet")
    assert res.exit_code == 0 and res.stdout == "" and res.stderr == ""


def test_project_prints_every_number_of_its_json(tmp_path: Path) -> None:
    assert run("score", "--contract", DATA / "contract.json", "--repetitions", DATA / "repetitions.jsonl",
               "--deviations", DATA / "deviations.json", "--output", tmp_path / "s.json", "--quiet").exit_code == 0
    res = run("project", "--score", tmp_path / "s.json", "--output", tmp_path / "p.json")
    assert res.exit_code == 0, res.output
    out = orjson.loads((tmp_path / "p.json").read_bytes())
    t = tables(res.stdout)
    head = by(t[f"mira public projection: {out['benchmark_id']} {out['contract_version']}"], "field")
    assert head["status"]["value"] == out["status"]
    _check_metrics(t["overall (automated_scored)"], out["overall"])
    _check_metrics(t["diagnostic_untimed"], out["diagnostic_untimed"])
    _check_cases(t, out["cases"], lambda c: c["results"])
    rows = by(t["repetitions"], "id")
    for c in out["cases"]:
        for r in c["repetitions"]:
            row = rows[f"{c['case_id']}#{r['repetition']}"]
            for key, value in r.items():
                if key != "repetition":
                    assert row[key] == cell(value), key
    _check_deviations(t, out["deviations"])


def test_calibrate_prints_every_case(tmp_path: Path) -> None:
    res = run("calibrate", "--contract", DATA / "contract.json", "--observations", DATA / "observations.jsonl",
              "--output", tmp_path / "c.json")
    assert res.exit_code == 0, res.output
    out = orjson.loads((tmp_path / "c.json").read_bytes())
    rows = by(tables(res.stdout)["calibration (mira-tsoft/v1)"], "case_id")
    for c in out["cases"]:
        row = rows[c["case_id"]]
        assert row["scoring_class"] == c["scoring_class"] and row["t_soft_s"] == cell(c["t_soft_s"])
        assert row["observations"] == str(c["calibration"]["observations"]) and row["note"] == c["calibration"]["note"]


def test_judge_prints_verdict_counts_and_every_judge_failed_reason(tmp_path: Path) -> None:
    contract = orjson.loads((EX / "contract.json").read_bytes())
    c = write_json(tmp_path / "c.json", contract)
    r = write_jsonl(tmp_path / "r.jsonl", [orjson.loads(x) for x in (EX / "repetitions_unjudged.jsonl").read_bytes()
                                           .splitlines()])
    assert run("judge-packets", "--contract", c, "--repetitions", r, "--output-dir", tmp_path / "p").exit_code == 0
    answers = iter(["pass", "fail.", "maybe", "pass"])

    def responder(model, messages):
        return next(answers, "fail")

    with OpenAITestServer(models=["m"], responder=responder) as srv:
        srv.fail_next(1, status=500, retry_after=0)
        res = run("judge", "--packets", tmp_path / "p", "--base-url", srv.base_url, "--model", "m",
                  "--max-retries", "0", "--output", tmp_path / "v.json", "--constraint", "none")
    assert res.exit_code == 1
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    t = tables(res.stdout)
    counts = {row["verdict"]: row["count"] for row in t["mira judge: verdicts"]}
    for verdict in ("pass", "fail", "judge_failed"):
        assert counts[verdict] == str(sum(v["verdict"] == verdict for v in out["verdicts"]))
    assert counts["judge_failed"] == "2"
    rows = by(t["packets"], "packet_id")
    for v in out["verdicts"]:
        row = rows[v["packet_id"]]
        assert row["verdict"] == v["verdict"] and row["reason"] == cell(v["reason"])
        assert row["answer"] == (repr(v["answer"]) if v["answer"] is not None else "-")
        for key in ("status", "latency_s", "tokens_in", "tokens_out", "attempts"):
            assert row[key] == cell(v["call"][key]), key
    assert "2 of 8 packets are judge_failed" in res.stderr


def test_a_table_too_wide_for_the_terminal_is_printed_plain_not_cut(monkeypatch, capsys) -> None:
    """On a terminal, rich would shorten the cells of a table wider than the window with '…'; such a
    table is printed as the plain lines instead (the terminal wraps them, nothing is cut)."""
    import sys

    from benchscore.common.terminal import plain_table
    from benchscore.mira import terminal

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    columns = ["case_id", "valid_comparable_repetition_count", "beyond_planned_count", "needed_task_solving_help"]
    rows = [["ADV-01-with-a-long-id", 3, 1, False], ["ADV-02", 3, 0, True]]
    terminal._table("cases", columns, rows)
    out = capsys.readouterr().out
    assert out == plain_table("cases", columns, rows) + "\n\n"
    assert "…" not in out and "ADV-01-with-a-long-id" in out
