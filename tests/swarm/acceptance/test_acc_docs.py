"""docs/swarm.md's seed-section-14 table names real files and real symbols."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "swarm.md"


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
            if isinstance(node, ast.ClassDef):
                out |= {f"{node.name}.{n.name}" for n in node.body if isinstance(n, ast.FunctionDef)}
    return out


def test_section_14_table_points_at_existing_symbols():
    text = DOC.read_text()
    table = text.split("### Seed section 14 in this code base", 1)[1].split("\n## ", 1)[0]
    refs = re.findall(r"`((?:src|benchmarks)/[\w/.]+\.py)(?:::(\w+(?:\.\w+)?))?`", table)
    assert len(refs) >= 14
    for path, symbol in refs:
        p = ROOT / path
        assert p.is_file(), path
        if symbol:
            assert symbol in _defined(p), f"{path}::{symbol}"
    for bare in re.findall(r"/ `(\w+(?:\.\w+)?)`", table):  # 'a::x / `y`' means y in the same file
        assert any(bare in _defined(ROOT / p) for p, _ in refs), bare
