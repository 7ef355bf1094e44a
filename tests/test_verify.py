"""issue 16 part 3: every output records how to recompute it; ``benchscore verify`` recomputes it.

An untouched demo verifies; one edited number (exit 1, the JSON path with both values), one edited
input (exit 2, its role, name and sha256, and that it changed), one missing input (exit 2, named)
each give the documented exit and name the place; an output of a live model call says it cannot be
recomputed and why, while the evaluation computed from its file can.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common.terminal import fmt

ENV = {"SOURCE_DATE_EPOCH": "1767225600"}
REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert result.exit_code == expect, (result.output, result.stderr_bytes)
    return result


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo of every domain but the swarm (whose outputs are measurements: tested apart)."""
    out = tmp_path_factory.mktemp("verify") / "demo-out"
    run("demo", "--only", "rxn", "--only", "mira", "--only", "tcsexam", "--output-dir", out)
    return out


@pytest.fixture
def copy(demo, tmp_path) -> Path:
    dst = tmp_path / "demo-out"
    shutil.copytree(demo, dst)
    return dst


def _outputs(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.rglob("*.json")) if isinstance(json.loads(p.read_text()), dict)
            and "provenance" in json.loads(p.read_text())]


def test_every_output_records_its_command_and_arguments(demo):
    score = json.loads((demo / "mira" / "score.json").read_text())["provenance"]
    assert score["command"] == "benchscore mira score"
    assert score["arguments"]["--contract"] == {
        "name": "contract.json", "sha256": score["inputs"]["contract"]["sha256"], "path": "contract.json"}
    assert score["arguments"]["--output"] == {"output": "file"}  # where it went is no part of the recipe
    ev = json.loads((demo / "rxn" / "eval_mc_all_varying.json").read_text())["provenance"]
    assert ev["command"] == "benchscore rxn eval-mc"
    assert ev["arguments"]["--dataset"][0]["path"] == "20260101_000000_multiple_choice/multiple_choice_all_varying.json"
    index = json.loads((demo / "tcsexam" / "index.json").read_text())["provenance"]
    assert index["arguments"]["--suite"] == {"name": "demo-lite.json", "sha256": index["inputs"]["suite"]["sha256"]}
    for p in _outputs(demo):  # every output of these domains says how to make it again
        prov = json.loads(p.read_text())["provenance"]
        assert prov["command"].startswith("benchscore ") and isinstance(prov["arguments"], dict), p


def test_a_command_line_run_records_what_the_demo_records(demo, tmp_path):
    """The demo's steps stand for commands: running the command gives the same provenance."""
    folder = demo / "rxn" / "20260101_000000_multiple_choice"
    out = demo.parent / "again" / "eval_mc_all_varying.json"
    shutil.copytree(folder, out.parent / folder.name)
    run("rxn", "eval-mc", "--dataset", out.parent / folder.name / "multiple_choice_all_varying.json", "--prediction",
        out.parent / folder.name / "example_prediction_all_varying.json", "--output", out)
    assert out.read_bytes() == (demo / "rxn" / "eval_mc_all_varying.json").read_bytes()
    shutil.rmtree(out.parent)


def test_an_untouched_demo_verifies(demo):
    r = run("verify", demo)
    lines = r.output.splitlines()
    outputs = _outputs(demo)
    assert len(lines) == len(outputs) + 1
    for p in outputs:
        line = next(x for x in lines if x.startswith(f"{p}: "))
        assert line.startswith(f"{p}: reproduced: ") and line.endswith(" values"), line
    assert lines[-1] == f"verified {len(outputs)} outputs: {len(outputs)} reproduced"


def test_one_edited_number_exits_1_and_names_the_path_with_both_values(copy):
    p = copy / "tcsexam" / "index.json"
    doc = json.loads(p.read_text())
    old = doc["models"]["synthetic-model-a"]["track_means"]["solver"]
    doc["models"]["synthetic-model-a"]["track_means"]["solver"] = 0.5
    p.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    r = run("verify", p, expect=1)
    assert r.output.splitlines() == [
        f"{p}: differs: 1 value(s) differ from a re-run of benchscore tcsexam score",
        f"  models[\"synthetic-model-a\"].track_means.solver: 0.5 in the file, {fmt(old)} recomputed",
        "verified 1 outputs: 1 differs"]


