"""Issue 39 point 2: Ctrl-C, once or twice, at each phase of ``benchscore demo`` and ``benchscore leaderboard``.

A fault-injection test through the real console script, in a process group of its own (as a terminal's
Ctrl-C, the signal goes to the whole group, page workers included). The command pauses at a named phase
(``BENCHSCORE_PAUSE_AT``, :func:`benchscore.common.interrupts.checkpoint`: it writes a marker file and
sleeps there); the test then sends SIGINT once, or twice 0.3 s apart (as ``timeout -s INT`` and an
impatient user do), and checks: exit 130 with one ``error:`` line and no traceback, nothing of the group
left running, the folder holding the earlier output byte for byte as before (nothing beside it either),
and a next run that works. The time from the first SIGINT to the exit is printed (``-s``); it is not
asserted (a loaded machine), only bounded by a watchdog that catches a hang.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "examples" / "results" / "logs"
_SCRIPT = Path(sys.executable).with_name("benchscore")
BENCHSCORE = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "benchscore"]
#: the demo's domains in these runs: two, so that its pages are drawn by two worker processes (the others add
#: time, not phases); the swarm's own worker processes are interrupted in a run of the swarm's demo alone
ONLY = ("tcsexam", "rxn")
HANG = 30.0  # seconds: a watchdog for a hang, not a timing promise


def _demo(out: Path, only: tuple[str, ...] = ONLY) -> list[str]:
    return [*BENCHSCORE, "demo", *(a for name in only for a in ("--only", name)), "--output-dir", str(out)]


def _leaderboard(out: Path) -> list[str]:
    return [*BENCHSCORE, "leaderboard", str(LOGS), "--metric", "quiz/match", "--output-dir", str(out)]


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (relative path -> the file's bytes, a link's target, or "dir")."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes()
    return out


def _group(pgid: int) -> list[str]:
    """The processes (pid and command) of the process group ``pgid`` still alive, zombies included."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, pgrp, ...
        if int(fields[2]) == pgid:
            found.append(f"{entry.name} {fields[0]} {cmdline.strip()}")
    return found


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)


def _interrupt(cmd: list[str], cwd: Path, phase: str, times: int) -> tuple[subprocess.Popen, str, float]:
    marker = cwd.parent / f"paused-{phase.replace(':', '-')}-{times}"
    marker.unlink(missing_ok=True)
    env = {**os.environ, "BENCHSCORE_PAUSE_AT": phase, "BENCHSCORE_PAUSE_FILE": str(marker)}
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert proc.poll() is None, f"exited ({proc.returncode}) before {phase}: {proc.stderr.read()}"
            assert time.monotonic() < deadline, f"never reached {phase}"
            time.sleep(0.05)
        time.sleep(0.1)  # from the marker into the pause
        first = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        if times == 2:
            time.sleep(0.3)  # the first one's clean-up is under way
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass  # the whole group is gone already
        _, stderr = proc.communicate(timeout=HANG)
        took = time.monotonic() - first
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    deadline = time.monotonic() + 5  # a killed worker is reaped by then
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group(proc.pid), f"left running after Ctrl-C at {phase}: {_group(proc.pid)}"
    marker.unlink(missing_ok=True)
    return proc, stderr, took


def _check_interrupted(proc: subprocess.Popen, stderr: str, took: float, phase: str, times: int) -> None:
    print(f"{phase} x{times}: exit {proc.returncode} {took:.2f} s after the first SIGINT")
    assert proc.returncode == 130, (phase, times, proc.returncode, stderr)
    assert stderr.splitlines() == ["error: interrupted (Ctrl-C); nothing was written"], (phase, times, stderr)


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory):
    """A folder holding one earlier demo's output (the folder Ctrl-C must leave as it was)."""
    work = tmp_path_factory.mktemp("ctrl-c-demo") / "work"
    work.mkdir()
    done = _run(_demo(work / "demo-out"), work)
    assert done.returncode == 0, done.stderr
    return work


@pytest.fixture(scope="module")
def board_folder(tmp_path_factory):
    work = tmp_path_factory.mktemp("ctrl-c-board") / "work"
    work.mkdir()
    done = _run(_leaderboard(work / "site"), work)
    assert done.returncode == 0, done.stderr
    return work


#: phase -> the domains the demo runs (into the same folder, which an earlier demo wrote)
DEMO_PHASES = {"demo:tcsexam": ONLY, "demo:rxn": ONLY, "swarm:workers": ("swarm",), "demo:pages": ONLY,
               "demo:index": ONLY, "replace:commit": ONLY}
BOARD_PHASES = ["leaderboard:build", "leaderboard:site", "replace:commit"]


@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("phase", DEMO_PHASES)
def test_ctrl_c_during_the_demo_leaves_its_folder_as_it_was(demo_folder, phase, times):
    before = _snapshot(demo_folder)
    proc, stderr, took = _interrupt(_demo(demo_folder / "demo-out", DEMO_PHASES[phase]), demo_folder, phase, times)
    _check_interrupted(proc, stderr, took, phase, times)
    after = _snapshot(demo_folder)
    assert sorted(after) == sorted(before), (phase, times, sorted(set(after) ^ set(before))[:5])
    assert [k for k in before if before[k] != after[k]] == [], (phase, times)


@pytest.mark.parametrize("times", [1, 2])
@pytest.mark.parametrize("phase", BOARD_PHASES)
def test_ctrl_c_during_the_leaderboard_leaves_its_folder_as_it_was(board_folder, phase, times):
    before = _snapshot(board_folder)
    proc, stderr, took = _interrupt(_leaderboard(board_folder / "site"), board_folder, phase, times)
    _check_interrupted(proc, stderr, took, phase, times)
    after = _snapshot(board_folder)
    assert sorted(after) == sorted(before), (phase, times, sorted(set(after) ^ set(before))[:5])
    assert [k for k in before if before[k] != after[k]] == [], (phase, times)


def test_the_next_run_after_ctrl_c_works(demo_folder, board_folder):
    """After the interrupted runs above (the module's order), the same commands replace their folders."""
    for cmd, work in ((_demo(demo_folder / "demo-out"), demo_folder),
                      (_leaderboard(board_folder / "site"), board_folder)):
        done = _run(cmd, work)
        assert done.returncode == 0, done.stderr
    assert (demo_folder / "demo-out" / ".benchscore-written.json").is_file()
    assert (board_folder / "site" / ".benchscore-written.json").is_file()
    shutil.rmtree(demo_folder)
