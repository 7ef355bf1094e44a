"""`benchscore demo`, the README's main command, runs every domain's demo into one folder."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from xml.etree import ElementTree as ET

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


def test_the_demo_prints_a_summary_that_explains_every_fail(tmp_path, pinned_time):
    """Issue 18, point 10: 437 lines became a summary: a row per output with its headline, status and (short
    of complete / PASS) why; each domain's page; the A02 FAIL is gone (the demo makes its evidence), the
    S07/S08 replays say so, the grade is in English."""
    out = tmp_path / "demo-out"
    result = CliRunner().invoke(cli, ["demo", "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert 10 <= len(lines) <= 35, len(lines)
    for name in DOMAINS:
        assert f"{name}: page {out / (name + '.html')}" in lines
    assert str(out / "index.html") in lines[0]
    rows = [line.split(None, 1) for line in lines if line.startswith("  ")]
    statuses = {"complete", "incomplete", "provisional", "PASS", "FAIL", "reduced"}
    assert rows and all(status in statuses for status, _ in rows), rows
    for status, rest in rows:
        if status not in ("complete", "PASS"):
            assert re.search(r"why: .{20,}", rest), f"no reason: {status} {rest}"
    text = result.stdout
    assert "Reliability 33.33%" in text and "Task Success 0.55" in text
    # S07 and S08 replayed: FAIL with the one reason, in the matrix's row and in S08's model IO report's row
    replay = "replay (local OpenAI-compatible test server with a deterministic responder): its checks"
    why = f"{replay} passed, but only a live run against a real gateway counts"
    # the closed loop's FAIL as a short list (issue 39): each item, whether it ran live, its failed checks
    not_live = "ran replay, not live (only a live run counts)"
    assert (f"(1) S07_live_external_github_code_reasoning: {not_live}; checks not met: pheromone_scores_pg_and_redis, "
            "redis_stream_event_volume (2) S08_model_io_report_audit: " f"{not_live}; its checks passed") in text
    io_row = next(line for line in lines if line.startswith("  ") and "acceptance-matrix.model-io.json" in line)
    assert io_row.split()[0] == "FAIL" and f"why: {why}" in io_row
    assert "A02" not in text  # its evidence is the bundled unit checks' report: it passes
    assert "grade minimal_acceptable_swarm" in text
    assert not re.search(r"[\u4e00-\u9fff]", text), "the terminal output is in English"
    assert "attempts (score is aggregated" not in text  # the full tables only with --verbose
    matrix = orjson.loads((out / "swarm" / "acceptance" / "acceptance-matrix.json").read_bytes())
    assert matrix["closed_loop"]["A02_unit_and_deterministic_scenarios"] == "PASS"
    junit = out / "swarm" / "acceptance" / "unit-checks.junit.xml"
    assert matrix["provenance"]["inputs"]["junit"]["sha256"] == hashlib.sha256(junit.read_bytes()).hexdigest()
    suite = ET.fromstring(junit.read_bytes()).find("testsuite")
    from benchscore.swarm.accept.unit_checks import CHECKS

    assert suite.get("tests") == str(len(CHECKS)) and suite.get("failures") == "0"
    assert [c.get("name") for c in suite.iter("testcase")] == [c.__name__ for c in CHECKS]


def test_verbose_prints_every_table(tmp_path, pinned_time):
    out = tmp_path / "demo-out"
    quiet = CliRunner().invoke(cli, ["demo", "--only", "mira", "--output-dir", str(out)])
    loud = CliRunner().invoke(cli, ["demo", "--only", "mira", "--verbose", "--output-dir", str(out)])
    assert quiet.exit_code == loud.exit_code == 0, loud.output
    assert "repetitions" not in quiet.stdout.split("\n", 2)[2].replace("repetitions;", "")  # no table rows
    assert "ADV-01#4" in loud.stdout and "95 % intervals" in loud.stdout
    assert loud.stdout.endswith(quiet.stdout)  # the summary closes both


def test_the_demo_refuses_to_replace_a_file_of_its_own_that_was_edited(tmp_path):
    """Issue 32: the demo replaced an output the user edited (verify flagged it); like `rxn build-mc --name`
    it refuses, naming the file, and leaves the folder as it was."""
    out = tmp_path / "demo-out"
    assert CliRunner().invoke(cli, ["demo", "--only", "rxn", "--output-dir", str(out)]).exit_code == 0
    edited = out / "rxn" / "eval_mc_all_varying.json"
    edited.write_bytes(edited.read_bytes().replace(b'"task"', b'"task" ', 1))
    line = _one_line(CliRunner().invoke(cli, ["demo", "--only", "rxn", "--output-dir", str(out)]))
    assert "'rxn/eval_mc_all_varying.json', changed since benchscore demo wrote it" in line
    assert b'"task" ' in edited.read_bytes()


def test_the_demo_summary_is_the_index_pages_summary(tmp_path, pinned_time):
    """Issue 32: the terminal summary and the index's summary rows were computed in two places; now one
    (common.html.summary_facts). Every row of index.html, read back from the page, is a terminal line."""
    import html as _html

    out = tmp_path / "demo-out"
    result = CliRunner().invoke(cli, ["demo", "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text()
    table = page.split('<table class="summary">', 1)[1].split("</tbody>", 1)[0]

    def text(fragment: str) -> str:
        return _html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()

    rows = re.findall(r'<tr><th scope="row">(.*?)</th><td class="headline">(.*?)</td><td class="[^"]*">(.*?)</td>'
                      r"<td[^>]*>(.*?)</td></tr>", table)
    assert len(rows) >= 10 and len(rows) == table.count('<th scope="row">')
    printed = [line for line in result.stdout.splitlines() if line.startswith("  ")]
    assert len(printed) == len(rows)
    from benchscore.common.cli import FINAL

    for (result_cell, heads, status, reason), line in zip(rows, printed, strict=True):
        label, what = result_cell.split("<br>", 1)
        heads = "; ".join(text(h) for h in heads.split("<br>") if text(h) != "-")
        status, reason = text(status), text(reason)
        why = f"why: {reason}" if reason and status not in FINAL else reason
        assert line.split(None, 1) == [status, f"{text(label)} ({text(what)}): "
                                       + "; ".join(t for t in (heads, why) if t)], line
