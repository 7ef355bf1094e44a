"""examples/rxn: the documented commands reproduce the committed expected outputs byte for byte."""

from __future__ import annotations

from pathlib import Path

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
