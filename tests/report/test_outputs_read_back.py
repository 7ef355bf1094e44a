"""Issue 32, "Outputs read back are not checked": every command that reads an output back (``report``,
``compare``, the demo's summary table and figures) checks it against its kind's typed model first, strictly
(a number stored as text, a boolean where a number belongs): one line naming the file and the JSON path of
the field, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from report_helpers import EXAMPLES, invoke

from benchscore.common.errors import BadInput
from benchscore.publish.report import outputs

TCS = EXAMPLES / "tcsexam" / "seed-example" / "expected"
RXN = EXAMPLES / "rxn" / "expected"


def _one_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def _spoiled(tmp_path: Path, source: Path, change) -> Path:
    doc = orjson.loads(source.read_bytes())
    change(doc)
    bad = tmp_path / source.name
    bad.write_bytes(orjson.dumps(doc))
    return bad


def _compare_output(demo_out: Path, tmp_path: Path) -> Path:
    scores = demo_out / "tcsexam" / "solver-scores"
    out = tmp_path / "compare.json"
    result = invoke("compare", str(scores / "synthetic-model-a/demo-sat/attempt-1.json"),
                    str(scores / "synthetic-model-b/demo-sat/attempt-1.json"), "--output", str(out))
    assert result.exit_code == 0, result.output
    return out


def _first_metric(doc: dict) -> dict:
    return doc["comparisons"][0]["metrics"][0]


CASES = {
    "tcsexam index, models.<m>.index as text": (
        lambda demo, tmp: demo / "tcsexam" / "index.json",
        lambda d: d["models"][next(iter(d["models"]))].update(index="99.5"), "models.synthetic-model-a.index",
        "Input should be a valid number (got '99.5')"),
    "solver score, relative_score as text": (
        lambda demo, tmp: demo / "tcsexam/solver-scores/synthetic-model-a/demo-sat/attempt-1.json",
        lambda d: d.update(relative_score="0.5"), "relative_score", "Input should be a valid number (got '0.5')"),
    "compare output, difference as text": (
        _compare_output, lambda d: _first_metric(d).update(difference="0.1"), "comparisons[0].metrics[0].difference",
        "Input should be a valid number (got '0.1')"),
    "rxn evaluation, overall.avg_relative_score 'abc'": (
        lambda demo, tmp: demo / "rxn" / "eval_mc_all_varying.json",
        lambda d: d["overall"].update(avg_relative_score="abc"), "overall.avg_relative_score", "valid number"),
    "rxn evaluation, num_samples true": (
        lambda demo, tmp: demo / "rxn" / "eval_fib_all_blank.json",
        lambda d: d["per_dataset"]["all_blank"].update(num_samples=True), "per_dataset.all_blank.num_samples",
        "valid integer"),
    "swarm L01, tasks_per_second as text": (
        lambda demo, tmp: demo / "swarm" / "l01-reduced.json",
        lambda d: d.update(tasks_per_second=str(d["tasks_per_second"])), "tasks_per_second", "valid number"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_report_refuses_a_value_of_the_wrong_type_in_one_line(tmp_path, demo_out, case):
    source, change, field, message = CASES[case]
    (tmp_path / "in").mkdir()
    bad = _spoiled(tmp_path / "in", source(demo_out, tmp_path), change)
    page = tmp_path / "r.html"
    line = _one_line(invoke("report", str(bad), "--output", str(page)))
    assert line.startswith(f"error: {bad}: field '{field}': "), line
    assert message in line
    assert not page.exists()


def test_compare_refuses_a_solver_score_whose_relative_score_is_text(tmp_path, demo_out):
    scores = demo_out / "tcsexam" / "solver-scores"
    bad = _spoiled(tmp_path, scores / "synthetic-model-a/demo-sat/attempt-1.json",
                   lambda d: d.update(relative_score="0.5"))
    out = tmp_path / "c.json"
    line = _one_line(invoke("compare", str(bad), str(scores / "synthetic-model-b/demo-sat/attempt-1.json"),
                            "--output", str(out)))
    assert line == f"error: {bad}: field 'relative_score': Input should be a valid number (got '0.5')"
    assert not out.exists()


def test_an_rxn_evaluation_holds_the_metrics_of_its_task(tmp_path):
    doc = orjson.loads((RXN / "eval_mc.json").read_bytes())
    fib = orjson.loads((RXN / "eval_fib.json").read_bytes())
    doc["overall"] = fib["overall"]
    with pytest.raises(BadInput, match="overall holds fill_in_blank metrics, task is multiple_choice"):
        outputs().check(doc, source="e.json")
    doc = orjson.loads((RXN / "eval_mc.json").read_bytes())
    doc["overall"]["hits"] = 1
    with pytest.raises(BadInput, match="field 'overall.hits'"):
        outputs().check(doc, source="e.json")


def test_every_output_the_demo_and_the_examples_write_passes_the_check(tmp_path, demo_out, swarm_outputs):
    """Strict, not wrong: what the current code writes is accepted; report, compare and verify of it work."""
    paths = [p for p in sorted(demo_out.rglob("*.json")) if not p.name.startswith(".")]
    paths += sorted(EXAMPLES.glob("*/expected/*.json")) + sorted(TCS.glob("*.json"))
    paths += [*swarm_outputs.values(), _compare_output(demo_out, tmp_path)]
    kinds = set()
    for p in paths:
        found = outputs().check(orjson.loads(p.read_bytes()), source=p)
        if found:
            kinds.add(found)
    assert {("tcsexam", "index"), ("tcsexam", "solver-score"), ("mira", "score"), ("mira", "public"), ("rxn", "eval"),
            ("swarm", "acceptance-matrix"), ("swarm", "model-io"), ("swarm", "run"), ("swarm", "audit"),
            ("swarm", "L01"), ("swarm", "L02"), ("compare", "compare")} <= kinds
    drawn = [p for p in paths if outputs().kind_of(orjson.loads(p.read_bytes()))]
    result = invoke("report", *map(str, drawn), "--output", str(tmp_path / "all.html"))
    assert result.exit_code == 0, result.output
    result = invoke("compare", str(demo_out / "rxn" / "eval_mc_all_varying.json"), str(RXN / "eval_mc.json"),
                    "--intersection")
    assert result.exit_code in (0, 2) and "Traceback" not in result.output
    result = invoke("compare", str(demo_out / "tcsexam" / "index.json"))
    assert result.exit_code == 0, result.output
    result = invoke("verify", str(demo_out))
    assert result.exit_code in (0, 1), result.output  # the demo's live-only kinds say why; nothing is refused
    assert "error:" not in result.output
