"""One vocabulary in the help (issue 39, point 6): summaries that end their sentences and say which commands
take other tools' results, ``report`` naming each output once, one rule for ``--output`` / ``--output-dir``
with its exceptions named in the help, and the swarm's ``--store`` / ``--blobs`` defaults explained where
they differ."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def _groups():
    """Every group of the CLI with its path, the umbrella first."""
    ctx = click.Context(cli)
    out = [("benchscore", cli)]
    todo = [("benchscore", cli)]
    while todo:
        path, group = todo.pop()
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if isinstance(cmd, click.Group):
                out.append((f"{path} {name}", cmd))
                todo.append((f"{path} {name}", cmd))
    return out


def _leaves():
    ctx = click.Context(cli)
    for path, group in _groups():
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if not isinstance(cmd, click.Group):
                yield f"{path} {name}", cmd


def _summaries(path: str) -> dict[str, str]:
    args = path.split()[1:]
    result = CliRunner().invoke(cli, [*args, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    listing = result.output.split("\nCommands:\n", 1)[1]
    rows: dict[str, str] = {}
    name = ""
    for line in listing.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name, _, text = line.strip().partition(" ")
            rows[name] = text.strip()
        elif line.strip() and name:
            rows[name] += " " + line.strip()
    return rows


@pytest.mark.parametrize("path", [p for p, _ in _groups()])
def test_every_summary_in_every_group_s_help_ends_its_sentence(path):
    """click cuts a summary at the terminal's width with "..."; each one here is a whole first sentence."""
    rows = _summaries(path)
    assert rows
    cut = {k: v for k, v in rows.items() if v.endswith("...") or not v.endswith((".", ")"))}
    assert cut == {}


def test_the_top_level_help_says_which_commands_take_other_tools_results():
    rows = _summaries("benchscore")
    for name in ("compare", "leaderboard"):
        assert all(tool in rows[name] for tool in ("inspect_ai", "lm-eval", "Every Eval Ever")), rows[name]
    result = CliRunner().invoke(cli, ["--help"])
    assert "inspect_ai logs, lm-evaluation-harness output, Every Eval Ever records" in " ".join(result.output.split())


def test_report_names_each_output_once_never_compare_compare(tmp_path):
    compared = tmp_path / "compare.json"
    logs = ROOT / "examples" / "results" / "logs"
    run = CliRunner().invoke(cli, ["compare", str(logs), "--metric", "quiz/match", "--output", str(compared)])
    assert run.exit_code == 0, run.output
    result = CliRunner().invoke(cli, ["report", str(compared), "--output", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert f"compare: {compared}" in result.output.splitlines()
    assert "compare compare" not in result.output
    assert json.loads(compared.read_text())  # the output it drew


#: what an ``--output-dir`` does to its folder: the rule (a folder the command owns: new, empty or one it
#: wrote before, replaced as a whole), or an exception that its help names as one
OUTPUT_DIR_RULE = "replaced as a whole"
EXCEPTION = "unlike --output-dir elsewhere"


def test_output_is_a_file_and_output_dir_a_folder_the_command_owns_or_the_help_names_the_exception():
    problems = []
    for path, cmd in _leaves():
        for p in cmd.params:
            if not isinstance(p, click.Option):
                continue
            text = " ".join((p.help or "").split())
            if "--output-dir" in p.opts and OUTPUT_DIR_RULE not in text and EXCEPTION not in text:
                problems.append(f"{path} --output-dir: {text}")
            if "--output" in p.opts and isinstance(p.type, click.Path) and not p.type.file_okay:
                problems.append(f"{path} --output is not a file")
    assert problems == []


def test_every_swarm_command_has_one_default_store_and_blobs_or_says_why_not():
    """run, audit, status and stress keep their run in sqlite:///run.db; accept and budget default to a
    temporary store, and their help says so and why (and how to keep it)."""
    problems = []
    for path, cmd in _leaves():
        if not path.startswith("benchscore swarm"):
            continue
        for p in cmd.params:
            if isinstance(p, click.Option) and {"--store", "--blobs"} & set(p.opts):
                text = " ".join((p.help or "").split())
                usual = {"--store": "sqlite:///run.db", "--blobs": "swarm-blobs"}[p.opts[0]]
                if p.default != usual and not (("temporary" in text or "default: none" in text) and usual in text
                                               and "because" in text):
                    problems.append(f"{path} {p.opts[0]} default {p.default!r}: {text}")
    assert problems == []


def test_every_command_has_quiet():
    """``--quiet`` everywhere (one shared option; Mira's commands keep their own flag of the same meaning)."""
    missing = [path for path, cmd in _leaves() if not any(p.name == "quiet" for p in cmd.params)]
    assert missing == []


def test_quiet_prints_nothing_writes_the_output_and_is_not_recorded(tmp_path):
    out = tmp_path / "eval.json"
    dataset = ROOT / "examples" / "rxn" / "expected" / "multiple_choice_all_varying.json"
    args = ["rxn", "eval-mc", "--dataset", str(dataset)]
    samples = json.loads(dataset.read_text())["samples"]
    (tmp_path / "p.json").write_text(json.dumps({s["id"]: 0 for s in samples}))
    loud = CliRunner().invoke(cli, [*args, "--prediction", str(tmp_path / "p.json"), "--output", str(tmp_path / "a.json")])
    quiet = CliRunner().invoke(cli, [*args, "--prediction", str(tmp_path / "p.json"), "--output", str(out), "--quiet"])
    assert loud.exit_code == quiet.exit_code == 0, quiet.output
    assert loud.stdout and quiet.stdout == ""
    assert "--quiet" not in json.loads(out.read_text())["provenance"]["arguments"]
