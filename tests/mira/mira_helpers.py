"""Helpers for the mira tests: write inputs, run `benchscore mira ...` through click's CliRunner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from benchscore.mira.cli import group

DATA = Path(__file__).resolve().parents[2] / "src" / "benchscore" / "mira" / "data"


def write_json(path: Path, obj: Any) -> Path:
    path.write_bytes(orjson.dumps(obj))
    return path


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def run(*args: str):
    return CliRunner().invoke(group, [str(a) for a in args], catch_exceptions=False)
