"""examples/rxn: the documented commands reproduce the committed expected outputs byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from benchscore.cli import cli

EX = Path(__file__).resolve().parents[2] / "examples" / "rxn"


def test_examples_reproduce(tmp_path):
    env = {"SOURCE_DATE_EPOCH": "1767225600"}

    def run(*args):
        r = CliRunner().invoke(cli, ["rxn", *map(str, args)], env=env)
        assert r.exit_code == 0, r.output

    tables = tmp_path / "literature_tables.json"
    run("convert-csv", "--csv", EX / "literature_tables.csv", "--output", tables)
    assert tables.read_bytes() == (EX / "literature_tables.json").read_bytes()
    run("build-mc", "--tables", tables, "--max-options", 4, "--output-dir", tmp_path)
    run("build-fib", "--tables", tables, "--output-dir", tmp_path)
    mc, fib = tmp_path / "20260101_000000_multiple_choice", tmp_path / "20260101_000000_fill_in_blank"
    run("eval-mc", "--dataset", mc / "multiple_choice_all_varying.json", "--dataset",
        mc / "multiple_choice_single_varying.json", "--prediction", EX / "predictions_mc.json",
        "--output", tmp_path / "eval_mc.json")
    run("eval-fib", "--dataset", fib / "fill_in_blank_all_blank.json", "--dataset",
        fib / "fill_in_blank_all_blank_reference.json", "--prediction", EX / "predictions_fib.json",
        "--output", tmp_path / "eval_fib.json")
    pairs = {
        "multiple_choice_all_varying.json": mc / "multiple_choice_all_varying.json",
        "fill_in_blank_all_blank_reference.json": fib / "fill_in_blank_all_blank_reference.json",
        "eval_mc.json": tmp_path / "eval_mc.json",
        "eval_fib.json": tmp_path / "eval_fib.json",
    }
    for name, path in pairs.items():
        assert path.read_bytes() == (EX / "expected" / name).read_bytes(), name


def test_example_metrics_are_what_the_readme_says():
    import json

    mc = json.loads((EX / "expected" / "eval_mc.json").read_text())
    assert mc["per_dataset"]["single_varying"]["num_invalid"] == 1
    assert mc["per_dataset"]["single_varying"]["exact_match_accuracy"] == 0.5
    fib = json.loads((EX / "expected" / "eval_fib.json").read_text())
    assert fib["per_dataset"]["all_blank"]["best_hit_rate_among_scored"] == 1.0
    assert fib["per_dataset"]["all_blank_reference"]["num_unhit"] == 1


def test_chance_beside_the_headline_and_bad_answers_by_id(tmp_path):
    # the output, the terminal and the report page give the chance level beside each headline metric, and
    # the terminal names the invalid and unhit answers by sample id (as per_sample does)
    import json

    from benchscore.common.terminal import fmt
    from benchscore.publish import report

    env = {"SOURCE_DATE_EPOCH": "1767225600"}
    tables = tmp_path / "t.json"
    CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(EX / "literature_tables.csv"), "--output", str(tables)])
    CliRunner().invoke(cli, ["rxn", "build-fib", "--tables", str(tables), "--output-dir", str(tmp_path)], env=env)
    fib = tmp_path / "20260101_000000_fill_in_blank"
    out = tmp_path / "eval_fib.json"
    r = CliRunner().invoke(cli, ["rxn", "eval-fib", "--dataset", str(fib / "fill_in_blank_all_blank.json"), "--dataset",
                                 str(fib / "fill_in_blank_all_blank_reference.json"),
                                 "--prediction", str(EX / "predictions_fib.json"), "--output", str(out)], env=env)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    chance = doc["chance"]["overall"]
    assert 0 < chance["avg_relative_score"] < 1 and 0 < chance["hit_rate"] <= 1
    per = doc["chance"]["per_dataset"]
    n = [per[q]["num_samples"] for q in ("all_blank", "all_blank_reference")]  # overall: the mean over every question
    assert chance["avg_relative_score"] == pytest.approx(
        (per["all_blank"]["avg_relative_score"] * n[0] + per["all_blank_reference"]["avg_relative_score"] * n[1]) / sum(n))
    assert any(ln.split() == ["avg_relative_score_chance", *(fmt(c["avg_relative_score"]) for c in (*per.values(),
                                                                                                 chance))]
               for ln in r.output.splitlines())
    unhit = [s["id"] for s in doc["per_sample"]["all_blank_reference"] if s["status"] == "unhit"]
    assert unhit and f"unhit answers ({len(unhit)}, left out of avg_relative_score): {unhit[0]}" in r.output
    page = report.report_page(report.read_outputs([(out, "eval_fib.json")], strict=True), "t")
    assert "avg_relative_score by chance" in page and "by chance (a uniform random legal combination" in page


def test_answer_lines_name_the_first_ids_then_a_count():
    from benchscore.rxn.cli import answer_lines

    per = {"q": [{"id": f"s{i}", "status": "invalid"} for i in range(7)] + [{"id": "ok", "status": "scored"}]}
    assert answer_lines(per) == ["invalid answers (7, scored 0): s0, s1, s2, s3, s4 and 2 more (every one in "
                                 "per_sample)"]
    assert answer_lines({"q": [{"id": "ok", "status": "scored"}]}) == []
