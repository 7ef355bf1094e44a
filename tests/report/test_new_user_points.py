"""Issue 32, "Smaller": what a new user tripped on in report, schema, help texts and mira's messages."""

from __future__ import annotations

import re

import click
import orjson
import pytest
from report_helpers import invoke

from benchscore.cli import _formats, cli


def test_report_accepts_a_folder_like_verify(tmp_path, demo_out):
    page = tmp_path / "all.html"
    result = invoke("report", f"{demo_out}/", "--output", str(page))
    assert result.exit_code == 0, result.output
    drawn = [line for line in result.output.splitlines() if not line.startswith("report:")]
    assert any(line.startswith("tcsexam index:") for line in drawn)
    assert any(line.startswith("swarm acceptance-matrix:") for line in drawn)
    assert not any("multiple_choice_" in line for line in drawn)  # question sets under the folder are left out
    assert page.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("report", str(empty), "--output", str(tmp_path / "e.html"))
    assert result.exit_code == 2 and result.output.strip() == (
        f"error: {empty}: a folder without an output the report draws (docs/report.md lists the kinds)")


@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_swarm_sqlite_store_is_named_as_one(tmp_path, demo_out, command):
    store = demo_out / "swarm" / "run.db"
    args = [str(store), "--output", str(tmp_path / "x.html")] if command == "report" else [str(store), str(store)]
    result = invoke(command, *args)
    assert result.exit_code == 2
    line = result.output.strip()
    assert line.startswith(f"error: {store}: a SQLite store of a swarm run"), line
    assert f"benchscore swarm audit RUN_ID --store sqlite:///{store}" in line
    assert "UTF-8" not in line


@pytest.mark.parametrize("mode", ["validation", "serialization"])
def test_schema_shows_no_docstring_markup_and_no_type_names_as_titles(mode):
    for name in _formats():
        result = invoke("schema", name, "--mode", mode)
        assert result.exit_code == 0, result.output
        text = result.output
        assert not re.search(r":[a-z]+:`", text), (name, re.search(r".{40}:[a-z]+:`.{40}", text))
        assert "``" not in text, name
        titles = re.findall(r'"title": "([^"]*)"', text)
        assert not [t for t in titles if "[" in t or "NoneType" in t], (name, titles)
    schema = orjson.loads(invoke("schema", "rxn-mc-prediction").output)
    assert schema["title"] == "rxn-mc-prediction"
    listing = invoke("schema").output
    assert "``" not in listing and not re.search(r":[a-z]+:`", listing)


def _helps(command: click.Command, path: tuple[str, ...] = ()):
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from _helps(command.get_command(ctx, name), (*path, name))
    else:
        yield " ".join(path), [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]


def test_help_texts_name_the_specification_not_the_seed():
    seeds = [(path, h) for path, helps in _helps(cli) for h in helps if re.search(r"seed section", h)]
    assert seeds == []
    result = invoke("rxn", "eval-mc", "--help")
    assert "specification: docs/rxn.md, section 6.5" in " ".join(result.output.split())


def test_a_mira_field_of_the_wrong_shape_reads_plainly(tmp_path, demo_out):
    doc = orjson.loads((demo_out / "mira" / "score.json").read_bytes())
    doc["overall"]["task_success"] = 5
    bad = tmp_path / "score.json"
    bad.write_bytes(orjson.dumps(doc))
    for args in (("report", str(bad), "--output", str(tmp_path / "r.html")),
                 ("mira", "project", "--score", str(bad), "--output", str(tmp_path / "p.json"))):
        result = invoke(*args)
        assert result.exit_code == 2
        assert result.output.strip() == (f"error: {bad}: field 'overall.task_success': Input should be an object "
                                         "({...}) (got 5)")


def test_nothing_to_compare_names_each_reason_once(demo_out):
    result = invoke("compare", str(demo_out / "mira" / "score.json"), str(demo_out / "mira" / "score_incomplete.json"))
    assert result.exit_code == 2
    line = result.output.strip()
    assert line.startswith("error: nothing to compare: task_success, reliability, pass_at_1, stable_at_3 and "
                           "complete_at_3 null in score_incomplete.json: "), line
    assert line.count("--intersection") == 1 and line.count("null in") == 1
