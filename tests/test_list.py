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


def test_list_never_cuts_a_description():
    """Issue 18, point 12: descriptions were cut at 120 characters ("... participating agents,...")."""
    import inspect

    from benchscore.common.models import plain_text

    text = _listing()
    assert not [line for line in text.splitlines() if line.rstrip().endswith("...")]
    for path, command in _leaves(cli, ()):
        first = plain_text(" ".join(inspect.cleandoc(command.help or "").split("\n\n", 1)[0].split()))
        assert f"command    benchscore {path}  {first}\n" in text, path
    for name in DOMAINS:
        for key, model in getattr(_domain(name), "FORMATS", {}).items():
            first = plain_text(" ".join(inspect.cleandoc(model.__doc__ or "").split("\n\n", 1)[0].split()))
            assert f"format     {key}  {first}\n" in text, key
    assert any(len(line) > 140 for line in text.splitlines())  # long descriptions are there, whole
    assert ":func:`" not in text and "``" not in text  # issue 32: no docstring markup


def test_swarm_accept_takes_either_case_and_shows_the_documented_one(tmp_path):
    """Issue 18, point 12: the usage line showed {s07|...} while the docs write S07."""
    usage = CliRunner().invoke(cli, ["swarm", "accept", "--help"]).stdout
    assert "{S07|S08|S09|S10|L01|L02|all}" in usage
    for given in ("l02", "L02"):
        out = tmp_path / f"{given}.json"
        result = CliRunner().invoke(cli, ["swarm", "accept", given, "--output", str(out)])
        assert result.exit_code == 0, result.output
        assert "reproduce: benchscore swarm accept L02 " in result.stdout
        assert orjson.loads(out.read_bytes())["scenario"] == "L02"
    bad = CliRunner().invoke(cli, ["swarm", "accept", "s99"])
    assert bad.exit_code == 2 and "'S07', 'S08'" in bad.stderr
