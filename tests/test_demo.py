"""`benchscore demo`, the README's main command, runs every domain's demo into one folder."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import DOMAINS, cli

ROOT = Path(__file__).resolve().parents[1]


def test_demo_runs_every_domain(tmp_path, pinned_time):
    out = tmp_path / "demo-out"
    result = CliRunner().invoke(cli, ["demo", "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    for name in DOMAINS:
        files = [p for p in (out / name).rglob("*.json")]
        assert files, f"the {name} demo wrote no JSON output"
    index = orjson.loads((out / "tcsexam" / "index.json").read_bytes())
    assert index["status"] == "incomplete"  # one complete model, one incomplete: the worst wins
    assert (out / "swarm" / "acceptance" / "acceptance-matrix.md").is_file()


def test_readme_quickstart_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.+?)\n```", quick)
    assert len(commands) == 2 and "benchscore demo" in commands[0] and "pytest" in commands[1]
    assert commands[1] in (ROOT / ".ci" / "run").read_text()


def test_every_demo_out_path_the_docs_name_exists(tmp_path, pinned_time):
    """A path under demo-out/ named in the README or docs/ is one the demo writes (no stale paths)."""
    out = tmp_path / "demo-out"
    assert CliRunner().invoke(cli, ["demo", "--output-dir", str(out)]).exit_code == 0
    text = (ROOT / "README.md").read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    named = set(re.findall(r"demo-out/([\w./-]*\w)", text))
    assert named
    for rel in sorted(named):
        assert list(out.glob(rel)), f"the docs name demo-out/{rel}, which the demo does not write"


def _one_line(result) -> str:
    lines = result.stderr.splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (result.exit_code,
                                                                                          result.output)
    return lines[0]


def test_the_demo_never_deletes_what_it_did_not_write(tmp_path):
    """Issue 15, point 1: a folder holding a file of the user's is refused, the file kept, nothing written."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("notes\n")
    line = _one_line(CliRunner().invoke(cli, ["demo", "--only", "rxn", "--output-dir", str(mine)]))
    assert "'notes.txt'" in line and "did not write" in line
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    assert (mine / "notes.txt").read_text() == "notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


@pytest.mark.parametrize("empty", [True, False])
def test_the_current_folder_is_refused_with_the_same_clear_line(tmp_path, monkeypatch, empty):
    """`--output-dir .` said "Device or resource busy"; now one line saying why, in an empty folder too."""
    here = tmp_path / "here"
    here.mkdir()
    if not empty:
        (here / "notes.txt").write_text("notes\n")
    monkeypatch.chdir(here)
    for folder in (".", str(here), ".."):
        line = _one_line(CliRunner().invoke(cli, ["demo", "--only", "rxn", "--output-dir", folder]))
        assert "benchscore demo replaces its output folder as a whole" in line and "current folder" in line
    assert sorted(p.name for p in here.iterdir()) == ([] if empty else ["notes.txt"])


def test_the_demo_replaces_only_an_earlier_demo_output(tmp_path, pinned_time):
    out = tmp_path / "demo-out"
    out.mkdir()  # an empty folder is fine
    assert CliRunner().invoke(cli, ["demo", "--only", "rxn", "--output-dir", str(out)]).exit_code == 0
    listed = orjson.loads((out / ".benchscore-written.json").read_bytes())
    assert listed["written_by"] == "benchscore demo" and "rxn.html" in listed["entries"]
    first = sorted(p.relative_to(out) for p in out.rglob("*"))
    assert CliRunner().invoke(cli, ["demo", "--only", "rxn", "--output-dir", str(out)]).exit_code == 0
    assert len(sorted(out.rglob("*"))) == len(first)  # replaced, not added to
    (out / "rxn" / "my-notes.md").write_text("mine\n")
    line = _one_line(CliRunner().invoke(cli, ["demo", "--only", "rxn", "--output-dir", str(out)]))
    assert "'rxn/my-notes.md'" in line
    assert (out / "rxn" / "my-notes.md").read_text() == "mine\n" and (out / "index.html").is_file()