def test_one_edited_input_exits_2_and_names_it(copy):
    pred = copy / "rxn" / "20260101_000000_multiple_choice" / "example_prediction_all_varying.json"
    recorded = json.loads((copy / "rxn" / "eval_mc_all_varying.json").read_text())["provenance"]["arguments"]
    data = json.loads(pred.read_text())
    data[next(iter(data))] = 0
    pred.write_text(json.dumps(data))
    r = run("verify", copy / "rxn" / "eval_mc_all_varying.json", expect=2)
    first = r.output.splitlines()[0]
    sha = recorded["--prediction"]["sha256"]
    assert first.startswith(f"{copy / 'rxn' / 'eval_mc_all_varying.json'}: missing input: --prediction "
                            f"(example_prediction_all_varying.json, sha256 {sha}) not found")
    assert "it was changed after the output was written" in first


def test_one_missing_input_exits_2_and_names_it(copy):
    (copy / "tcsexam" / "attempts.csv").unlink()
    r = run("verify", copy / "tcsexam", expect=2)
    sha = json.loads((copy / "tcsexam" / "index.json").read_text())["provenance"]["inputs"]["attempts"]["sha256"]
    line = next(x for x in r.output.splitlines() if x.startswith(f"{copy / 'tcsexam' / 'index.json'}: "))
    assert line.startswith(f"{copy / 'tcsexam' / 'index.json'}: missing input: --attempts (attempts.csv, sha256 {sha}) "
                           "not found; looked")
    assert r.output.splitlines()[-1].endswith("1 missing input")  # the other outputs still verify


def test_inputs_are_found_by_sha256_under_search_folders_and_other_names(copy, tmp_path):
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    folder = copy / "rxn" / "20260101_000000_multiple_choice"
    shutil.move(folder / "example_prediction_all_varying.json", moved / "renamed.json")
    (folder / "example_prediction_all_varying.json").write_text("{}")  # a file of the name, but not the input
    ev = copy / "rxn" / "eval_mc_all_varying.json"
    r = run("verify", ev, expect=2)
    assert "missing input: --prediction (example_prediction_all_varying.json" in r.output
    r = run("verify", ev, "--search", moved)
    assert r.output.startswith(f"{ev}: reproduced: ")


def test_live_model_outputs_cannot_be_recomputed_but_their_evaluations_can(tmp_path):
    from benchscore.common.testserver import OpenAITestServer

    run("rxn", "build-mc", "--bundled", "deoxyfluorination", "--output-dir", tmp_path)
    folder = next(tmp_path.glob("*_multiple_choice"))
    ds = folder / "multiple_choice_all_varying.json"
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "0") as srv:
        run("rxn", "predict", "--dataset", ds, "--base-url", srv.base_url, "--model", "m", "--output",
            tmp_path / "pred.json", "--limit", "3")
    run("rxn", "eval-mc", "--dataset", ds, "--prediction", tmp_path / "pred.json", "--output", tmp_path / "eval.json")
    r = run("verify", tmp_path / "pred.audit.json", tmp_path / "eval.json", "--search", tmp_path)
    lines = r.output.splitlines()
    assert lines[0] == (f"{tmp_path / 'pred.audit.json'}: not recomputable: rxn predict asks a live model: its "
                        "answers are not a function of its input files (the evaluations of its prediction file can "
                        "be verified)")
    assert lines[1].startswith(f"{tmp_path / 'eval.json'}: reproduced: ")
    judge = {"model": "m", "verdicts": [], "provenance": {"metric_id": "mira:judge/m", "inputs": {},
                                                          "command": "benchscore mira judge"}}
    (tmp_path / "verdicts.json").write_text(json.dumps(judge))
    r = run("verify", tmp_path / "verdicts.json")
    assert "not recomputable: mira judge asks a live model for each verdict" in r.output
    del judge["provenance"]["command"]  # issue 35: a live output says so by its command too, never by its fields alone
    (tmp_path / "verdicts.json").write_text(json.dumps(judge))
    r = run("verify", tmp_path / "verdicts.json", expect=1)
    assert "cannot be verified: provenance.command is missing, but a mira judge verdicts is written by " in r.output


def test_swarm_outputs_say_why_they_cannot_be_recomputed(tmp_path):
    run("swarm", "budget", "--store", f"sqlite:///{tmp_path}/b.db", "--output", tmp_path / "l02.json")
    r = run("verify", tmp_path / "l02.json")
    assert r.output.splitlines()[0] == (f"{tmp_path / 'l02.json'}: not recomputable: swarm budget measures a live "
                                        "run against a token budget")


