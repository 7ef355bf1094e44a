"""The ``provenance`` block every output JSON carries (DESIGN.md, Conventions).

Besides the benchscore version, the metric id, the sha256 of every input and ``created_at``, the
block says how to recompute the output (issue 16): ``command`` (``benchscore rxn eval-mc``) and
``arguments``, every option and argument of that command as it ran, keyed by its option
(``--dataset``) or argument name. An input file is ``{"name", "sha256"}`` plus ``"path"``, its path
relative to the output's folder (the folder of ``--output``, or ``--output-dir``) when it lies inside
it; an output is ``{"output": "file"}`` (or ``"folder"``: where it went is no part of the recipe, so
the same inputs still give byte-identical outputs wherever they are written); other values as given
(``--quiet`` is not recorded).

An input that stands for files (a folder, an eval-set folder, a ``--data-dir``, an fsspec URL) is
recorded with every file the command read through it (:func:`note_read`, called by the readers):
``{"folder": NAME, "given": TEXT, "files": [{"name", "sha256", "size"}, ...]}`` (``name`` relative to
what was given, ``given`` the text as given) or ``{"url": URL, "files": [...]}``; a URL of one file is
``{"url": URL, "name", "sha256", "size"}``. ``benchscore verify`` finds each file (as given, then by
sha256), stages them, and re-runs the command on the same text: while it runs, :func:`located` turns
that text into the staged copy (:func:`staged`).
Every :class:`benchscore.common.cli.Command` records its invocation while it runs
(:func:`invocation`); code that writes outputs without a click command (the demo) names the
command it stands for with :func:`recording`. ``benchscore verify`` re-runs it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchscore import __version__

if TYPE_CHECKING:  # pragma: no cover - click is imported by the commands
    import click

#: the parameter names that mean an output, a working store (as benchscore.common.cli has them)
OUTPUT_PARAMS = frozenset({"output", "output_dir", "out_dir", "audit"})
STORE_PARAMS = frozenset({"blob_root"})
#: options that change what a command prints, or how and where it runs (``--jobs``: processes; ``--scheduler``: a
#: Dask cluster; the output is the local one's), never what it writes (``--force``: whether an earlier file may
#: be replaced, not what is written): not recorded
PRESENTATION_PARAMS = frozenset({"quiet", "help", "jobs", "scheduler", "force"})
_INVOCATION: ContextVar[dict[str, Any] | None] = ContextVar("benchscore_invocation", default=None)
#: what a given folder or URL stands for while ``benchscore verify`` re-runs a command (given key -> staged copy)
_STAGED: ContextVar[dict[str, Path] | None] = ContextVar("benchscore_staged", default=None)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_HASHES: dict[tuple[str, int, int], str] = {}


def sha256_file(path: str | Path) -> str:
    """The file's sha256 (cached per process by real path, size and modification time)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    got = _HASHES.get(key)
    if got is not None:
        return got
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    if len(_HASHES) > 100_000:
        _HASHES.clear()
    _HASHES[key] = digest = h.hexdigest()
    return digest


def created_at() -> str:
    """UTC timestamp, ISO 8601 with a Z; ``SOURCE_DATE_EPOCH`` pins it for reproducible output."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None and epoch.strip():
        moment = datetime.fromtimestamp(int(epoch), tz=UTC)
    else:
        moment = datetime.now(tz=UTC).replace(microsecond=0)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def provenance(
    metric_id: str,
    inputs: Mapping[str, str | Path | bytes],
    *,
    reference: Mapping[str, Any] | None = None,
    seed: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the provenance block.

    ``inputs`` maps a role (``records``, ``attempts``, ...) to a file path (hashed from disk)
    or to bytes already read (hashed directly, so the file is not read twice). Only the file's
    name is recorded, never its absolute path, so output does not depend on the working folder.
    """
    files: dict[str, dict[str, str]] = {}
    for role, value in inputs.items():
        if isinstance(value, bytes):
            files[role] = {"sha256": sha256_bytes(value)}
        else:
            p = Path(value)
            files[role] = {"name": p.name, "sha256": sha256_file(p)}
    block: dict[str, Any] = {
        "benchscore_version": __version__,
        "metric_id": metric_id,
        "inputs": files,
    }
    if reference is not None:
        block["reference"] = dict(reference)
    if seed is not None:
        block["seed"] = seed
    if extra:
        block.update(extra)
    current = _INVOCATION.get()
    if current is not None:
        block["command"] = current["command"]
        block["arguments"] = _with_reads(current["arguments"], current.get("read") or {})
    block["created_at"] = created_at()
    return block


