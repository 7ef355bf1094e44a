from __future__ import annotations

import os

import click
import pytest
from click.testing import CliRunner

from benchscore.common import atomic_directory, atomic_write_json
from benchscore.common.cli import group
from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance
from benchscore.stats.intervals import phi, sample_std


def test_atomic_write_json_replaces_and_leaves_no_temp(tmp_path):
    p = tmp_path / "sub" / "out.json"
    atomic_write_json(p, {"a": 1})
    atomic_write_json(p, {"a": 2})
    assert p.read_text() == '{\n  "a": 2\n}\n'
    assert sorted(os.listdir(p.parent)) == ["out.json"]


def test_atomic_outputs_get_ordinary_modes(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "f.json", {})
        with atomic_directory(tmp_path / "d"):
            pass
    finally:
        os.umask(old)
    assert (tmp_path / "f.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "d").stat().st_mode & 0o777 == 0o755


def test_atomic_write_failure_leaves_nothing(tmp_path):
    p = tmp_path / "out.json"
    with pytest.raises(TypeError):
        atomic_write_json(p, {"a": object()})
    assert os.listdir(tmp_path) == []


def test_unwritable_output_is_one_line_bad_input(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(BadInput, match=r"file/out\.json: cannot write the output"):
        atomic_write_json(blocker / "out.json", {"a": 1})
    with pytest.raises(BadInput, match="cannot write the output"):
        with atomic_directory(blocker / "d"):
            pass


def test_atomic_directory(tmp_path):
    target = tmp_path / "build"
    with pytest.raises(RuntimeError):
        with atomic_directory(target) as d:
            (d / "x.txt").write_text("partial")
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []
    with atomic_directory(target) as d:
        (d / "x.txt").write_text("whole")
    assert (target / "x.txt").read_text() == "whole"


def test_provenance_pinned_and_hashes(tmp_path, pinned_time):
    f = tmp_path / "in.json"
    f.write_bytes(b"[]")
    block = provenance("metric-x", {"records": f, "raw": b"abc"}, reference={"id": "r"}, seed=7)
    assert block["created_at"] == "2026-01-01T00:00:00Z"
    assert block["inputs"]["records"] == {
        "name": "in.json",
        "sha256": "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
    }
    assert block["inputs"]["raw"]["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert block["metric_id"] == "metric-x" and block["seed"] == 7 and block["reference"] == {"id": "r"}


def test_phi_and_std():
    assert phi(0.0) == 0.5
    assert abs(phi(1.959963984540054) - 0.975) < 1e-12
    assert sample_std([10, 12, 14]) == 2.0
    with pytest.raises(ValueError):
        sample_std([1.0])


def test_group_prints_one_line_and_exits_2():
    @group("t")
    def g() -> None:
        pass

    @g.command()
    def bad() -> None:
        raise BadInput("expected a number", source="f.csv", record="line 3", field="score")

    @g.command()
    def good() -> None:
        click.echo("fine")

    runner = CliRunner()
    r = runner.invoke(g, ["bad"])
    assert r.exit_code == 2
    assert r.output == "error: f.csv: line 3: field 'score': expected a number\n"
    assert runner.invoke(g, ["good"]).output == "fine\n"
