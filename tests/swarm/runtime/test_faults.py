"""Issue 15 points 10-12 (swarm half): a full disk under the SQLite store, Ctrl-C sent to the whole
process group, a corrupted SQLite store. Each is one line (or a refuted audit), never a traceback,
and leaves nothing behind."""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from contextlib import closing
from pathlib import Path

import pytest

from .procs import completions, finish, one_error_line, run, start, wait_for, write_agents, write_tasks


# ---- point 10: a full disk ----------------------------------------------------------------------
class FullDisk:
    """A folder on a small filesystem of its own (a tmpfs of ``size`` bytes, filled up to ``free``
    bytes), or, where mounting is not allowed, a per-process file size limit of ``free`` bytes
    (RLIMIT_FSIZE: a write past it fails as on a full disk). ``preexec`` applies the limit in the
    command's process."""

    def __init__(self, free: int) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="benchscore-full-"))
        self.mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(self.dir)],
                                      capture_output=True).returncode == 0
        self.free = free
        if self.mounted:
            filler = self.dir / "filler"
            with open(filler, "wb") as f:
                try:
                    f.write(b"\0" * (1 << 20))
                except OSError:
                    pass
            avail = shutil.disk_usage(self.dir).free
            with open(filler, "r+b") as f:  # give back what the command may use
                f.truncate(max(0, os.path.getsize(filler) - max(0, free - avail)))
        self.before = set(os.listdir(self.dir))

    def preexec(self) -> None:
        if not self.mounted:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.free, self.free))

    def left_behind(self) -> set[str]:
        return set(os.listdir(self.dir)) - self.before

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.dir)], check=True)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def full_disk():
    made: list[FullDisk] = []

    def make(free: int) -> FullDisk:
        made.append(FullDisk(free))
        return made[-1]

    yield make
    for d in made:
        d.close()


