"""Inputs are never modified: while a command runs, the files it reads may not be replaced by its writes.

The common readers call :func:`note_input` for every file they read; :mod:`benchscore.common.atomic`
calls :func:`refuse_if_input` before it replaces a file. Outside a command (library use, tests that
call functions directly) nothing is recorded and nothing is refused.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .errors import BadInput

_lock = threading.Lock()
_inputs: set[str] | None = None


def _key(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(path)


@contextmanager
def inputs_guard() -> Iterator[None]:
    """Record the inputs read inside the block and refuse writes over them."""
    global _inputs
    with _lock:
        previous, _inputs = _inputs, set()
    try:
        yield
    finally:
        with _lock:
            _inputs = previous


def note_input(path: str | os.PathLike[str]) -> None:
    with _lock:
        if _inputs is not None:
            _inputs.add(_key(path))


def refuse_if_input(path: str | os.PathLike[str]) -> None:
    if _inputs is not None and _key(path) in _inputs:
        raise BadInput("this output is also an input of the command; inputs are never modified: "
                       "write the output elsewhere", source=os.fspath(path))
