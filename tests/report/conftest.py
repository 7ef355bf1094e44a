"""Fixtures for the HTML report: the demo's outputs (run once per session) and real swarm L01/L02/audit outputs."""

from __future__ import annotations

import os
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


CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by playwright (never `playwright install`); skipped when it is
    missing, unless BENCHSCORE_REQUIRE_BROWSER=1 (CI), which makes a missing browser a failure."""
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is not installed (apt-get install chromium)"
        if os.environ.get("BENCHSCORE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason}; BENCHSCORE_REQUIRE_BROWSER=1")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
