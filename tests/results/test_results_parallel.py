"""``--jobs``: the per-file step mapped over worker processes (benchscore.results.parallel, issue 37 point 2)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from benchscore.common.errors import BadInput
from benchscore.results.parallel import jobs_of, map_files


def _pid_and_square(x: int) -> tuple[int, int]:
    time.sleep(0.05 * (5 - x))  # the first items finish last
    return os.getpid(), x * x


def _refuse_odd(x: int, wait: float = 0.0) -> int:
    if x % 2:
        time.sleep(wait * (5 - x))
        raise BadInput(f"odd {x}", source=f"file-{x}.eval", record=f"sample {x}", field="id")
    return x


def test_the_results_come_in_the_items_order_from_other_processes():
    done = []
    got = map_files(_pid_and_square, range(5), jobs=3, on_done=lambda item, r: done.append(item))
    assert [r[1] for r in got] == [0, 1, 4, 9, 16]
    assert os.getpid() not in {r[0] for r in got}  # read in worker processes
    assert sorted(done) == [0, 1, 2, 3, 4]
    assert [r[1] for r in map_files(_pid_and_square, range(5), jobs=1)] == [0, 1, 4, 9, 16]
    assert {r[0] for r in map_files(_pid_and_square, range(3), jobs=1)} == {os.getpid()}
    assert jobs_of(None) == (os.cpu_count() or 1) and jobs_of(3) == 3


@pytest.mark.parametrize("jobs", [1, 3])
def test_the_first_refused_item_in_order_is_refused_with_its_source_record_and_field(jobs):
    with pytest.raises(BadInput) as caught:
        map_files(partial(_refuse_odd, wait=0.05), range(6), jobs=jobs)  # 5 is refused before 1 with jobs 3
    exc = caught.value
    assert (exc.detail, exc.source, exc.record, exc.field) == ("odd 1", "file-1.eval", "sample 1", "id")
    assert str(exc) == "file-1.eval: sample 1: field 'id': odd 1"


SLOW = '''
import os, sys, time
from benchscore.results.parallel import map_files

def slow(x):
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()  # this worker is inside its task
    time.sleep(60)
    return x

if __name__ == "__main__":
    try:
        map_files(slow, range(4), jobs=2)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
'''


def _children(pid: int) -> set[int]:
    try:
        return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see the worker processes")
def test_ctrl_c_ends_the_workers_and_the_command_cleanly(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while workers read: every worker
    ends, no traceback, and the interrupt reaches the command (which exits 130 here)."""
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    inside = tmp_path / "inside"
    inside.mkdir()
    proc = subprocess.Popen([sys.executable, str(script), str(inside)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # a loaded machine starts processes slowly
        while len(list(inside.iterdir())) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        workers = _children(proc.pid)
        assert len(list(inside.iterdir())) >= 2 and len(workers) >= 2, \
            f"the pool's workers never started: {proc.poll()} {proc.stderr.read() if proc.poll() is not None else ''}"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, out + err
    assert out.strip() == "interrupted" and err.strip() == "", err  # no "Process ForkPoolWorker-1: Traceback ..."
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
