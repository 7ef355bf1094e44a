"""The rxn task through inspect_ai against the real local model (BENCHSCORE_LIVE=1, scripts/live-gateway.sh start),
then `rxn eval-mc --from-inspect`. Asserts structure and honesty only, never quality."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_inspect_rxn import TASK_FILE, inspect_metrics, rxn, same_metrics

pytestmark = [pytest.mark.live, pytest.mark.inspect, pytest.mark.usefixtures("inspect_ai_installed")]

LIMIT = 10


def test_rxn_mc_through_inspect_ai_against_the_live_gateway(live_gateway, tmp_path):
    url, model = live_gateway
    r = rxn("build-mc", "--bundled", "deoxyfluorination", "--output-dir", tmp_path / "build")
    assert r.exit_code == 0, r.output
    (dataset,) = (tmp_path / "build").glob("*_multiple_choice/multiple_choice_all_varying.json")
    env = dict(os.environ, LOCAL_BASE_URL=url, LOCAL_API_KEY=os.environ.get("BENCHSCORE_GATEWAY_API_KEY", "none"))
    proc = subprocess.run([str(Path(sys.executable).parent / "inspect"), "eval", f"{TASK_FILE}@rxn_mc", "-T",
                           f"dataset={dataset}", "--model", f"openai-api/local/{model}", "--limit", str(LIMIT),
                           "--log-dir", str(tmp_path / "logs"), "--display", "none"],
                          env=env, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-4000:]
    (log,) = (tmp_path / "logs").glob("*.eval")
    out = tmp_path / "eval.json"
    r = rxn("eval-mc", "--dataset", dataset, "--from-inspect", log, "--output", out)
    assert r.exit_code == 0, r.output
    overall = json.loads(out.read_text())["overall"]
    same_metrics(inspect_metrics(log), overall)
    n = len(json.loads(dataset.read_text())["samples"])
    assert overall["num_samples"] == n and overall["num_missing"] >= n - LIMIT  # the rest was not asked


def test_the_readme_inspect_section_against_the_live_gateway(live_gateway):
    """The README's inspect_ai block with a model, run as written from the repository root (it writes under
    out/, which git ignores)."""
    import re
    import shutil

    url, model = live_gateway
    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text()
    block = re.findall(r"```bash\n(.+?)\n```", text.split("\n## inspect_ai\n", 1)[1].split("\n## ", 1)[0],
                       flags=re.S)[1]
    shutil.rmtree(root / "out" / "inspect-logs", ignore_errors=True)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=root, env=env, capture_output=True,
                          text=True, timeout=3600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads((root / "out" / "rxn" / "eval_inspect.json").read_text())
    assert result["overall"]["num_samples"] - result["overall"]["num_missing"] <= 20
