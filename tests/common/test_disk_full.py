"""A full disk (issue 15, point 10): one line, exit 2, nothing left behind, no temporary name in the message.

The disk is full for real, two ways, both run as subprocesses (the real console script):

- ``tmpfs``: the command runs in a private mount namespace (``unshare --user --map-root-user --mount``,
  no privileges needed) with a tiny tmpfs mounted where it writes, so the kernel answers ENOSPC
  ("No space left on device"). The mount vanishes with the process. Where user namespaces are not
  allowed (some containers), these tests skip and say so.
- ``fsize``: ``RLIMIT_FSIZE`` (POSIX, always available): writing past the limit makes the kernel
  answer EFBIG ("File too large"), the same failure path as a full disk for every write.

A monkeypatched ``write`` that raises would be portable too, but it would not test the real writes
(``os.replace``, ``fsync``, the folder renames), so both tests use the kernel.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchscore.common.atomic import atomic_directory, atomic_write_bytes
from benchscore.common.errors import BadInput

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
BENCHSCORE = [sys.executable, "-c", "from benchscore.cli import main; main()"]
MARK = "--- left on the disk ---"


def _userns_tmpfs_works() -> str | None:
    """None when a private tmpfs can be mounted here, else why not."""
    if shutil.which("unshare") is None:
        return "no unshare(1) on this machine"
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o size=4k tmpfs /mnt 2>&1 || mount -t tmpfs -o size=4k tmpfs /tmp"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"user namespaces with a tmpfs mount are not allowed here: {probe.stderr.strip() or probe.stdout.strip()}"
    return None


TMPFS_UNAVAILABLE = _userns_tmpfs_works()


def run_on_full_disk(args: list[str], disk: Path, size_kb: int) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run ``benchscore ARGS`` with a ``size_kb`` tmpfs mounted on ``disk``; returns the run and what is on
    the tmpfs afterwards (listed inside the namespace, before the mount goes away)."""
    disk.mkdir(parents=True, exist_ok=True)
    script = ('mount -t tmpfs -o size="$1"k tmpfs "$2" || exit 99; shift 2; "$@"; rc=$?; '
              f'echo "{MARK}"; cd "$DISK" && find . -mindepth 1; exit $rc')
    proc = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh",
                           str(size_kb), str(disk), *BENCHSCORE, *args], capture_output=True, text=True,
                          env=dict(os.environ, DISK=str(disk)), stdin=subprocess.DEVNULL, timeout=300)
    assert proc.returncode != 99, proc.stderr
    out, _, left = proc.stdout.partition(MARK)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, proc.stderr), left.split()


def run_with_fsize(args: list[str], limit: int) -> subprocess.CompletedProcess:
    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([*BENCHSCORE, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          preexec_fn=limit_file_size, timeout=300)


def _one_line(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr, proc.stdout)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert ".tmp" not in lines[0], f"the message names a temporary file or folder: {lines[0]}"
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


COMMANDS = {
    "rxn build-mc": ["rxn", "build-mc", "--tables", str(EX / "rxn" / "literature_tables.json"), "--output-dir", "{out}"],
    "rxn build-fib": ["rxn", "build-fib", "--tables", str(EX / "rxn" / "literature_tables.json"), "--output-dir",
                      "{out}"],
    "mira judge-packets": ["mira", "judge-packets", "--contract", str(EX / "mira" / "contract.json"), "--repetitions",
                           str(EX / "mira" / "repetitions_unjudged.jsonl"), "--output-dir", "{out}"],
}


@pytest.mark.skipif(TMPFS_UNAVAILABLE is not None, reason=f"a real full disk needs a private tmpfs: {TMPFS_UNAVAILABLE}")
@pytest.mark.parametrize("size_kb", [4, 12, 24])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, command, size_kb):
    """Was: an OSError traceback and an empty output folder (rxn); the temporary folder's name (mira)."""
    disk = tmp_path / "disk"
    out = disk / "new" / "out"
    proc, left = run_on_full_disk([a.format(out=out) for a in COMMANDS[command]], disk, size_kb)
    line = _one_line(proc, "No space left on device")
    assert str(out) in line, line
    assert left == [], f"left on the full disk: {left}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_size_limit_is_one_line_and_leaves_nothing(tmp_path, command):
    out = tmp_path / "new" / "out"
    proc = run_with_fsize([a.format(out=out) for a in COMMANDS[command]], 600)
    line = _one_line(proc, "File too large")
    assert str(out) in line, line
    assert list(tmp_path.iterdir()) == [], f"left behind: {list(tmp_path.rglob('*'))}"


def test_the_same_commands_succeed_with_room(tmp_path):
    """The limits above are what makes them fail (not the test set-up)."""
    for i, command in enumerate(sorted(COMMANDS)):
        proc = run_with_fsize([a.format(out=tmp_path / str(i)) for a in COMMANDS[command]], 64 * 1024 * 1024)
        assert proc.returncode == 0, (command, proc.stderr)


# ---- the common pieces, in-process (an OSError raised where the write happens) -------------------
def test_atomic_write_removes_the_folders_it_created_when_the_write_fails(tmp_path, monkeypatch):
    import benchscore.common.atomic as atomic

    def full(fd: int, *args) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(BadInput, match=r"a/b/c\.json: cannot write the output: No space left on device"):
        atomic_write_bytes(tmp_path / "a" / "b" / "c.json", b"{}")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    with pytest.raises(BadInput):
        atomic_write_bytes(tmp_path / "kept" / "new" / "c.json", b"{}")
    assert [p.name for p in tmp_path.rglob("*")] == ["kept"]  # a folder that was there stays


def test_atomic_directory_names_the_final_path_and_cleans_up(tmp_path):
    target = tmp_path / "made" / "build"
    with pytest.raises(BadInput) as exc, atomic_directory(target) as tmp:
        (tmp / "a.json").write_bytes(b"{}")
        raise OSError(28, "No space left on device", str(tmp / "b.json"))
    assert str(exc.value) == f"{target / 'b.json'}: cannot write the output: No space left on device"
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(BadInput) as exc, atomic_directory(target) as tmp:
        atomic_write_bytes(tmp / "c.json", b"{}")
        raise BadInput("cannot write the output: No space left on device", source=tmp / "c.json")
    assert str(exc.value) == f"{target / 'c.json'}: cannot write the output: No space left on device"
    with atomic_directory(target) as tmp:
        (tmp / "ok.json").write_bytes(b"{}")
    assert [p.name for p in target.iterdir()] == ["ok.json"]
    with pytest.raises(BadInput, match=r"build: already exists; choose a new folder"), atomic_directory(target):
        pytest.fail("an existing folder must be refused before anything runs")
