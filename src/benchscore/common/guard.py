"""Inputs are never modified: while a command runs, the files it reads may not be replaced by its writes.

The common readers call :func:`note_input` for every file they read; :mod:`benchscore.common.atomic`
calls :func:`refuse_if_input` before it replaces a file. Outside a command (library use, tests that
call functions directly) nothing is recorded and nothing is refused.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import BadInput

_lock = threading.Lock()
_inputs: set[str] | None = None
_outputs: frozenset[str] = frozenset()


def _key(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(path)


@contextmanager
def inputs_guard(outputs: Iterable[str | os.PathLike[str]] = ()) -> Iterator[None]:
    """Record the inputs read inside the block and refuse writes over them.

    ``outputs`` are the command's declared output paths: reading one of them (to compare with what is
    about to be written, say) does not make it an input.
    """
    global _inputs, _outputs
    with _lock:
        previous = _inputs, _outputs
        _inputs, _outputs = set(), frozenset(_key(p) for p in outputs)
    try:
        yield
    finally:
        with _lock:
            _inputs, _outputs = previous


def note_input(path: str | os.PathLike[str]) -> None:
    with _lock:
        if _inputs is not None and (key := _key(path)) not in _outputs:
            _inputs.add(key)


def refuse_if_input(path: str | os.PathLike[str]) -> None:
    if _inputs is not None and _key(path) in _inputs:
        raise BadInput("this output is also an input of the command; inputs are never modified: "
                       "write the output elsewhere", source=Path(path))
