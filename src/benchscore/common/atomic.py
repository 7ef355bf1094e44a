"""Atomic writes: a temporary file in the same folder, then ``os.replace``."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from .errors import BadInput
from .guard import refuse_if_input
from .interrupts import checkpoint, sigint_held

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


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns the folders this call created, outermost first
    (a folder another process made meanwhile is not among them)."""
    missing = []
    for p in (folder, *folder.parents):
        if p.exists():
            break
        missing.append(p)
    created = []
    for p in reversed(missing):
        try:
            p.mkdir()
        except FileExistsError:
            continue
        created.append(p)
    return created


def _remove_created(folders: list[Path]) -> None:
    """Remove the folders a failed write created (innermost first), as long as they are still empty."""
    for p in reversed(folders):
        try:
            p.rmdir()
        except OSError:
            return


def atomic_write_bytes(path: str | Path, data: bytes | Iterable[bytes]) -> Path:
    """Write ``data`` (bytes, or chunks of bytes written as they come) to ``path`` atomically; an unwritable
    path is one :class:`BadInput` line.

    Missing parent folders are created (and removed again when the write fails: a full disk leaves
    nothing behind). Inside a command, a file the command read is never replaced.
    """
    path = Path(path)
    refuse_if_input(path)
    created: list[Path] = []
    try:
        created = _make_parents(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        _remove_created(created)
        raise _cannot_write(path, exc) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get ordinary file modes
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes | bytearray | memoryview):
                fh.write(data)
            else:
                for chunk in data:
                    fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        _remove_created(created)
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

    ``path`` must not exist: an existing one is one :class:`BadInput` line. The name is claimed
    first (an empty folder, made atomically), so of two commands racing for one folder exactly one
    wins and the other gets that line too, whenever it comes. On any error the temporary folder, the
    claim and the parent folders this call created are removed; an error about a file inside the
    temporary folder (a full disk) names the file's final path, never the temporary one.
    """
    path = Path(path)
    created: list[Path] = []
    try:
        created = _make_parents(path.parent)
        os.mkdir(path)
    except FileExistsError:
        _remove_created(created)
        raise BadInput("already exists; choose a new folder", source=path) from None
    except OSError as exc:
        _remove_created(created)
        raise _cannot_write(path, exc) from None
    claimed = [*created, path]
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    except OSError as exc:
        _remove_created(claimed)
        raise _cannot_write(path, exc) from None
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700
        yield tmp
        os.rename(tmp, path)  # replaces the empty claim; a claim someone filled meanwhile makes this fail
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_created(claimed)
        if isinstance(exc, BadInput) and exc.source is not None:
            raise _renamed(exc, tmp, path) from None
        if isinstance(exc, OSError):
            where = Path(exc.filename) if isinstance(exc.filename, str) else None
            raise _cannot_write(_final(where, tmp, path) if where else path, exc) from None
        raise


def _final(where: Path, tmp: Path, path: Path) -> Path:
    """``where`` inside the temporary folder ``tmp`` -> the same place inside ``path``."""
    try:
        return path / where.relative_to(tmp)
    except ValueError:
        return where


def _renamed(exc: BadInput, tmp: Path, path: Path) -> BadInput:
    source = _final(Path(exc.source or ""), tmp, path)
    return BadInput(exc.detail, source=source, record=exc.record, field=exc.field)


#: the file in which :func:`replaced_directory` lists what it wrote
MANIFEST = ".benchscore-written.json"


def _entries(folder: Path) -> list[str]:
    """Every file, link and folder below ``folder`` (relative, sorted; links are not followed)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), folder))
    return sorted(out)


def written_sha256(folder: Path, entries: list[str]) -> dict[str, str]:
    """entry -> sha256 of every regular file among ``entries`` of ``folder`` (links are not followed):
    what a manifest records so that a later run can tell a file it wrote from one changed since."""
    out = {}
    for entry in entries:
        path = folder / entry
        if path.is_file() and not path.is_symlink():
            out[entry] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def changed_since_written(folder: Path, sums: Any) -> list[str]:
    """The entries of ``sums`` (a manifest's entry -> sha256) whose file in ``folder`` no longer has
    that sha256 (edited, or replaced by a folder or a link; a removed one holds nothing to lose): what a
    command that replaces only its own, unchanged output must refuse to delete. A manifest without
    sums gives none."""
    if not isinstance(sums, dict):
        return []
    changed = []
    for entry, digest in sorted(sums.items()):
        path = folder / str(entry)
        if not path.exists() and not path.is_symlink():
            continue
        if path.is_symlink() or not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            changed.append(str(entry))
    return changed


