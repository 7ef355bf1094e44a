"""`rxn build-mc/build-fib --name` (issue 18, point 13): a stable build folder that a second run of the
same command replaces, all or nothing, and only when it is that command's own earlier build, unchanged.
Without `--name` the folder is timestamped and an existing one is refused, as before."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

EPOCH = "1767225600"
REPO = Path(__file__).resolve().parents[2]
TABLES = REPO / "examples" / "rxn" / "literature_tables.json"
BUILDS = {"build-mc": "multiple_choice", "build-fib": "fill_in_blank"}


def run(*args, expect=0, epoch=EPOCH):
    result = CliRunner().invoke(cli, ["rxn", *map(str, args)], env={"SOURCE_DATE_EPOCH": epoch})
    assert result.exit_code == expect, (result.output, result.stderr if result.stderr_bytes else "")
    return result


def build(command: str, out: Path, *extra, expect=0, epoch=EPOCH):
    return run(command, "--tables", TABLES, "--output-dir", out, *extra, expect=expect, epoch=epoch)


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {p.name: None if p.is_dir() else p.read_bytes() for p in sorted(folder.iterdir())}


def one_line(result) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("command", sorted(BUILDS))
def test_a_named_build_run_twice_replaces_its_own_folder_with_the_same_bytes(tmp_path, command):
    build(command, tmp_path, "--name", "lit")
    first = snapshot(tmp_path / "lit")
    build(command, tmp_path, "--name", "lit")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lit"], "a second folder or a temporary one was left"
    assert snapshot(tmp_path / "lit") == first
    written = orjson.loads(first[".benchscore-written.json"])
    assert written["written_by"] == f"benchscore rxn {command}"
    assert written["entries"] == sorted(n for n in first if n != ".benchscore-written.json")


@pytest.mark.parametrize("command", sorted(BUILDS))
def test_a_second_build_at_another_time_still_replaces_the_named_folder(tmp_path, command):
    """Without SOURCE_DATE_EPOCH pinned, the timestamps differ: the named folder is still one folder."""
    build(command, tmp_path, "--name", "lit")
    build(command, tmp_path, "--name", "lit", epoch="1767229200")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lit"]
    doc = orjson.loads((tmp_path / "lit" / f"{BUILDS[command]}_{'all_varying' if 'mc' in command else 'all_blank'}"
                        ".json").read_bytes())
    assert doc["provenance"]["created_at"] == "2026-01-01T01:00:00Z"


def test_without_a_name_an_existing_timestamped_folder_is_refused_and_the_line_names_the_option(tmp_path):
    build("build-mc", tmp_path)
    r = build("build-mc", tmp_path, expect=2)
    assert "20260101_000000_multiple_choice: already exists" in one_line(r) and "--name" in one_line(r)


@pytest.mark.parametrize("how", ["foreign file", "foreign folder", "changed file", "link"])
def test_a_named_folder_holding_what_the_build_did_not_write_is_refused_and_kept(tmp_path, how):
    build("build-mc", tmp_path, "--name", "lit")
    folder = tmp_path / "lit"
    if how == "foreign file":
        (folder / "result.json").write_text("{}")
    elif how == "foreign folder":
        (folder / "mine").mkdir()
    elif how == "changed file":
        with open(folder / "multiple_choice_all_varying.json", "ab") as fh:
            fh.write(b" ")
    else:
        (folder / "report.md").unlink()
        (folder / "report.md").symlink_to(tmp_path / "elsewhere.md")
    before = snapshot(folder) if how != "link" else None
    r = build("build-mc", tmp_path, "--name", "lit", expect=2)
    line = one_line(r)
    assert f"{folder}: benchscore rxn build-mc --name replaces only a build folder it wrote" in line
    assert "choose another --name" in line
    expected = {"foreign file": "'result.json', which benchscore rxn build-mc did not write",
                "foreign folder": "'mine', which benchscore rxn build-mc did not write",
                "changed file": "'multiple_choice_all_varying.json', changed since benchscore rxn build-mc wrote it",
                "link": "'report.md', which benchscore rxn build-mc did not write"}[how]
    assert expected in line
    if before is not None:
        assert snapshot(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lit"]


@pytest.mark.parametrize("what", ["user folder", "other build", "file"])
def test_a_name_that_is_not_this_commands_build_is_refused(tmp_path, what):
    target = tmp_path / "lit"
    if what == "user folder":
        target.mkdir()
        (target / "notes.txt").write_text("mine")
        needle = "'notes.txt', which benchscore rxn build-mc did not write"
    elif what == "other build":
        build("build-fib", tmp_path, "--name", "lit")
        needle = "is the build folder of benchscore rxn build-fib"
    else:
        target.write_text("mine")
        needle = "is not a folder"
    r = build("build-mc", tmp_path, "--name", "lit", expect=2)
    assert needle in one_line(r)
    if what == "user folder":
        assert (target / "notes.txt").read_text() == "mine"
    elif what == "file":
        assert target.read_text() == "mine"


def test_an_empty_folder_of_that_name_is_built_into(tmp_path):
    (tmp_path / "lit").mkdir()
    build("build-mc", tmp_path, "--name", "lit")
    assert (tmp_path / "lit" / "multiple_choice_all_varying.json").is_file()


def test_the_current_folder_is_never_replaced(tmp_path, monkeypatch):
    build("build-mc", tmp_path, "--name", "lit")
    monkeypatch.chdir(tmp_path / "lit")
    r = build("build-mc", tmp_path, "--name", "lit", expect=2)
    assert "is the current folder" in one_line(r)


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../lit", ".hidden"])
def test_a_name_that_is_not_one_plain_folder_name_is_a_usage_error(tmp_path, name):
    r = build("build-mc", tmp_path, "--name", name, expect=2)
    assert "--name" in one_line(r)
    assert list(tmp_path.iterdir()) == []


def test_the_name_is_in_the_recorded_command_and_verify_reproduces_the_build(tmp_path):
    build("build-mc", tmp_path, "--name", "lit")
    path = tmp_path / "lit" / "multiple_choice_all_varying.json"
    prov = orjson.loads(path.read_bytes())["provenance"]
    assert prov["arguments"]["--name"] == "lit"
    assert "--name lit" in (tmp_path / "lit" / "report.md").read_text()
    r = CliRunner().invoke(cli, ["verify", str(path), "--search", str(REPO / "examples")])
    assert r.exit_code == 0, r.output
    assert "reproduced" in r.output


def test_the_folders_own_evaluator_leaves_the_folder_as_the_build_wrote_it(tmp_path):
    """Was: running evaluate_multiple_choice.py inside the folder wrote __pycache__ there, which the
    next `--name` build would have had to refuse as not its own."""
    build("build-mc", tmp_path, "--name", "lit")
    folder = tmp_path / "lit"
    before = snapshot(folder)
    proc = subprocess.run([sys.executable, "-I", "-S", "evaluate_multiple_choice.py", "--dataset",
                           "multiple_choice_single_varying.json", "--prediction", "example_prediction_single_varying.json"],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert snapshot(folder) == before
    build("build-mc", tmp_path, "--name", "lit")


@pytest.mark.parametrize("command", sorted(BUILDS))
def test_a_failed_replacement_leaves_the_earlier_build_whole_and_no_temporary_folder(tmp_path, command):
    """A file size limit (the kernel's EFBIG, the same path as a full disk) while the new build is written."""
    build(command, tmp_path, "--name", "lit")
    before = snapshot(tmp_path / "lit")

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (600, 600))

    proc = subprocess.run([sys.executable, "-c", "from benchscore.cli import main; main()", "rxn", command,
                           "--tables", str(TABLES), "--output-dir", str(tmp_path), "--name", "lit"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, preexec_fn=limit_file_size,
                          env=dict(os.environ, SOURCE_DATE_EPOCH="1767229200"), timeout=300)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    line = one_line(proc)
    assert "File too large" in line and str(tmp_path / "lit") in line and ".tmp" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lit"]
    assert snapshot(tmp_path / "lit") == before
