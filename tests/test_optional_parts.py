"""Optional parts (inspect_ai, lm-eval, Chromium) skip with their reason, or fail under their
``BENCHSCORE_REQUIRE_*`` switch, before any fixture of the test runs, whatever that fixture's scope:
the README's test command on a fresh venv (no lmeval extra) must not error in a module-scoped fixture."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).parent / "conftest.py"

MODULE = '''
import pytest

pytestmark = pytest.mark.usefixtures("lm_eval_installed")


@pytest.fixture
def lm_eval_installed():
    """function-scoped: without the hook, the module-scoped fixture below would run first"""
    import lm_eval
    return lm_eval


@pytest.fixture(scope="module")
def runs():
    import lm_eval  # the expensive part that needs the optional package
    return lm_eval


def test_uses_the_runs(runs):
    assert runs
'''


def run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "shim" / "lm_eval").mkdir(parents=True, exist_ok=True)
    (tmp_path / "shim" / "lm_eval" / "__init__.py").write_text('raise ImportError("simulated: no lm_eval here")\n')
    (tmp_path / "suite").mkdir(exist_ok=True)
    shutil.copy(CONFTEST, tmp_path / "suite" / "conftest.py")
    (tmp_path / "suite" / "test_optional.py").write_text(MODULE)
    (tmp_path / "suite" / "pytest.ini").write_text("[pytest]\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BENCHSCORE_REQUIRE_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path / "suite")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path / "suite",
        env=dict(clean, PYTHONPATH=os.pathsep.join([str(tmp_path / "shim"), clean.get("PYTHONPATH", "")]), **env))


def test_a_missing_optional_part_skips_before_a_module_scoped_fixture(tmp_path):
    proc = run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout and "error" not in proc.stdout.lower()
    assert "lm-evaluation-harness is not importable (simulated: no lm_eval here)" in proc.stdout
    assert "pip install -e '.[lmeval]'" in proc.stdout


def test_a_missing_optional_part_fails_under_its_switch(tmp_path):
    proc = run(tmp_path, BENCHSCORE_REQUIRE_LMEVAL="1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "BENCHSCORE_REQUIRE_LMEVAL=1" in proc.stdout
    assert "simulated: no lm_eval here" in proc.stdout



def test_a_folder_named_like_the_part_is_not_the_part(tmp_path, monkeypatch):
    """tests/results/lm_eval (the tests' lm_eval runner) is on sys.path while those tests run: without lm_eval
    installed, ``import lm_eval`` finds that folder as an empty namespace package; that is not the part."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("benchscore_tests_conftest_copy", CONFTEST)
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    (tmp_path / "bs_probe_part").mkdir()
    (tmp_path / "bs_probe_part" / "runner.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    why = conftest._import_error("bs_probe_part")
    assert why is not None and "only a folder of that name" in why and str(tmp_path / "bs_probe_part") in why
    assert conftest._import_error("json") is None
    sys.modules.pop("bs_probe_part", None)
