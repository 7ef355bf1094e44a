"""`benchscore demo`, the README's main command, runs every domain's demo into one folder."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
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
