"""Atomic writes: a temporary file in the same folder, then ``os.replace``."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from .errors import BadInput
from .guard import refuse_if_input

JSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (os.umask(0) races threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def dumps_json(obj: Any) -> bytes:
    """Canonical JSON bytes for outputs: indented, insertion-ordered keys, trailing newline."""
    return orjson.dumps(obj, option=JSON_OPTIONS) + b"\n"


def _cannot_write(path: Path, exc: OSError) -> BadInput:
    return BadInput(f"cannot write the output: {exc.strerror or exc}", source=path)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; an unwritable path is one :class:`BadInput` line.

    Missing parent folders are created. Inside a command, a file the command read is never replaced.
    """
    path = Path(path)
    refuse_if_input(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get ordinary file modes
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _cannot_write(path, exc) from None
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_bytes(path, dumps_json(obj))


@contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Build a folder under a temporary name beside ``path``; rename it into place on success.

    On any error the temporary folder is removed and ``path`` is untouched. ``path`` must not exist.
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextmanager
def replaced_directory(path: str | Path) -> Iterator[Path]:
    """Build the folder ``path`` in place (paths written inside it are final); all or nothing.

    A folder already at ``path`` is moved aside first. On success it is deleted; on any error
    (Ctrl-C included) the new content is deleted and the old folder is moved back, unchanged.
    """
    path = Path(path)
    old: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / "content")
        path.mkdir()
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        yield path
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        if old is not None:
            os.replace(old / "content", path)
            old.rmdir()
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