def _refuse_foreign(path: Path, owner: str) -> None:
    """Refuse to replace ``path`` unless it is empty or everything in it is listed in its manifest,
    each file with the sha256 it was written with (a file changed since is refused too)."""
    why = None
    cwd = os.path.realpath(os.getcwd())
    real = os.path.realpath(path)
    if cwd == real or cwd.startswith(real.rstrip(os.sep) + os.sep):
        why = "is the current folder" if cwd == real else "holds the current folder"
    elif path.is_dir():
        entries = [e for e in _entries(path) if e != MANIFEST]
        written: set[str] = set()
        sums: Any = None
        if entries and (path / MANIFEST).is_file() and not (path / MANIFEST).is_symlink():
            try:
                listed = orjson.loads((path / MANIFEST).read_bytes())
                if isinstance(listed, dict) and listed.get("written_by") == owner:
                    written = {e for e in listed.get("entries", []) if isinstance(e, str)}
                    sums = listed.get("sha256")
            except (OSError, orjson.JSONDecodeError):
                written = set()
        foreign = [e for e in entries if e not in written]
        changed = changed_since_written(path, sums) if not foreign else []
        if foreign:
            more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
            why = f"holds {foreign[0]!r}{more}, which {owner} did not write"
        elif changed:
            more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
            why = f"holds {changed[0]!r}{more}, changed since {owner} wrote it"
    if why is not None:
        raise BadInput(f"{owner} replaces its output folder as a whole, and this folder {why}; choose a new or "
                       f"empty folder, or one an earlier {owner} wrote"
                       + (", or delete the folder yourself if the change may go" if "changed since" in why else ""),
                       source=path)


#: the HTML pages' mark of the command that wrote them (``<meta name="generator" content="benchscore report">``)
_GENERATOR = re.compile(rb'<meta name="generator" content="(benchscore[a-z -]*)">')
#: the largest file whose kind is looked at (an output is far smaller; a bigger file is nobody's output here)
_KIND_LIMIT = 1 << 30


def written_by(path: Path) -> str | None:
    """The benchscore command whose output the regular file ``path`` is, recognised strictly from the file
    itself, or None (not a benchscore output, or one that does not say which command wrote it):

    - a JSON output: its ``provenance`` names ``benchscore_version`` and the ``command``;
    - an HTML page: its ``<meta name="generator" content="benchscore report">``;
    - mira from-inspect's repetitions (JSON lines): the first line's ``source`` names the tool and the
      sha256 of the mapping (an empty file, every repetition missing, cannot be told from any empty file).
    """
    try:
        if os.path.getsize(path) > _KIND_LIMIT:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    head = data[:4096]
    if head.startswith(b"<!DOCTYPE html>"):
        found = _GENERATOR.search(head)
        return found.group(1).decode() if found else None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            doc = orjson.loads(data.split(b"\n", 1)[0])
        except orjson.JSONDecodeError:
            return None
        source = doc.get("source") if isinstance(doc, dict) else None
        if (isinstance(source, dict) and "case_id" in doc and isinstance(source.get("tool"), str)
                and isinstance(source.get("mapping_sha256"), str)):
            return "benchscore mira from-inspect"
        return None
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    if isinstance(prov, dict) and isinstance(prov.get("benchscore_version"), str):
        command = prov.get("command")
        return command if isinstance(command, str) and command.startswith("benchscore ") else None
    return None


