"""The shared command rules in benchscore.common: path guard, interrupted runs, plain tables, JSONL message."""

from __future__ import annotations

import io
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from benchscore.common.atomic import atomic_write_json, replaced_directory
from benchscore.common.cli import group, refuse_overwriting_inputs
from benchscore.common.errors import BadInput
from benchscore.common.guard import inputs_guard
from benchscore.common.readers import read_json, read_jsonl
from benchscore.common.terminal import plain_table, print_table, progress


def test_a_file_read_inside_a_command_cannot_be_replaced(tmp_path):
    src = tmp_path / "in.json"
    src.write_text('{"a": 1}')
    with inputs_guard():
        read_json(src)
        with pytest.raises(BadInput, match="also an input"):
            atomic_write_json(src, {"a": 2})
        atomic_write_json(tmp_path / "other.json", {"a": 2})
    assert src.read_text() == '{"a": 1}'
    atomic_write_json(src, {"a": 3})  # outside a command nothing is recorded


def test_an_output_read_as_its_previous_content_may_be_replaced_any_other_read_makes_an_input(tmp_path):
    from benchscore.common.readers import read_bytes

    out = tmp_path / "out.json"
    out.write_text('{"a": 1}')
    with inputs_guard():
        read_bytes(out, existing_output=True)  # to compare with what is about to be written
        atomic_write_json(out, {"a": 2})
        read_json(out)  # read as an input (e.g. --reference out.json --output out.json)
        with pytest.raises(BadInput, match="also an input"):
            atomic_write_json(out, {"a": 3})


def test_refuse_overwriting_inputs(tmp_path):
    f = tmp_path / "data" / "in.json"
    f.parent.mkdir()
    f.write_text("{}")
    with pytest.raises(BadInput, match="also an input"):
        refuse_overwriting_inputs([f], [("--output", tmp_path / "data" / ".." / "data" / "in.json")])
    with pytest.raises(BadInput, match="lies in the input folder"):
        refuse_overwriting_inputs([f.parent], [("--output", f.parent / "new.json")])
    with pytest.raises(BadInput, match="lies in the input folder"):
        refuse_overwriting_inputs([f.parent], [("--output-dir", f.parent)])
    refuse_overwriting_inputs([f], [("--output", f.parent / "beside.json")])  # beside an input file is fine
    link = tmp_path / "link.json"
    link.symlink_to(f)
    with pytest.raises(BadInput, match="also an input"):
        refuse_overwriting_inputs([f], [("--output", link)])


def test_replaced_directory_restores_the_old_folder_on_error(tmp_path):
    target = tmp_path / "demo-out"
    with replaced_directory(target) as d:
        (d / "old.txt").write_text("old")
    manifest = ".benchscore-written.json"
    assert sorted(p.name for p in target.iterdir()) == [manifest, "old.txt"]
    with pytest.raises(KeyboardInterrupt), replaced_directory(target) as d:
        (d / "new.txt").write_text("new")
        raise KeyboardInterrupt
    assert sorted(p.name for p in target.iterdir()) == [manifest, "old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo-out"]
    with replaced_directory(target) as d:
        (d / "new.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == [manifest, "new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo-out"]


def test_replaced_directory_replaces_only_what_it_wrote(tmp_path):
    target = tmp_path / "demo-out"
    target.mkdir()
    (target / "old.txt").write_text("someone else's")
    with pytest.raises(BadInput, match="holds 'old.txt', which benchscore demo did not write"), \
            replaced_directory(target):
        pytest.fail("refused before anything is written")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    (target / "old.txt").unlink()
    with replaced_directory(target, owner="another tool") as d:  # empty: fine
        (d / "x").write_text("x")
    with pytest.raises(BadInput, match="which benchscore demo did not write"), replaced_directory(target):
        pass  # written by another owner: not the demo's


@group("t")
def _t() -> None:
    """test group"""


@_t.command()
@click.option("--n", type=int, required=True)
def ctrl_c(n: int) -> None:
    raise KeyboardInterrupt


@_t.command()
@click.option("--input", "input_", type=click.Path(dir_okay=False, path_type=Path), required=True)
def needs_file(input_: Path) -> None:
    click.echo("ran")


@pytest.mark.parametrize("args, code, fragment", [
    (["ctrl-c", "--n", "1"], 130, "interrupted (Ctrl-C); nothing was written"),
    (["ctrl-c", "--n", "x"], 2, "'x' is not a valid integer"),
    (["ctrl-c"], 2, "Missing option '--n'"),
    (["nope"], 2, "No such command 'nope'"),
])
def test_errors_are_one_line_with_their_exit_code(args, code, fragment):
    result = CliRunner().invoke(_t, args)
    assert result.exit_code == code
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], result.stderr