def is_url(given: str | os.PathLike[str]) -> bool:
    """Whether what the user gave is an fsspec URL (``s3://...``; ``file://`` is a local path)."""
    text = os.fspath(given)
    return "://" in text and not text.startswith("file://")


def given_key(given: str | os.PathLike[str]) -> str:
    """What identifies an input as given, whatever its spelling: a URL (without its password), or the
    absolute, normalised local path (``logs/`` and ``./logs`` are one folder)."""
    text = os.fspath(given)
    return str(redact(text)) if is_url(text) else os.path.normpath(os.path.abspath(text))


def note_read(given: str | os.PathLike[str], name: str, path: str | os.PathLike[str], *, whole: bool = False) -> None:
    """Record, for the command running, that it read the file ``name`` (its path relative to what was
    given, ``/``-separated) through the input ``given`` (a folder, an eval-set folder, a ``--data-dir``,
    a URL), from the local file ``path`` (for a remote file: its fetched copy). ``whole``: ``given`` is
    that one file (a URL of a file). Outside a recorded command it does nothing."""
    current = _INVOCATION.get()
    if current is None:
        return
    entry = {"name": name, "sha256": sha256_file(path), "size": os.stat(path).st_size}
    reads = current.setdefault("read", {}).setdefault(given_key(given), {})
    reads[name] = {**entry, "whole": True} if whole else entry


def located(given: str | os.PathLike[str]) -> Any:
    """Where to read what was given: verify's staged copy while it re-runs a command (:func:`staged`),
    else ``given`` itself."""
    copies = _STAGED.get()
    if not copies:
        return given
    return copies.get(given_key(given), given)


@contextmanager
def staged(copies: Mapping[str, str | os.PathLike[str]]) -> Iterator[None]:
    """While the block runs, each given text (a folder, a URL: as recorded) is read from its staged copy."""
    token = _STAGED.set({given_key(k): Path(v) for k, v in copies.items()})
    try:
        yield
    finally:
        _STAGED.reset(token)


def _with_reads(arguments: dict[str, Any], reads: Mapping[str, Mapping[str, dict[str, Any]]]) -> dict[str, Any]:
    """``arguments`` with every folder or URL given completed by the files read through it."""
    if not reads:
        return arguments

    def complete(value: Any) -> Any:
        if isinstance(value, list):
            return [complete(v) for v in value]
        if not isinstance(value, dict) or not ("given" in value or "url" in value):
            return value
        files = reads.get(given_key(value.get("given", value.get("url"))))
        if not files:
            return value
        whole = [f for f in files.values() if f.get("whole")]
        if "url" in value and len(files) == 1 and whole:
            return {"url": value["url"], **{k: v for k, v in whole[0].items() if k != "whole"}}
        return {**value, "files": [{k: v for k, v in f.items() if k != "whole"}
                                   for _, f in sorted(files.items())]}

    return {k: complete(v) for k, v in arguments.items()}


def redact(value: Any) -> Any:
    """A URL without its password (``postgresql://u:***@host/db``); any other value unchanged. No
    password given on a command line (a store or Redis URL) reaches an output."""
    if not isinstance(value, str) or "://" not in value or "@" not in value:
        return value
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(value)
        password = parts.password
    except ValueError:
        return value
    if password:
        return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{password}@", ":***@")))
    return value


def _key(param: click.Parameter) -> str:
    import click

    return param.opts[0] if isinstance(param, click.Option) and param.opts else str(param.name)


