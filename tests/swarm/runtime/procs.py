"""Helpers of the fault tests: the CLI as a real process (its own process group, so a test can send
a signal to the whole group as a terminal does), waiting for a run to be under way, and the ledger's
own word on how often each task was completed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import orjson

from benchscore.swarm import open_pool

BENCHSCORE = [sys.executable, "-c", "from benchscore.cli import main; main()"]


def start(*args: object, **kwargs) -> subprocess.Popen:
    """``benchscore ARGS`` in a process group (and session) of its own."""
    return subprocess.Popen([*BENCHSCORE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True, **kwargs)


def run(*args: object, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*BENCHSCORE, *map(str, args)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=timeout)


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"still running after {timeout} s: {err[-2000:]}") from None
    return proc.returncode, out, err


def wait_for(cond: Callable[[], bool], proc: subprocess.Popen | None = None, timeout: float = 120) -> None:
    """Poll ``cond`` until true; fail at once if ``proc`` ended meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except Exception:  # noqa: BLE001 - the store may not exist yet, or be down for a moment
            pass
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the process ended (exit {proc.returncode}) before the condition held: "
                                 f"{proc.stderr.read()[-2000:] if proc.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def only_run(url: str) -> str:
    """The id of the one run in the store (``swarm stress`` picks a random one)."""
    with open_pool(url, "-") as pool:
        [run_id] = pool.list_runs()
    return run_id


def completions(url: str, run_id: str | None = None) -> int:
    """How many ``complete`` events the run's ledger holds now (``run_id`` None: the store's only run)."""
    with open_pool(url, run_id or only_run(url)) as pool:
        return sum(1 for e in pool.events() if e.kind == "complete")


def claimed(url: str, run_id: str) -> int:
    with open_pool(url, run_id) as pool:
        return pool.counts()["claimed"]


def completions_per_task(url: str, run_id: str) -> Counter:
    """task id -> number of ``complete`` events in the ledger (each task must have exactly one)."""
    with open_pool(url, run_id) as pool:
        return Counter(e.task_id for e in pool.events() if e.kind == "complete")


def assert_each_task_done_once(url: str, run_id: str, n: int) -> None:
    """Every one of the run's ``n`` tasks is done, with exactly one completion in the ledger, and
    the audit passes."""
    from benchscore.swarm import audit_pool

    per_task = completions_per_task(url, run_id)
    assert len(per_task) == n and set(per_task.values()) == {1}, per_task.most_common(3)
    with open_pool(url, run_id) as pool:
        assert pool.counts() == {"pending": 0, "claimed": 0, "done": n, "failed": 0}
        report = audit_pool(pool)
    assert report.verdict == "PASS", report.violations[:3]
    assert report.duplicate_claim_count == 0 and report.completions == n


def write_tasks(folder: Path, n: int, *, seconds: float = 0.0, capabilities: tuple[str, ...] = ("a", "b"),
                fail_every: int = 0, name: str = "tasks.jsonl") -> Path:
    """``n`` simulated tasks (``seconds`` of work each; every ``fail_every``-th fails its first attempt)."""
    lines = []
    for i in range(n):
        payload: dict = {"output": f"out {i}", "score": round((i % 10) / 10, 1), "seconds": seconds}
        if fail_every and i % fail_every == 0:
            payload["fail_attempts"] = 1
        lines.append(orjson.dumps({"capability": capabilities[i % len(capabilities)], "payload": payload}))
    path = folder / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def write_agents(folder: Path, names: list[str], capabilities: tuple[str, ...] = ("a", "b"),
                 name: str = "agents.json") -> Path:
    path = folder / name
    path.write_bytes(orjson.dumps([{"agent_id": a, "capabilities": list(capabilities)} for a in names]))
    return path


def one_error_line(stderr: str) -> str:
    """The single line of a failed command's stderr (no traceback, nothing else)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in stderr, stderr[-3000:]
    return lines[0]