def test_a_folder_where_a_file_is_expected_is_one_line(tmp_path):
    result = CliRunner().invoke(_t, ["needs-file", "--input", str(tmp_path)])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and "is a directory" in result.stderr


def test_plain_table_is_aligned_and_never_wrapped():
    long = "x" * 300
    text = plain_table("title", ["check", "passed", "reason"], [("S07", False, long), ("S08", True, None)])
    lines = text.splitlines()
    assert lines[0] == "title"
    assert lines[2].split()[:2] == ["S07", "no"] and lines[2].endswith(long)
    assert lines[3].split() == ["S08", "yes", "-"]


def test_print_table_writes_plain_lines_when_piped(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr("sys.stdout", buf)
    print_table("t", ["a", "b"], [("r", 1.5), ("s", 2 / 3)])
    assert buf.getvalue() == "t\na       b\nr     1.5\ns  0.6667\n"  # 4 significant digits


def test_progress_is_silent_when_stderr_is_not_a_terminal(capsys):
    with progress() as bar:
        task = bar.add_task("work", total=2)
        bar.advance(task, 2)
    assert capsys.readouterr().err == ""


def test_a_json_document_given_as_jsonl_says_so(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text('{\n  "case_id": "a",\n  "repetition": 1\n}\n')
    with pytest.raises(BadInput, match="expected one JSON object per line"):
        read_jsonl(f)
    f.write_text('[\n{"a": 1},\n{"a": 2}\n]\n')
    with pytest.raises(BadInput, match="expected one JSON object per line.*an array"):
        read_jsonl(f)
    f.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(BadInput, match="malformed JSON"):  # a broken line stays a broken line
        read_jsonl(f)


def test_print_table_on_a_narrow_terminal_prints_plain_lines_instead_of_cutting_cells(monkeypatch):
    import benchscore.common.terminal as report

    class Tty(io.StringIO):
        def isatty(self):
            return True

    buf = Tty()
    monkeypatch.setattr("sys.stdout", buf)
    from rich.console import Console

    monkeypatch.setattr(report, "_console", lambda err: Console(file=buf, width=40, force_terminal=True))
    long = "case-with-a-long-identifier-" * 3
    print_table("t", ["case", "value"], [(long, 1.0)])
    assert long in buf.getvalue() and "…" not in buf.getvalue()


def test_two_outputs_naming_the_same_file_are_refused(tmp_path):
    out = tmp_path / "o.json"
    with pytest.raises(BadInput, match="name the same file"):
        refuse_overwriting_inputs([], [("--output", out), ("--audit", tmp_path / "." / "o.json")])


def test_replaced_directory_refuses_a_file_of_its_own_changed_since(tmp_path):
    # as rxn build-mc --name does: the manifest records each file's sha256, and a file edited since is the
    # user's now (benchscore verify flags it): refused, one line, nothing replaced
    target = tmp_path / "demo-out"
    with replaced_directory(target) as d:
        (d / "sub").mkdir()
        (d / "sub" / "index.json").write_text("{}")
        (d / "page.html").write_text("<p>")
    (target / "sub" / "index.json").write_text('{"edited": true}')
    with pytest.raises(BadInput, match=r"holds 'sub/index.json', changed since benchscore demo wrote it; .*delete "
                                       r"the folder yourself"), replaced_directory(target):
        pytest.fail("refused before anything is written")
    assert (target / "sub" / "index.json").read_text() == '{"edited": true}'
    (target / "sub" / "index.json").unlink()  # removed: nothing of the user's to lose
    with replaced_directory(target) as d:
        (d / "new.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == [".benchscore-written.json", "new.txt"]
