"""House rules that keep the four domains apart (DESIGN.md, Layout)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "benchscore"
DOMAINS = ("tcsexam", "mira", "rxn", "swarm")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


#: each room and the rooms it may import (besides itself): arrows only downward,
#: common <- stats <- sources <- results and the four domains <- publish <- cli (docs/development.md)
BELOW = {
    "common": (),
    "stats": ("common",),
    "sources": ("common",),
    "results": ("common", "stats", "sources"),
    **{d: ("common", "stats", "sources") for d in DOMAINS},
    "publish": ("common", "stats", "sources", "results", *DOMAINS),
}


def _room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "benchscore" else None


@pytest.mark.parametrize("room", sorted(BELOW))
def test_rooms_import_only_rooms_below(room):
    allowed = {room, *BELOW[room]}
    offenders = []
    for path in (SRC / room).rglob("*.py"):
        for mod in _imports(path):
            other = _room_of(mod)
            if mod == "benchscore" or other is None or other == "__init__":
                continue  # ``from benchscore import __version__``
            if other not in allowed:
                offenders.append(f"{path.relative_to(SRC)} imports {mod}")
    assert offenders == []


def test_every_room_is_placed():
    rooms = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms == set(BELOW)


def test_console_scripts_run_as_subprocesses():
    bindir = Path(sys.executable).parent
    for script in ("benchscore", "tcsexam"):
        exe = bindir / script
        if not exe.exists():
            pytest.fail(f"console script {script} is not installed next to {sys.executable}")
        out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert "Usage" in out.stdout


def test_schema_lists_and_rejects_unknown():
    from click.testing import CliRunner

    from benchscore.cli import cli

    runner = CliRunner()
    listing = runner.invoke(cli, ["schema"])
    assert listing.exit_code == 0
    bad = runner.invoke(cli, ["schema", "no-such-format"])
    assert bad.exit_code == 2
    assert bad.output.startswith("error: unknown format 'no-such-format'")


def test_schema_serialization_mode_shows_what_is_written():
    from click.testing import CliRunner

    from benchscore.cli import cli

    runner = CliRunner()
    read = orjson.loads(runner.invoke(cli, ["schema", "swarm-scenario-result"]).output)
    written = orjson.loads(runner.invoke(cli, ["schema", "swarm-scenario-result", "--mode", "serialization"]).output)
    # a FAIL check's one-line reason is computed when written, never read back
    check_read, check_written = read["$defs"]["Check"], written["$defs"]["Check"]
    assert "reason" not in check_read["properties"] and "reason" in check_written["properties"]
    assert "failures" in written["properties"] and "failures" not in read["properties"]
    assert runner.invoke(cli, ["schema", "swarm-task", "--mode", "nope"]).exit_code == 2
