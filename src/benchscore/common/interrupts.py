"""Ctrl-C at any moment: what must not stop half-way holds it back, and named moments a test can stop at.

- :func:`sigint_held` holds Ctrl-C back for a block that must run to its end once begun (an output
  folder moved aside, or moved back): a Ctrl-C that arrives meanwhile is raised when the block ends
  (``reraise=True``) or dropped (a clean-up already on its way out for an earlier Ctrl-C).
- :func:`checkpoint` names a moment of a long command (``demo:pages``, ``replace:commit``). Nothing
  happens there unless ``BENCHSCORE_PAUSE_AT`` names it: then the first process to reach it writes
  the file ``BENCHSCORE_PAUSE_FILE`` and sleeps (60 s at most), so that a test can send SIGINT at
  that very moment (``tests/test_ctrl_c.py``).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

PAUSE_AT = "BENCHSCORE_PAUSE_AT"
PAUSE_FILE = "BENCHSCORE_PAUSE_FILE"
PAUSE_SECONDS = 60.0


@contextmanager
def sigint_held(*, reraise: bool = True) -> Iterator[list[int]]:
    """Run the block with SIGINT held back (main thread only; elsewhere the block runs as it is). A
    SIGINT that arrived meanwhile is raised when the block ends through the handler that was in place
    (``KeyboardInterrupt``), unless ``reraise`` is false or the block raised already. Yields the list of
    the signals held back (filled as they come)."""
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def hold(signum: int, frame: Any) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if seen and reraise:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt


def checkpoint(phase: str) -> None:
    """A named moment; pauses there only when ``BENCHSCORE_PAUSE_AT`` names it (see the module docstring)."""
    if os.environ.get(PAUSE_AT) != phase or not os.environ.get(PAUSE_FILE):
        return
    try:
        fd = os.open(os.environ[PAUSE_FILE], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return  # another process (a sibling worker) paused here first
    os.write(fd, f"{phase} {os.getpid()}\n".encode())
    os.close(fd)
    time.sleep(PAUSE_SECONDS)