def test_the_committed_examples_verify():
    r = run("verify", EX / "mira" / "expected", EX / "tcsexam" / "seed-example" / "expected", "--search", EX)
    assert all(": reproduced: " in line for line in r.output.splitlines()[:-1]), r.output
    assert r.output.splitlines()[-1] == "verified 7 outputs: 7 reproduced"


def test_a_comparison_verifies(demo, tmp_path):
    run("compare", demo / "tcsexam" / "index.json", "--output", tmp_path / "cmp.json")
    r = run("verify", tmp_path / "cmp.json", "--search", demo)
    assert r.output.startswith(f"{tmp_path / 'cmp.json'}: reproduced: ")


def test_not_an_output_is_refused_in_one_line(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    r = CliRunner().invoke(cli, ["verify", str(tmp_path / "x.json")])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "has no provenance block" in r.output


def test_no_password_of_a_store_url_reaches_an_output():
    import click

    from benchscore.common.provenance import arguments_record, redact

    assert redact("postgresql://bench:s3cret@127.0.0.1:5432/test?schema=x") == \
        "postgresql://bench:***@127.0.0.1:5432/test?schema=x"
    assert redact("sqlite:///tmp/x.db") == "sqlite:///tmp/x.db" and redact(5) == 5

    @click.command()
    @click.option("--store")
    @click.option("--quiet", is_flag=True)
    def cmd(store, quiet):
        pass

    assert arguments_record(cmd, {"store": "redis://:hunter2@127.0.0.1:6379/0", "quiet": True}) == {
        "--store": "redis://:***@127.0.0.1:6379/0"}


def _edited_copy(demo: Path, tmp_path: Path, change) -> Path:
    doc = json.loads((demo / "rxn" / "eval_mc_all_varying.json").read_text())
    change(doc)
    out = demo.parent / "bypass" / "eval.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(("what", "change", "field"), [
    ("command deleted", lambda d: d["provenance"].pop("command"), "provenance.command is missing"),
    ("another command", lambda d: d["provenance"].update(command="benchscore rxn predict"),
     "provenance.command is 'benchscore rxn predict', but a rxn evaluation is written by benchscore rxn eval-mc"),
    ("another metric id", lambda d: d["provenance"].update(metric_id="swarm.audit"),
     "provenance.metric_id is 'swarm.audit', but this is a rxn evaluation"),
])
def test_an_edited_output_cannot_turn_verification_off(demo, tmp_path, what, change, field):
    """The audit: an rxn evaluation with its headline edited and its command deleted, replaced by a live
    command, or its metric id set to swarm's, verified as 'not recomputable' with exit 0."""
    def edit(doc):
        doc["overall"]["avg_relative_score"] = 0.95
        change(doc)

    out = _edited_copy(demo, tmp_path, edit)
    r = CliRunner().invoke(cli, ["verify", str(out), "--search", str(demo)])
    assert r.exit_code == 1, (what, r.output)
    assert f"cannot be verified: {field}" in r.output, r.output
    folder = CliRunner().invoke(cli, ["verify", str(out.parent), "--search", str(demo)])
    assert folder.exit_code == 1 and "1 cannot be verified" in folder.output


def test_another_benchscore_version_is_compared_on_every_other_value(demo, tmp_path):
    out = _edited_copy(demo, tmp_path, lambda d: d["provenance"].update(benchscore_version="0.0.9"))
    r = run("verify", out, "--search", demo)
    assert "reproduced: " in r.output and "written by benchscore 0.0.9, recomputed with " in r.output
    edited = _edited_copy(demo, tmp_path, lambda d: (d["provenance"].update(benchscore_version="0.0.9"),
                                                      d["overall"].update(avg_relative_score=0.95)))
    r = CliRunner().invoke(cli, ["verify", str(edited), "--search", str(demo)])
    assert r.exit_code == 1 and "overall.avg_relative_score" in r.output and "provenance" not in r.output.split("\n")[1]


def test_an_output_of_no_known_kind_cannot_be_verified(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"answer": 42, "provenance": {"metric_id": "rxn-testsetV6-multiple_choice",
                                                                               "command": "benchscore rxn eval-mc"}}))
    r = CliRunner().invoke(cli, ["verify", str(tmp_path / "x.json")])
    assert r.exit_code == 1 and "cannot be verified: it validates as no kind of output" in r.output
