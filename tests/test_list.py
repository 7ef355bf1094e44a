"""`benchscore list`: every domain, command, metric id and format; the metric ids are the ones outputs carry."""

from __future__ import annotations

import re

import orjson
from click.testing import CliRunner

from benchscore.cli import DOMAINS, _domain, _leaves, cli


def _listing() -> str:
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_list_names_every_command_and_format():
    text = _listing()
    for path, _ in _leaves(cli, ()):
        assert f"command    benchscore {path} " in text, path
    for name in DOMAINS:
        for key in getattr(_domain(name), "FORMATS", {}):
            assert f"format     {key} " in text, key


def _pattern(metric_id: str) -> re.Pattern:
    parts = re.split(r"\{[a-z_]+\}", metric_id)
    return re.compile(".+".join(map(re.escape, parts)) + r"\Z")


def test_every_metric_id_a_demo_output_carries_is_listed(tmp_path, pinned_time):
    out = tmp_path / "demo"
    result = CliRunner().invoke(cli, ["demo", "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    seen = 0
    for name in DOMAINS:
        patterns = [_pattern(m) for m in getattr(_domain(name), "METRIC_IDS", {})]
        assert patterns, f"{name} declares no METRIC_IDS"
        for path in (out / name).rglob("*.json"):
            doc = orjson.loads(path.read_bytes())
            metric = doc.get("provenance", {}).get("metric_id") if isinstance(doc, dict) else None
            if metric is None:
                continue
            seen += 1
            assert any(p.match(metric) for p in patterns), f"{path}: {metric} is not in {name}.cli.METRIC_IDS"
    assert seen > 10
