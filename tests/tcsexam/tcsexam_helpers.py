"""Small helpers shared by the tcsexam tests."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from benchscore.tcsexam.cli import group

ISSUE_REFERENCE = {
    "reference_id": "paper-k3-fixed-260925",
    "suite": "lite",
    "scale_floors": {"relative": 0.02, "absolute": 1e-9},
    "tasks": {
        "maxcut-mqlib": {
            "kind": "objective",
            "direction": "maximize",
            "instances": {"g1": [10, 12, 14], "g2": [5.5, None, 6]},
        }
    },
    "unscored_reference_instances": {"maxcut-mqlib": ["g9"]},
}


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def run(*args: str, env: dict | None = None):
    """Invoke the tcsexam group; stderr is kept apart from stdout."""
    runner = CliRunner()
    return runner.invoke(group, [str(a) for a in args], env=env, catch_exceptions=False)


def assert_one_line_error(result, *fragments: str) -> str:
    """Exit 2, one line on stderr starting with 'error:', no traceback, each fragment present."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.stderr)
    err = result.stderr.strip()
    assert err.startswith("error: "), err
    assert "\n" not in err, err
    assert "Traceback" not in result.output + result.stderr
    for frag in fragments:
        assert frag in err, (frag, err)
    return err
