"""Fixtures for the HTML report: the demo's outputs (run once per session) and real swarm L01/L02/audit outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from report_helpers import invoke


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory) -> Path:
    """``benchscore demo`` run once: its outputs, ``index.html`` and one page per domain."""
    out = tmp_path_factory.mktemp("report-demo") / "demo-out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1767225600")
        result = invoke("demo", "--output-dir", str(out))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="session")
def swarm_outputs(tmp_path_factory, demo_out) -> dict[str, Path]:
    """Real outputs of ``swarm stress`` (small), ``swarm budget`` and ``swarm audit --history``."""
    folder = tmp_path_factory.mktemp("report-swarm")
    shutil.copyfile(demo_out / "swarm" / "run.db", folder / "run.db")  # the audit must not touch the demo folder
    store = f"sqlite:///{folder / 'stress.db'}"
    paths = {"L01": folder / "l01.json", "L02": folder / "l02.json", "audit": folder / "audit-history.json"}
    runs = [
        ("swarm", "stress", "--agents", "2", "--tasks", "200", "--store", store, "--output", str(paths["L01"])),
        ("swarm", "budget", "--output", str(paths["L02"])),
        ("swarm", "audit", "demo", "--store", f"sqlite:///{folder / 'run.db'}", "--history",
         "--output", str(paths["audit"])),
    ]
    for args in runs:
        result = invoke(*args)
        assert result.exit_code == (1 if args[1] == "stress" else 0), (args, result.output)  # 1: L01 reduced
    return paths


@pytest.fixture(scope="session")
def leaderboard_out(tmp_path_factory) -> Path:
    """``benchscore leaderboard`` run once on the README's example logs (examples/results/logs): its site."""
    site = tmp_path_factory.mktemp("report-leaderboard") / "site"
    logs = Path(__file__).resolve().parents[2] / "examples" / "results" / "logs"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1767225600")
        result = invoke("leaderboard", str(logs), "--output-dir", str(site))
    assert result.exit_code == 0, result.output
    return site