def _is_file_text(value: Any) -> bool:
    text = str(value)
    return (os.sep in text or text.endswith((".json", ".jsonl", ".csv"))) and os.path.isfile(located(text))


def _file(value: Any, base: str | None) -> dict[str, Any]:
    text = os.fspath(value)
    if is_url(text):
        return {"url": redact(text)}
    path = Path(located(text))
    if path.is_dir():
        return {"folder": Path(text).name or Path(text).resolve().name, "given": text}
    if not path.is_file():
        return {"missing": path.name}
    out: dict[str, Any] = {"name": path.name, "sha256": sha256_file(path)}
    if base is not None:
        rel = os.path.relpath(os.path.abspath(path), base)
        if not rel.startswith(os.pardir) and not os.path.isabs(rel):
            out["path"] = Path(rel).as_posix()
    return out


def arguments_record(command: click.Command, values: Mapping[str, Any]) -> dict[str, Any]:
    """The ``arguments`` of a provenance block for ``command`` run with ``values`` (parameter name ->
    value as click passes it; a parameter left out takes its default)."""
    import click

    ctx = click.Context(command)
    filled: dict[str, Any] = {}
    for param in command.params:
        value = values[param.name] if param.name in values else param.get_default(ctx)
        # an unset default is a sentinel object in recent click: no value
        filled[str(param.name)] = value if isinstance(value, str | int | float | os.PathLike | tuple | list) else None
    base = None
    if filled.get("output") is not None:
        base = os.path.dirname(os.path.abspath(filled["output"]))
    elif filled.get("output_dir") is not None:
        base = os.path.abspath(filled["output_dir"])

    def one(param: click.Parameter, value: Any) -> Any:
        if param.name in OUTPUT_PARAMS:  # where the output went is no part of the recipe
            return {"output": "folder" if param.name in ("output_dir", "out_dir") else "file"}
        if param.name in STORE_PARAMS:
            return {"store": Path(value).name}
        if isinstance(param.type, click.Path) or (isinstance(value, str | Path) and _is_file_text(value)):
            return _file(value, base)
        if isinstance(value, Path):
            return str(value)
        return redact(value)

    out: dict[str, Any] = {}
    for param in command.params:
        value = filled[str(param.name)]
        if (value is None or value is False or (isinstance(value, tuple | list) and not value)
                or param.name in PRESENTATION_PARAMS):
            continue
        out[_key(param)] = [one(param, v) for v in value] if isinstance(value, tuple | list) else one(param, value)
    return out


def command_path(ctx: click.Context) -> str:
    """``benchscore DOMAIN COMMAND`` for a context (the ``tcsexam`` script's commands are
    ``benchscore tcsexam ...``)."""
    names = []
    while ctx is not None:
        names.append(ctx.info_name or ctx.command.name or "")
        ctx = ctx.parent  # type: ignore[assignment]
    names.reverse()
    root = names[0]
    return " ".join(["benchscore", *([] if root == "benchscore" else [root]), *names[1:]])


@contextmanager
def invocation(command: str, arguments: dict[str, Any]) -> Iterator[None]:
    """While the block runs, every provenance block records ``command`` and ``arguments``."""
    token = _INVOCATION.set({"command": command, "arguments": arguments})
    try:
        yield
    finally:
        _INVOCATION.reset(token)


@contextmanager
def recording(command: str, click_command: click.Command, **values: Any) -> Iterator[None]:
    """Record the outputs written inside the block as made by ``command`` (``benchscore rxn eval-mc``,
    whose click command is ``click_command``) run with ``values`` (parameter names; the others take
    their defaults): the demo's steps use it, so that ``benchscore verify`` can recompute them."""
    with invocation(command, arguments_record(click_command, values)):
        yield


@contextmanager
def not_recorded() -> Iterator[None]:
    """Outputs written inside the block record no command (``benchscore demo`` itself is none)."""
    token = _INVOCATION.set(None)
    try:
        yield
    finally:
        _INVOCATION.reset(token)