def _run_on(disk: FullDisk, *args) -> subprocess.CompletedProcess:
    from .procs import BENCHSCORE

    return subprocess.run([*BENCHSCORE, *map(str, args)], capture_output=True, text=True, timeout=300,
                          preexec_fn=disk.preexec, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("free", [0, 48 * 1024], ids=["disk-already-full", "disk-fills-while-creating-the-run"])
def test_swarm_run_on_a_full_disk_leaves_nothing_behind(full_disk, tmp_path, free):
    disk = full_disk(free)
    tasks = write_tasks(tmp_path, 3000)
    agents = write_agents(tmp_path, ["ag"])
    r = _run_on(disk, "swarm", "run", tasks, agents, "--store", f"sqlite:///{disk.dir}/run.db", "--blobs",
                tmp_path / "blobs", "--output", tmp_path / "run.json")
    assert r.returncode == 2
    assert "disk is full" in one_error_line(r.stderr)
    assert disk.left_behind() == set()  # no run.db, no run.db.lock, no -wal / -shm
    assert not (tmp_path / "run.json").exists() and not (tmp_path / "blobs").exists()


def test_swarm_stress_on_a_full_disk_leaves_nothing_behind(full_disk, tmp_path):
    disk = full_disk(0)
    r = _run_on(disk, "swarm", "stress", "--agents", "2", "--tasks", "100", "--store",
                f"sqlite:///{disk.dir}/l01.db", "--output", tmp_path / "l01.json")
    assert r.returncode == 2 and "disk is full" in one_error_line(r.stderr)
    assert disk.left_behind() == set()


def test_a_full_disk_keeps_a_store_that_holds_other_runs(full_disk, tmp_path):
    """The store file existed (another run in it): it is kept as it was, the new run is not in it."""
    disk = full_disk(200 * 1024)
    store = f"sqlite:///{disk.dir}/run.db"
    small = write_tasks(tmp_path, 2, name="small.jsonl")
    agents = write_agents(tmp_path, ["ag"])
    assert _run_on(disk, "swarm", "run", small, agents, "--store", store, "--run-id", "first",
                   "--blobs", tmp_path / "blobs").returncode == 0
    big = write_tasks(tmp_path, 20000, name="big.jsonl")
    r = _run_on(disk, "swarm", "run", big, agents, "--store", store, "--run-id", "second", "--blobs",
                tmp_path / "blobs")
    assert r.returncode == 2 and "disk is full" in one_error_line(r.stderr)
    with closing(sqlite3.connect(disk.dir / "run.db")) as c:
        assert c.execute("SELECT run_id FROM swarm_runs").fetchall() == [("first",)]


# ---- point 11: Ctrl-C to the whole process group ------------------------------------------------
def _gone(pgid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("command", ["run", "stress"])
def test_ctrl_c_to_the_process_group_is_one_line(tmp_path, command):
    """As a terminal does: SIGINT to the command and all its worker processes, mid-run. Exit 130, one
    line, no worker traceback, no report, no process left."""
    store = f"sqlite:///{tmp_path}/run.db"
    if command == "run":
        tasks = write_tasks(tmp_path, 200, seconds=0.05)
        agents = write_agents(tmp_path, ["ag1", "ag2", "ag3"])
        args = ["run", tasks, agents, "--run-id", "sigint", "--processes", "3", "--blobs", tmp_path / "blobs"]
    else:
        args = ["stress", "--agents", "3", "--tasks", "20000", "--processes", "3", "--batch", "1"]
    proc = start("swarm", *args, "--store", store, "--output", tmp_path / "out.json")
    wait_for(lambda: completions(store) >= 3, proc)
    os.killpg(proc.pid, signal.SIGINT)
    code, out, err = finish(proc, timeout=60)
    assert code == 130, err[-3000:]
    assert err.splitlines() == ["error: interrupted (Ctrl-C); nothing was written"], err[-3000:]
    assert out == "" and not (tmp_path / "out.json").exists()
    assert _gone(proc.pid), "worker processes outlived the interrupted command"


# ---- point 12: a corrupted SQLite store ---------------------------------------------------------
@pytest.fixture(scope="module")
def finished_store(tmp_path_factory):
    """A finished run's SQLite file, checkpointed (everything in the main file, no -wal)."""
    folder = tmp_path_factory.mktemp("corrupt")
    tasks = write_tasks(folder, 40, fail_every=7)
    agents = write_agents(folder, ["ag1", "ag2"])
    r = run("swarm", "run", tasks, agents, "--store", f"sqlite:///{folder}/run.db", "--run-id", "c",
            "--processes", "1", "--blobs", folder / "blobs")
    assert r.returncode == 0, r.stderr
    with closing(sqlite3.connect(folder / "run.db")) as c:
        c.execute("PRAGMA journal_mode = DELETE")  # fold the WAL into the file
    return (folder / "run.db").read_bytes()


def _flipped(data: bytes, seed: int) -> bytes:
    """A few bytes flipped in the data pages (page 1, the header and schema, is left alone)."""
    rnd = random.Random(seed)
    b = bytearray(data)
    for _ in range(rnd.choice([1, 4, 16, 64])):
        i = rnd.randrange(4096, len(b))
        b[i] ^= 1 << rnd.randrange(8)
    return bytes(b)


def _text_damaged(data: bytes) -> bytes:
    """An invalid UTF-8 byte inside a ledger note (``complete`` -> ``com\\xfflete``)."""
    i = data.index(b"complete", 4096)
    return data[:i + 3] + b"\xff" + data[i + 4:]


def _page_damaged(data: bytes) -> bytes:
    """The b-tree page header of page 3 overwritten: SQLite says the image is malformed."""
    return data[:2 * 4096] + b"\xff" * 12 + data[2 * 4096 + 12:]


CASES = [pytest.param(_text_damaged, id="invalid-utf8-in-a-row"), pytest.param(_page_damaged, id="malformed-page"),
         *(pytest.param(lambda d, s=s: _flipped(d, s), id=f"bits-flipped-seed-{s}")
           # seeds that changed a value's type or a run's settings (tracebacks before), and a few others
           for s in (95, 107, 153, 227, 238, 278, 0, 1, 2, 3))]


@pytest.mark.parametrize("damage", CASES)
def test_audit_of_a_corrupted_store_is_one_line_or_a_refuted_audit(finished_store, tmp_path, damage):
    from click.testing import CliRunner

    from benchscore.cli import cli

    db = tmp_path / "run.db"
    db.write_bytes(damage(finished_store))
    codes = {}
    for cmd in ("audit", "status"):
        r = CliRunner().invoke(cli, ["swarm", cmd, "c", "--store", f"sqlite:///{db}"])
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)  # no traceback
        assert "Traceback" not in r.output and r.exit_code in (0, 1, 2), r.output[-3000:]
        if r.exit_code == 2:
            assert "corrupt" in one_error_line(r.stderr)
        elif r.exit_code == 1:
            assert cmd == "audit" and "violation:" in r.stdout  # refuted, each reason printed
        codes[cmd] = r.exit_code
    if damage in (_text_damaged, _page_damaged):
        assert codes["audit"] == 2
