"""Issue 39 point 2, the parts: SIGINT held back where a folder moves, page workers that never outlive the parent,
and a second Ctrl-C ignored on the way out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from benchscore.common.interrupts import sigint_held
from benchscore.common.workers import forked_map


def _square(x: int) -> int:
    return x * x


def _fail(x: int) -> int:
    if x == 1:
        raise ValueError("no one")
    time.sleep(60)  # the sibling still running when the parent gives up: it is killed
    return x


def test_forked_map_keeps_the_order():
    assert forked_map(_square, [(i,) for i in range(7)], 2) == [i * i for i in range(7)]


def _children() -> list[int]:
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(entry))
    return out


def test_forked_map_raises_the_first_error_and_kills_the_other_workers():
    before = set(_children())
    started = time.monotonic()
    with pytest.raises(ValueError, match="no one"):
        forked_map(_fail, [(0,), (1,)], 2)
    assert time.monotonic() - started < 50  # the sleeping worker was not waited for (a hang guard)
    assert set(_children()) <= before


def test_sigint_held_raises_after_the_block_or_drops_it():
    before = signal.getsignal(signal.SIGINT)
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with sigint_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            steps.append("finished")
    assert steps == ["finished"]
    with sigint_held(reraise=False) as seen:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    assert seen == [signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is before


def test_a_second_ctrl_c_on_the_way_out_is_ignored():
    """The command's clean-up after the first Ctrl-C runs to its end: a second one (0.3 s later) neither
    stops it nor ends the process by the signal."""
    code = """
import os, signal, time
import click
from benchscore.common.cli import Group

@click.group(cls=Group)
def cli():
    pass

@cli.command()
def work():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    finally:
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C during the clean-up
        time.sleep(0.2)
        print("cleaned up", flush=True)

cli.main(["work"], prog_name="benchscore")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stdout == "cleaned up\n"
    assert proc.stderr.splitlines() == ["error: interrupted (Ctrl-C); nothing was written"], proc.stderr


def test_ctrl_c_at_the_point_of_no_return_says_the_folder_was_written(tmp_path, monkeypatch):
    """Once the new folder is in place the old one is deleted whole; a Ctrl-C then is held, and said honestly."""
    import shutil

    from benchscore.common import atomic
    from benchscore.common.cli import Interrupted

    out = tmp_path / "out"
    with atomic.replaced_directory(out, owner="benchscore demo") as folder:
        (folder / "a.txt").write_text("old\n")
    real = shutil.rmtree

    def interrupted_rmtree(path, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(atomic.shutil, "rmtree", interrupted_rmtree)
    with pytest.raises(Interrupted, match="after .* was written"):
        with atomic.replaced_directory(out, owner="benchscore demo") as folder:
            (folder / "a.txt").write_text("new\n")
    assert (out / "a.txt").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the old folder is gone, whole