def _in_written_folder(path: Path) -> tuple[Path, str] | None:
    """(the folder, the command that wrote it) when ``path`` is listed in the manifest of a folder above it
    (a page of a leaderboard's site, a file of a demo's folder)."""
    path = Path(os.path.abspath(path))
    for folder in path.parents:
        manifest = folder / MANIFEST
        if manifest.is_file() and not manifest.is_symlink():
            try:
                listed = orjson.loads(manifest.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                return None
            if (isinstance(listed, dict) and isinstance(listed.get("entries"), list)
                    and str(path.relative_to(folder)) in listed["entries"]):
                return folder, str(listed.get("written_by") or "benchscore")
            return None
    return None


def refuse_to_replace(path: str | Path, owner: str, *, folder: bool = False, force: bool = False) -> None:
    """The one rule for every output: ``owner`` (the command, ``benchscore report``) replaces only what it
    wrote itself; anything else at ``path`` is one :class:`BadInput` line, before anything is written.

    - A folder output (``folder``) replaces a missing or empty folder, or one whose every entry is listed,
      with the sha256 it was written with, in the manifest the same command wrote there (see
      :func:`replaced_directory`); never the current folder. ``force`` does not apply: a folder is replaced
      whole, and what it holds that benchscore did not write would be lost.
    - A file output replaces a missing file, or an earlier output of the same command (:func:`written_by`);
      ``force`` (``--force``) replaces any regular file or link. A file listed in a folder output's manifest
      belongs to that folder's command (replacing it would make that command refuse its folder next time).
    """
    path = Path(path)
    if folder:
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise BadInput(f"{owner} writes a folder here, and this is a file; choose a new or empty folder",
                           source=path)
        _refuse_foreign(path, owner)
        return
    if not path.exists() and not path.is_symlink():
        return
    if not path.is_symlink() and not path.is_file():
        raise BadInput("is not a regular file; choose another output path", source=path)
    if force:
        return
    why = None
    if path.is_symlink():
        why = "is a link"
    elif (found := _in_written_folder(path)) is not None:
        why = f"belongs to the folder {found[0]} that {found[1]} wrote"
    else:
        kind = written_by(path)
        if kind is None:
            why = "holds a file benchscore did not write"
        elif kind != owner:
            why = f"holds an output of {kind}"
    if why is not None:
        raise BadInput(f"{why}; {owner} replaces only its own earlier output: choose another path, or add --force "
                       "to replace it", source=path)


@contextmanager
def replaced_directory(path: str | Path, *, owner: str = "benchscore demo") -> Iterator[Path]:
    """Build the folder ``path`` in place (paths written inside it are final); all or nothing.

    Only what this function wrote before is ever replaced: ``path`` must be missing, empty, or a
    folder whose every entry is listed in its manifest (``.benchscore-written.json``, written last,
    naming ``owner``); anything else, and the current folder (which cannot be moved aside), is one
    :class:`BadInput` line before anything is written. A folder already at ``path`` is moved aside
    first. On success it is deleted; on any error (Ctrl-C included) the new content is deleted and
    the old folder is moved back, unchanged. A Ctrl-C, once or many times, never stops the moving aside
    or back half-way (:func:`benchscore.common.interrupts.sigint_held`).
    """
    path = Path(path)
    refuse_to_replace(path, owner, folder=True)
    old: Path | None = None
    created: list[Path] = []
    with sigint_held():  # the old folder is moved aside whole, or not at all
        try:
            created = _make_parents(path.parent)
            if path.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
                os.replace(path, old / "content")
            path.mkdir()
        except OSError as exc:
            if old is not None:
                if (old / "content").exists() and not path.exists():
                    os.replace(old / "content", path)
                if not (old / "content").exists():
                    old.rmdir()
            _remove_created(created)
            raise _cannot_write(path, exc) from None
    committed = False
    try:
        yield path
        entries = _entries(path)
        manifest = {"written_by": owner, "entries": entries, "sha256": written_sha256(path, entries)}
        atomic_write_bytes(path / MANIFEST, dumps_json(manifest))
        checkpoint("replace:commit")
        with sigint_held(reraise=False) as late:  # the point of no return: the old folder is deleted whole
            committed = True
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        if not committed:
            with sigint_held(reraise=False):  # on the way out already: the old folder goes back whole
                shutil.rmtree(path, ignore_errors=True)
                if old is not None:
                    os.replace(old / "content", path)
                    old.rmdir()
                else:
                    _remove_created(created)
        raise
    if late:
        from .cli import Interrupted

        raise Interrupted(f"interrupted (Ctrl-C) after {path} was written")
