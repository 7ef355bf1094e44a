"""Issue 39 point 3: no command replaces a file it did not write. A file output replaces only an earlier output
of the same command (or with ``--force``); else one line, exit 2, nothing touched. One function decides, for
files and folders: :func:`benchscore.common.atomic.refuse_to_replace`."""

from __future__ import annotations

import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common.atomic import MANIFEST, refuse_to_replace, written_by
from benchscore.common.cli import Command
from benchscore.common.errors import BadInput
from benchscore.common.provenance import OUTPUT_PARAMS

ROOT = Path(__file__).resolve().parents[2]
LOGS = str(ROOT / "examples" / "results" / "logs")


def _compare(output: Path, *extra: str):
    return CliRunner().invoke(cli, ["compare", LOGS, "--metric", "quiz/match", "--output", str(output), *extra])


def _refused(result, path: Path, why: str) -> None:
    lines = result.stderr.splitlines()
    assert result.exit_code == 2 and len(lines) == 1, (result.exit_code, result.output)
    assert lines[0].startswith(f"error: {path}: ") and why in lines[0], lines[0]
    assert "--force" in lines[0]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_file_of_the_users_is_never_replaced_without_force(tmp_path, pinned_time):
    notes = tmp_path / "n.md"
    notes.write_text("notes\n")
    _refused(_compare(notes), notes, "benchscore did not write")
    assert notes.read_text() == "notes\n"
    assert sorted(os.listdir(tmp_path)) == ["n.md"]  # nothing beside it either
    forced = _compare(notes, "--force")
    assert forced.exit_code == 0, forced.output
    assert written_by(notes) == "benchscore compare"


def test_an_earlier_output_of_the_same_command_is_replaced(tmp_path, pinned_time):
    out = tmp_path / "c.json"
    assert _compare(out).exit_code == 0
    first = out.read_bytes()
    again = _compare(out)
    assert again.exit_code == 0, again.output
    assert out.read_bytes() == first
    assert _compare(out, "--force").exit_code == 0
    assert out.read_bytes() == first  # --force is not recorded: it changes whether, not what


def test_an_output_of_another_command_is_refused(tmp_path, pinned_time):
    out = tmp_path / "c.json"
    assert _compare(out).exit_code == 0
    before = out.read_bytes()
    page = tmp_path / "page.html"
    made = CliRunner().invoke(cli, ["report", str(out), "--output", str(page)])
    assert made.exit_code == 0, made.output
    assert written_by(page) == "benchscore report"
    assert CliRunner().invoke(cli, ["report", str(out), "--output", str(page)]).exit_code == 0  # its own: replaced
    _refused(_compare(page), page, "holds an output of benchscore report")
    assert written_by(page) == "benchscore report"
    other = tmp_path / "other.json"
    assert _compare(other).exit_code == 0
    _refused(CliRunner().invoke(cli, ["report", str(out), "--output", str(other)]), other,
             "holds an output of benchscore compare")
    assert out.read_bytes() == before


def test_a_page_of_a_leaderboard_site_is_refused_and_the_site_stays_usable(tmp_path, pinned_time):
    site = tmp_path / "site"
    assert CliRunner().invoke(cli, ["leaderboard", LOGS, "--metric", "quiz/match", "--output-dir",
                                    str(site)]).exit_code == 0
    before = _files(site)
    out = tmp_path / "c.json"
    assert _compare(out).exit_code == 0
    page = site / "index.html"
    _refused(CliRunner().invoke(cli, ["report", str(out), "--output", str(page)]), page,
             f"belongs to the folder {site} that benchscore leaderboard wrote")
    assert _files(site) == before
    again = CliRunner().invoke(cli, ["leaderboard", LOGS, "--metric", "quiz/match", "--output-dir", str(site)])
    assert again.exit_code == 0, again.output


def test_a_link_and_a_folder_are_refused(tmp_path, pinned_time):
    target = tmp_path / "target.txt"
    target.write_text("mine\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    _refused(_compare(link), link, "is a link")
    assert target.read_text() == "mine\n" and link.is_symlink()
    with pytest.raises(BadInput, match="not a regular file"):
        refuse_to_replace(tmp_path, "benchscore compare")


def test_one_function_for_folders_too(tmp_path):
    """A folder output: missing, empty or its own earlier folder; --force does not apply (a folder goes whole)."""
    refuse_to_replace(tmp_path / "new", "benchscore demo", folder=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("keep\n")
    with pytest.raises(BadInput, match="did not write"):
        refuse_to_replace(mine, "benchscore demo", folder=True, force=True)
    with pytest.raises(BadInput, match="this is a file"):
        refuse_to_replace(mine / "keep.txt", "benchscore demo", folder=True)
    (mine / "keep.txt").unlink()
    (mine / MANIFEST).write_bytes(b'{"written_by": "benchscore demo", "entries": [], "sha256": {}}')
    refuse_to_replace(mine, "benchscore demo", folder=True)


def test_written_by_recognises_strictly(tmp_path):
    cases = {
        "prov.json": (b'{"provenance": {"benchscore_version": "0.1.0", "command": "benchscore rxn eval-mc"}}',
                      "benchscore rxn eval-mc"),
        "no-command.json": (b'{"provenance": {"benchscore_version": "0.1.0"}}', None),
        "foreign-command.json": (b'{"provenance": {"benchscore_version": "0.1.0", "command": "rm -rf"}}', None),
        "plain.json": (b'{"a": 1}', None),
        "page.html": (b'<!DOCTYPE html>\n<html><head><meta name="generator" content="benchscore report">', "benchscore report"),
        "other.html": (b'<!DOCTYPE html>\n<html><head><meta name="generator" content="Hugo">', None),
        "reps.jsonl": (b'{"case_id": "A", "source": {"tool": "inspect_ai", "mapping_sha256": "ab"}}\n{}\n',
                       "benchscore mira from-inspect"),
        "text.md": (b"notes\n", None),
        "empty": (b"", None),
    }
    for name, (data, expected) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert written_by(tmp_path / name) == expected, name


def _leaves(group: click.Group, ctx: click.Context, path: str):
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _leaves(cmd, click.Context(cmd, parent=ctx, info_name=name), f"{path} {name}")
        else:
            yield f"{path} {name}", cmd


def test_force_is_on_every_command_with_a_file_output_and_only_there():
    """Every command with a file output but rxn predict, which extends its own output (its resume refuses, by
    itself, a prediction file without its audit: tests/rxn/test_rxn_predict.py)."""
    seen = 0
    for name, cmd in _leaves(cli, click.Context(cli, info_name="benchscore"), "benchscore"):
        files = [p for p in cmd.params if p.name in OUTPUT_PARAMS and isinstance(p.type, click.Path)
                 and not p.type.dir_okay]
        forced = [p for p in cmd.get_params(click.Context(cmd)) if p.name == "force"]
        if files:
            assert isinstance(cmd, Command), name
        extends = getattr(cmd, "extends_output", False)
        assert extends == (name == "benchscore rxn predict"), name
        assert bool(forced) == (bool(files) and not extends), name
        seen += bool(forced)
    assert seen >= 20
