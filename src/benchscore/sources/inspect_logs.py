"""Reading inspect_ai evaluation logs, wherever they live, sample by sample (docs/inspect.md).

This is benchscore's one reader of inspect_ai logs. It reads the files itself, without inspect_ai:
an ``.eval`` log is a zip of JSON members (``header.json``, ``samples/<id>_epoch_<n>.json``, ...),
each stored, deflated or zstd-compressed; a ``.json`` log is one JSON document. The zip's central
directory is read once, then each sample member is decompressed (zstandard), parsed (orjson) and
turned into a :class:`SampleRecord` before the next is read, so the memory a log needs does not
grow with its number of samples. A ``.json`` log is streamed with ijson; one holding ``NaN`` or
``Infinity`` (which inspect_ai writes and ijson cannot read) is read whole instead. Remote logs
(any fsspec URL: ``s3://``, ``gs://``, ``file://``, ...) are copied once to a temporary file,
hashed as they are copied, then read like a local one.

Every failure is one :class:`~benchscore.common.errors.BadInput` line naming the log, the sample
and epoch, and the field. What each domain makes of the records stays in the domain
(``benchscore.mira.inspect_logs``: Mira repetitions; ``benchscore.rxn.from_inspect``: predictions).

Public API
----------
``resolve_logs(given) -> list[LogLocation]``
    What the user gave (log files, log folders, eval-set folders, fsspec URLs of any of them) ->
    the logs to read, in a stable order. A folder gives every log in it (recursively); an eval-set
    folder (one holding ``eval-set.json``) gives the final log of each of its tasks: of the logs of each
    ``eval.task_id``, the last attempt by what the logs record (:func:`attempt_order`), never by file times.
``open_logs(given)`` (a context manager) -> ``list[InspectLog]``
    Resolves, fetches and reads the header of each log, checked (:func:`read_header`); remote
    copies are removed on exit. ``InspectLog.header`` is the :class:`LogHeader`,
    ``InspectLog.samples()`` the streaming iterator of :class:`SampleRecord`.
``read_header(location, path) -> LogHeader``
    The log's header: eval spec (task, task args, model, dataset, epochs and epoch reducers,
    scorers), status and error, inspect_ai version; refuses what benchscore cannot read.
``iter_samples(header) -> Iterator[SampleRecord]``
    One record per sample x epoch, in the order the log stores them: id, epoch, input (attachments
    resolved), target and choices, metadata, every score (value, answer, explanation, metadata and its edit
    history), output, error (parsed, :class:`ErrorInfo`), the errors of retried attempts, the limit
    hit, working and total time, invalidation, approval decisions, and the scorers that called a
    model while scoring.
``parse_error(message, traceback) -> ErrorInfo``
    The structure of one error: the exception a Python traceback ends with (qualified and bare class
    names, its whole message, never split into types), and for an exception group, its inner
    exceptions (see :func:`parse_error`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from benchscore.common.errors import BadInput

#: the log file format read here (``EvalLog.version``)
LOG_FORMAT_VERSION = 2
#: the oldest inspect_ai whose logs carry what benchscore reads: ``working_time`` (0.3.70) and the
#: scorer spans that show a model call made while scoring (0.3.94)
MIN_WRITER_VERSION = (0, 3, 94)
#: the statuses of a finished log (``started``: still running, or crashed before it finished)
FINISHED = ("success", "cancelled", "error")
#: the file names in a log folder that are no logs (inspect_ai's listings)
MANIFESTS = frozenset({"eval-set.json", "logs.json"})
EVAL_SET_MANIFEST = "eval-set.json"

INSTALL_HINT = "pip install -e '.[inspect]'"
_ZIP_STORED, _ZIP_DEFLATED, _ZIP_ZSTANDARD = 0, 8, 93
_COPY_CHUNK = 1 << 20
_ATTACHMENT = "attachment://"


def require_reader(zstd: bool = True) -> None:
    """Refuse, in one line, when a module the reader needs is not installed (the ``inspect`` extra)."""
    for module in ("zstandard",) if zstd else ():
        try:
            __import__(module)
        except ImportError:
            raise BadInput(f"reading inspect_ai logs needs {module}: {INSTALL_HINT}") from None


def version_tuple(text: str | None) -> tuple[int, int, int] | None:
    """``"0.3.285"`` -> ``(0, 3, 285)``; a development suffix is ignored (``0.3.43.dev33+g6c9`` -> ``(0, 3, 43)``)."""
    if not text:
        return None
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


# --------------------------------------------------------------------------- where the logs are


@dataclass(frozen=True)
class LogLocation:
    """One log to read: ``url`` is a local path or an fsspec URL; ``name`` its file name (for messages);
    ``eval_set`` the eval-set folder it was picked from (the final log of task ``task_id``), if any;
    ``replaced`` the older logs of that task the eval set holds (not read); ``unlogged`` the task ids its
    eval set's manifest lists that no log in the folder belongs to (never run, or their logs removed)."""

    url: str
    name: str
    remote: bool
    eval_set: str | None = None
    task_id: str | None = None
    replaced: tuple[str, ...] = ()
    unlogged: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.url


def _split_url(text: str) -> tuple[Any, str, bool]:
    """(fsspec filesystem or None for local, path, remote?) of what the user gave."""
    if "://" not in text or text.startswith("file://"):
        return None, text[len("file://"):] if text.startswith("file://") else text, False
    try:
        import fsspec
        from fsspec.core import url_to_fs

        fs, path = url_to_fs(text)
    except (ImportError, ValueError) as exc:  # an unknown protocol, a missing fsspec backend (s3fs, gcsfs)
        raise BadInput(f"cannot open this URL: {' '.join(str(exc).split())}", source=text) from None
    del fsspec
    return fs, path, True


def _remote_call(url: str, what: str, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except FileNotFoundError:
        raise BadInput("not found", source=url) from None
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of a remote filesystem is one line
        raise BadInput(f"cannot {what}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                       source=url) from None


def _is_log_name(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return (base.endswith(".eval") or base.endswith(".json")) and base not in MANIFESTS and not base.startswith(".")


def resolve_logs(given: Iterable[str | os.PathLike[str]]) -> list[LogLocation]:
    """The logs to read from what the user gave (see the module docstring); refuses a missing path, an
    empty folder and an unreadable eval-set manifest, each in one line. A log named twice is read twice (the
    domains refuse the duplicate samples it gives)."""
    out: list[LogLocation] = []
    for item in given:
        text = os.fspath(item)
        fs, path, remote = _split_url(text)
        out.extend(_resolve_remote(text, fs, path) if remote else _resolve_local(Path(path)))
    return out


def _resolve_local(path: Path) -> list[LogLocation]:
    if path.is_dir():
        if (path / EVAL_SET_MANIFEST).is_file():
            return _eval_set(str(path), None, str(path / EVAL_SET_MANIFEST), [str(p) for p in _local_listing(path)])
        found = _local_listing(path)
        if not found:
            raise BadInput("a folder holding no inspect_ai log (.eval or .json)", source=path)
        return [LogLocation(str(p), p.name, False) for p in found]
    if not path.exists() and not path.is_symlink():
        raise BadInput("file not found", source=path)
    return [LogLocation(str(path), path.name, False)]


def _local_listing(folder: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in files if _is_log_name(f))
    return sorted(found, key=str)


def _resolve_remote(url: str, fs: Any, path: str) -> list[LogLocation]:
    protocol = url.split("://", 1)[0]

    def full(p: str) -> str:
        return p if "://" in p else f"{protocol}://{p}"

    if _remote_call(url, "reach the log", fs.isdir, path):
        listing = [(full(p), info) for p, info in
                   _remote_call(url, "list the folder", fs.find, path, None, False, True).items()
                   if info.get("type", "file") == "file"]
        manifest = [u for u, _ in listing if u.rstrip("/").endswith("/" + EVAL_SET_MANIFEST)
                    and u.rstrip("/").rsplit("/", 1)[0] == full(path).rstrip("/")]
        logs = sorted(u for u, _ in listing if _is_log_name(u))
        if manifest:
            return _eval_set(url, fs, manifest[0], logs)
        if not logs:
            raise BadInput("a folder holding no inspect_ai log (.eval or .json)", source=url)
        return [LogLocation(u, u.rsplit("/", 1)[-1], True) for u in logs]
    if not _remote_call(url, "reach the log", fs.exists, path):
        raise BadInput("not found", source=url)
    return [LogLocation(url, path.rsplit("/", 1)[-1], True)]


def _instant(value: Any) -> float | None:
    """An ISO 8601 time a log records (``2025-05-12T20:28:13-04:00``) as seconds since the epoch (a time
    without an offset is UTC); None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    from datetime import UTC, datetime

    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def attempt_order(header: Mapping[str, Any]) -> tuple[float, float, float]:
    """Where a log stands among the attempts of its task, from what the log itself records: ``eval.created``
    (each attempt of an eval set, and each retry, is created after the one it follows: inspect_ai gives a
    retry a new ``created`` and moves it past any existing log of the task), then ``stats.completed_at``,
    then ``stats.started_at``; a time the log does not record sorts first. File times never count: a folder
    copied with ``cp -r`` loses them (inspect_ai's own eval-set listing orders by file time)."""
    ev = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    stats = header.get("stats") if isinstance(header.get("stats"), dict) else {}
    order = (_instant(ev.get("created")), _instant(stats.get("completed_at")), _instant(stats.get("started_at")))
    return tuple(float("-inf") if t is None else t for t in order)  # type: ignore[return-value]


def _eval_set(folder: str, fs: Any, manifest: str, logs: Sequence[str]) -> list[LogLocation]:
    """The final log of each task of an eval set: of the logs of each task id the manifest lists, the last
    attempt by what the logs record (:func:`attempt_order`; then the file name), never by file times."""
    raw = _read_small(manifest, fs)
    try:
        doc = json.loads(raw)
        tasks = [t["task_id"] for t in doc["tasks"]]
        set_id = str(doc.get("eval_set_id") or "")
        if not all(isinstance(t, str) for t in tasks):
            raise TypeError("task_id is not a text")
    except (ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"not an inspect_ai eval-set manifest ({type(exc).__name__}: {exc})", source=manifest,
                       field="tasks") from None
    by_task: dict[str, list[tuple[str, tuple[float, float, float]]]] = {}
    for url in logs:
        task_id, order = _peek_attempt(url, fs)
        if task_id in tasks:
            by_task.setdefault(task_id, []).append((url, order))
    out = []
    unlogged = tuple(t for t in tasks if t not in by_task)
    for task_id in tasks:
        attempts = sorted(by_task.get(task_id, []), key=lambda t: (t[1], t[0]))
        if not attempts:
            continue
        url, _ = attempts[-1]
        out.append(LogLocation(url, url.replace("\\", "/").rsplit("/", 1)[-1], fs is not None,
                               eval_set=set_id or str(folder), task_id=task_id,
                               replaced=tuple(u.replace("\\", "/").rsplit("/", 1)[-1] for u, _ in attempts[:-1]),
                               unlogged=unlogged))
    if not out:
        raise BadInput(f"an eval-set folder holding no log of its {len(tasks)} task(s)", source=folder)
    return out


def _read_small(url: str, fs: Any) -> bytes:
    if fs is None:
        from benchscore.common.readers import read_bytes

        return read_bytes(url)
    with _remote_call(url, "open", fs.open, url, "rb") as f:
        return f.read(1 << 24)


def _peek_attempt(url: str, fs: Any) -> tuple[str | None, tuple[float, float, float]]:
    """A log's ``eval.task_id`` and :func:`attempt_order`, read from its header alone (task id None when it
    has none to read)."""
    try:
        with (open(url, "rb") if fs is None else fs.open(url, "rb")) as f:
            doc = _header_document(f, url, url.endswith(".eval"))
    except BadInput:
        return None, attempt_order({})
    ev = doc.get("eval") if isinstance(doc, dict) else None
    return (ev.get("task_id") if isinstance(ev, dict) else None), attempt_order(doc)


# --------------------------------------------------------------------------- the raw members


def _loads(data: bytes | str, where: str, source: str, record: str | None = None) -> Any:
    """orjson; stdlib json for a document holding NaN or Infinity (inspect_ai writes them)."""
    import orjson

    from benchscore.common.readers import check_nesting

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:  # the readers' one limit: nothing deeper reaches a parser, or the code that walks what it gives
        check_nesting(raw, source)
    except BadInput as exc:
        raise BadInput(f"{where} is {exc.detail}", source=source, record=record) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise BadInput(f"{where} is not JSON ({exc})", source=source, record=record) from None


_DCTX: list[Any] = []


def _decompressor() -> Any:
    """One zstd decompressor for every member (making one costs about 30 us: a second per 30,000 members)."""
    if not _DCTX:
        import zstandard

        _DCTX.append(zstandard.ZstdDecompressor())
    return _DCTX[0]


def _member_bytes(fp: BinaryIO, info: Any, source: str) -> bytes:
    """The bytes of one zip member: read raw and decompressed here (stored, deflate or zstd), CRC checked."""
    if info.header_offset < 0 or info.compress_size < 0:  # zipfile's arithmetic on a damaged directory
        raise BadInput(f"member {info.filename!r} lies outside the file (offset {info.header_offset}: a damaged zip)",
                       source=source)
    fp.seek(info.header_offset)
    head = fp.read(30)
    if len(head) != 30 or head[:4] != b"PK\x03\x04":
        raise BadInput(f"member {info.filename!r} has no local header (a damaged zip)", source=source)
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fp.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise BadInput(f"member {info.filename!r} is cut short (a damaged zip)", source=source)
    method = info.compress_type
    try:
        if method == _ZIP_STORED:
            data = raw
        elif method == _ZIP_DEFLATED:
            data = zlib.decompress(raw, -15)
        elif method == _ZIP_ZSTANDARD:
            dctx = _decompressor()
            data = dctx.decompress(raw, max_output_size=info.file_size) if info.file_size else b""
            if len(data) != info.file_size:  # several zstd frames (inspect_ai cuts one every 200 MiB)
                import io

                data = dctx.stream_reader(io.BytesIO(raw), read_across_frames=True).read()
        else:
            raise BadInput(f"member {info.filename!r} uses zip compression method {method}; inspect_ai logs use "
                           "stored, deflate or zstd", source=source)
    except (zlib.error, ValueError) as exc:
        raise BadInput(f"member {info.filename!r} cannot be decompressed ({exc})", source=source) from None
    except Exception as exc:  # noqa: BLE001 - zstandard.ZstdError and the like
        if type(exc).__name__ == "ZstdError":
            raise BadInput(f"member {info.filename!r} cannot be decompressed ({exc})", source=source) from None
        raise
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise BadInput(f"member {info.filename!r} fails its CRC check (a damaged zip)", source=source)
    return data


def _zip(fp: BinaryIO, source: str) -> Any:
    import zipfile

    try:
        return zipfile.ZipFile(fp)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:  # UnicodeDecodeError: a ValueError
        raise BadInput(f"not a readable inspect_ai log (not a zip: {exc})", source=source) from None
    except NotImplementedError as exc:  # a zip version or feature zipfile does not read
        raise BadInput(f"not a readable inspect_ai log (a zip benchscore cannot read: {exc})", source=source) from None


def _members(zf: Any) -> dict[str, Any]:
    """The zip's members by name; a name written twice is its last copy (as every zip reader reads it)."""
    out: dict[str, Any] = {}
    for info in zf.infolist():
        out.pop(info.filename, None)
        out[info.filename] = info
    return out


class _Member(NamedTuple):
    """What reading one zip member needs (the fields of ``zipfile.ZipInfo`` used here)."""

    filename: str
    compress_type: int
    CRC: int
    compress_size: int
    file_size: int
    header_offset: int


_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"


def _central_directory(fp: BinaryIO, source: str = "") -> dict[str, _Member] | None:
    """The zip's members by name, read straight from its central directory with ``struct`` (zip64 included;
    a name written twice is its last copy). None when the file is not laid out as expected: the caller then
    uses :mod:`zipfile`, which says what is wrong."""
    fp.seek(0, 2)
    size = fp.tell()
    tail_len = min(size, 65536 + 22)
    fp.seek(size - tail_len)
    tail = fp.read(tail_len)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return None
    _, _, _, _, count, cd_size, cd_offset, _ = struct.unpack_from("<4s4H2LH", tail, at)
    if count == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF:
        loc = tail.rfind(_EOCD64_LOCATOR, 0, at)
        if loc < 0:
            return None
        (eocd64_offset,) = struct.unpack_from("<Q", tail, loc + 8)
        fp.seek(eocd64_offset)
        rec = fp.read(56)
        if len(rec) < 56 or rec[:4] != b"PK\x06\x06":
            return None
        count, cd_size, cd_offset = struct.unpack_from("<3Q", rec, 32)
    fp.seek(cd_offset)
    cd = fp.read(cd_size)
    if len(cd) != cd_size:
        return None
    out: dict[str, _Member] = {}
    pos = 0
    unpack = struct.Struct("<4s4x2H4x3L5H4xL").unpack_from
    for _ in range(count):
        if cd[pos:pos + 4] != _CENTRAL:
            return None
        _, flags, method, crc, csize, usize, name_len, extra_len, comment_len, _, _, offset = unpack(cd, pos)
        name_raw = cd[pos + 46:pos + 46 + name_len]
        try:
            name = name_raw.decode("utf-8" if flags & 0x800 else "cp437")
        except UnicodeDecodeError:
            raise BadInput(f"a member name in the zip's central directory is not UTF-8, though its flag says it is: "
                           f"{name_raw[:80]!r} (a damaged zip)", source=source) from None
        if 0xFFFFFFFF in (csize, usize, offset):
            extra = cd[pos + 46 + name_len:pos + 46 + name_len + extra_len]
            usize, csize, offset = _zip64_sizes(extra, usize, csize, offset)
        out.pop(name, None)
        out[name] = _Member(name, method, crc, csize, usize, offset)
        pos += 46 + name_len + extra_len + comment_len
    return out


def _zip64_sizes(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    i = 0
    while i + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, i)
        if tag == 1:
            values = list(struct.unpack_from(f"<{length // 8}Q", extra, i + 4))
            if usize == 0xFFFFFFFF and values:
                usize = values.pop(0)
            if csize == 0xFFFFFFFF and values:
                csize = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
            break
        i += 4 + length
    return usize, csize, offset


def _header_document(fp: BinaryIO, source: str, is_eval: bool, index: dict[str, Any] | None = None) -> dict[str, Any]:
    """The log's header as a plain dict: ``header.json`` of an ``.eval`` log (or, for a log that never
    finished, its ``_journal/start.json`` with status ``started``); a ``.json`` log's keys before ``samples``.
    ``index`` (when given) receives the zip's members, so the samples are read without a second pass."""
    if is_eval:
        members = _central_directory(fp, source) or _members(_zip(fp, source))
        if index is not None:
            index.update(members)
        if "header.json" in members:
            doc = _loads(_member_bytes(fp, members["header.json"], source), "header.json", source)
        elif "_journal/start.json" in members:
            doc = _loads(_member_bytes(fp, members["_journal/start.json"], source), "_journal/start.json", source)
            if isinstance(doc, dict):
                doc = {**doc, "status": "started"}
        else:
            raise BadInput("not a readable inspect_ai log (no header.json in the zip)", source=source)
    else:
        doc = _json_header(fp, source)
    if not isinstance(doc, dict):
        raise BadInput("not a readable inspect_ai log (its header is not a JSON object)", source=source)
    return doc


#: how deep a ``.json`` log may nest: the readers' one limit (every ``.eval`` member is checked against it too)
_LOG_DEPTH = 100
_JSON_OPEN, _JSON_CLOSE = frozenset({"start_map", "start_array"}), frozenset({"end_map", "end_array"})


def _too_deep(source: str) -> BadInput:
    return BadInput(f"the log is nested deeper than {_LOG_DEPTH} levels (arrays and objects inside each other); "
                    "the limit is the same for every input", source=source)


def _value(events: Iterator[tuple[str, Any]], first: tuple[str, Any], depth: int, source: str) -> Any:
    """The JSON value whose first event is ``first`` (at ``depth`` levels down), built from ijson's prefix-free
    events (``ijson.parse`` carries a prefix as long as the nesting on every event: a value nested 100,000 deep
    took tens of GB)."""
    from ijson.common import ObjectBuilder

    builder, level = ObjectBuilder(), 0
    event, value = first
    while True:
        builder.event(event, value)
        if event in _JSON_OPEN:
            level += 1
            if depth + level > _LOG_DEPTH:
                raise _too_deep(source)
        elif event in _JSON_CLOSE:
            level -= 1
        if level == 0:
            return builder.value
        event, value = next(events)


def _top_level(fp: BinaryIO, source: str) -> Iterator[tuple[str, Any]]:
    """Each top-level key of a ``.json`` log with the events of its value still to come (the caller builds it with
    :func:`_value` or leaves it: the next key is then found by skipping to depth 1)."""
    import ijson

    events = ijson.basic_parse(fp, use_float=True)
    depth = 0
    for event, value in events:
        if event in _JSON_OPEN:
            depth += 1
            if depth > _LOG_DEPTH:
                raise _too_deep(source)
        elif event in _JSON_CLOSE:
            depth -= 1
        elif event == "map_key" and depth == 1:
            yield value, events  # type: ignore[misc]


def _json_header(fp: BinaryIO, source: str) -> dict[str, Any]:
    """The top-level keys of a ``.json`` log up to ``samples``, streamed (the whole document when ijson cannot
    read it, e.g. a NaN metric)."""
    try:
        doc: dict[str, Any] = {}
        for key, events in _top_level(fp, source):
            if key == "samples":
                return doc
            doc[key] = _value(events, next(events), 1, source)
        return doc
    except (KeyboardInterrupt, SystemExit, BadInput):
        raise
    except Exception:  # noqa: BLE001 - NaN, Infinity or no ijson: read the whole document
        fp.seek(0)
        whole = _loads(fp.read(), "the log", source)
        if not isinstance(whole, dict):
            raise BadInput("not a readable inspect_ai log (not a JSON object)", source=source) from None
        return {k: v for k, v in whole.items() if k not in ("samples", "reductions")}


# --------------------------------------------------------------------------- the header


@dataclass(frozen=True)
class LogError:
    """The error a run ended with (``EvalLog.error``): its message and traceback."""

    message: str
    traceback: str


@dataclass(frozen=True)
class LogHeader:
    """One log's header, checked. ``path`` is the local file read (a temporary copy for a remote log),
    ``sha256`` its digest. ``spec`` is the raw ``eval`` object for anything not named here."""

    location: LogLocation
    path: Path
    sha256: str
    format: str  # "eval" or "json"
    version: int
    status: str  # success, cancelled, error
    error: LogError | None
    eval_id: str
    run_id: str
    created: str | None
    task: str
    task_id: str | None
    task_version: Any
    task_file: str | None
    task_args: dict[str, Any]
    model: str
    model_args: dict[str, Any]
    dataset_name: str | None
    dataset_location: str | None
    sample_ids: list[str | int] | None
    dataset_samples: int | None
    epochs: int
    epochs_reducer: list[str] | None
    scorers: list[str] | None
    inspect_version: str | None
    metadata: dict[str, Any]
    config: dict[str, Any]
    invalidated: bool
    results: dict[str, Any] | None
    spec: dict[str, Any] = field(repr=False)
    #: the ``.eval`` zip's members by name (read once with the header, used by :func:`iter_samples`)
    members: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.location.name

    @property
    def final(self) -> bool:
        """The run ended as planned (status ``success``); a ``cancelled`` or ``error`` run is not final."""
        return self.status == "success"

    def identity(self) -> dict[str, Any]:
        """What an output records of the log: file name and sha256, eval, run, task, model, writer."""
        return {"tool": "inspect_ai", "log": self.name, "log_sha256": self.sha256, "eval_id": self.eval_id,
                "run_id": self.run_id, "task": self.task, "model": self.model,
                "inspect_ai_version": self.inspect_version}

    def ended(self) -> str:
        """One line: how the run ended (``status success``, or the status and the error's message)."""
        if self.error is None:
            return f"status {self.status}"
        return f"status {self.status}: {' '.join(self.error.message.split())}"


def _typed(value: Any, kind: type | tuple[type, ...], source: str, name: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BadInput(f"expected {getattr(kind, '__name__', kind)}, got {value!r}"[:300], source=source, field=name)
    return value


def read_header(location: LogLocation, path: Path, sha256: str) -> LogHeader:
    """Read and check the header of one log at the local ``path``; refuses (one line each) a file that is no
    inspect_ai log, another file format or inspect_ai version, a log still running (status ``started``), a
    log written without samples."""
    source = location.url
    index: dict[str, Any] = {}
    with open(path, "rb") as fp:
        is_eval = fp.read(4) == b"PK\x03\x04" or not location.name.endswith(".json")  # a zip, as inspect_ai tells
        fp.seek(0)
        doc = _header_document(fp, source, is_eval, index)
    lowest = ".".join(map(str, MIN_WRITER_VERSION))
    if doc.get("version") != LOG_FORMAT_VERSION:
        raise BadInput(f"log file format version {doc.get('version')}; benchscore reads format version "
                       f"{LOG_FORMAT_VERSION} (inspect_ai {lowest} to 0.3.x)", source=source, field="version")
    ev = _typed(doc.get("eval"), dict, source, "eval")
    writer = (ev.get("packages") or {}).get("inspect_ai") if isinstance(ev.get("packages"), dict) else None
    wv = version_tuple(writer if isinstance(writer, str) else None)
    if wv is None or wv < MIN_WRITER_VERSION or wv[:2] != MIN_WRITER_VERSION[:2]:
        raise BadInput(f"written by inspect_ai {writer or '(unknown version)'}; benchscore reads logs of inspect_ai "
                       f"{lowest} to 0.3.x (they record working_time and scorer spans)",
                       source=source, field="eval.packages.inspect_ai")
    status = doc.get("status")
    if status == "started":
        raise BadInput("the eval is still running or crashed before finishing (status 'started'); use a "
                       "finished log (success, cancelled or error)", source=source, field="status")
    if status not in FINISHED:
        raise BadInput(f"status {status!r}; expected one of {', '.join(FINISHED)}", source=source, field="status")
    config = _typed(ev.get("config") or {}, dict, source, "eval.config")
    if config.get("log_samples") is False:
        raise BadInput("the log holds no samples (written with --no-log-samples); run the eval with samples "
                       "logged", source=source, field="eval.config.log_samples")
    dataset = _typed(ev.get("dataset") or {}, dict, source, "eval.dataset")
    err = doc.get("error")
    error = None
    if isinstance(err, dict):
        error = LogError(str(err.get("message") or ""), str(err.get("traceback") or ""))
    epochs = config.get("epochs") or 1
    _typed(epochs, int, source, "eval.config.epochs")
    scorers = None
    if isinstance(ev.get("scorers"), list) and ev["scorers"]:
        scorers = [str(s.get("name")) for s in ev["scorers"] if isinstance(s, dict)]
    elif isinstance(doc.get("results"), dict) and isinstance(doc["results"].get("scores"), list):
        scorers = list(dict.fromkeys(str(s.get("name")) for s in doc["results"]["scores"] if isinstance(s, dict)))
        scorers = scorers or None
    reducer = config.get("epochs_reducer")
    return LogHeader(
        location=location, path=path, sha256=sha256, format="eval" if is_eval else "json", version=LOG_FORMAT_VERSION,
        status=status, error=error,
        eval_id=_typed(ev.get("eval_id"), str, source, "eval.eval_id"),
        run_id=_typed(ev.get("run_id"), str, source, "eval.run_id"),
        created=ev.get("created") if isinstance(ev.get("created"), str) else None,
        task=_typed(ev.get("task"), str, source, "eval.task"),
        task_id=ev.get("task_id") if isinstance(ev.get("task_id"), str) else None,
        task_version=ev.get("task_version"),
        task_file=ev.get("task_file") if isinstance(ev.get("task_file"), str) else None,
        task_args=dict(ev.get("task_args") or {}) if isinstance(ev.get("task_args") or {}, dict) else {},
        model=_typed(ev.get("model"), str, source, "eval.model"),
        model_args=dict(ev.get("model_args") or {}) if isinstance(ev.get("model_args") or {}, dict) else {},
        dataset_name=dataset.get("name") if isinstance(dataset.get("name"), str) else None,
        dataset_location=dataset.get("location") if isinstance(dataset.get("location"), str) else None,
        sample_ids=list(dataset["sample_ids"]) if isinstance(dataset.get("sample_ids"), list) else None,
        dataset_samples=dataset.get("samples") if isinstance(dataset.get("samples"), int) else None,
        epochs=epochs,
        epochs_reducer=[str(r) for r in reducer] if isinstance(reducer, list) else None,
        scorers=scorers, inspect_version=writer,
        metadata=dict(ev.get("metadata") or {}) if isinstance(ev.get("metadata") or {}, dict) else {},
        config=config, invalidated=bool(doc.get("invalidated")),
        results=doc.get("results") if isinstance(doc.get("results"), dict) else None, spec=ev, members=index)


# --------------------------------------------------------------------------- errors, structurally


@dataclass(frozen=True)
class ExceptionInfo:
    """One exception as its traceback prints it: ``type`` as printed (``RuntimeError``, ``pkg.mod.Err``, or
    ``/path/task.py.Err`` for a class defined in a task file inspect_ai loaded by path), ``name`` the bare
    class name, ``message`` its whole text (every line), ``exceptions`` a group's inner exceptions."""

    type: str
    name: str
    message: str
    exceptions: tuple[ExceptionInfo, ...] = ()

    @property
    def qualified(self) -> str | None:
        """``module.Class`` when the module is a dotted Python name (not a file path), else None."""
        if "/" in self.type or "\\" in self.type or " " in self.type:
            return None
        return self.type

    def leaves(self) -> tuple[ExceptionInfo, ...]:
        """The exceptions that are no group: this one, or every inner exception of a group, recursively."""
        if not self.exceptions:
            return (self,)
        return tuple(leaf for e in self.exceptions for leaf in e.leaves())


@dataclass(frozen=True)
class ErrorInfo:
    """One error a sample (or a retried attempt) recorded: inspect_ai's ``message`` (``repr`` of the
    exception, or its ``message`` attribute) and ``traceback``, and ``exception``, the parsed structure:
    the exception that ended the sample, or the exception group it was one of (see :func:`parse_error`)."""

    message: str
    traceback: str
    exception: ExceptionInfo | None

    def leaves(self) -> tuple[ExceptionInfo, ...]:
        return self.exception.leaves() if self.exception is not None else ()

    @property
    def cancelled(self) -> bool:
        """The error is the eval's own cancellation (Ctrl-C, a cancelled eval): every exception is one."""
        leaves = self.leaves()
        if leaves:
            return all(e.name in ("CancelledError", "Cancelled") for e in leaves)
        return self.message.startswith(("CancelledError(", "Cancelled("))


_CHAINS = ("During handling of the above exception, another exception occurred:",
           "The above exception was the direct cause of the following exception:")
_BOX = re.compile(r"^((?:  )+)[|+] ?(.*)$")
_SEP = re.compile(r"^((?:  )*?)(?:\+-|  )\+-{16} (?:\d+|\.\.\.) -{16}$")
_CLOSE = re.compile(r"^((?:  )*)\+-{36}$")
_NAME_END = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)$")
_REPR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(")


def _tokens(text: str) -> list[tuple[str, int, str]]:
    """Each line as (kind, depth, content): ``line`` (content at exception-group depth), ``sep`` (a new
    inner exception of the group at depth), ``close`` (the end of the group at depth)."""
    out = []
    for line in text.splitlines():
        m = _SEP.match(line)
        if m:
            out.append(("sep", len(m.group(1)) // 2, ""))
            continue
        m = _CLOSE.match(line)
        if m:
            out.append(("close", len(m.group(1)) // 2 - 1, ""))
            continue
        m = _BOX.match(line)
        if m:
            out.append(("line", len(m.group(1)) // 2, m.group(2)))
        else:
            out.append(("line", 0, line))
    return out


def _parse_chain(tokens: list[tuple[str, int, str]], depth: int) -> list[ExceptionInfo]:
    """The chained exceptions printed at ``depth`` (the last is the one raised)."""
    segments: list[list[tuple[str, int, str]]] = [[]]
    inner = 0  # inside an inner exception region of a group at this depth
    for tok in tokens:
        kind, d, content = tok
        if kind == "sep" and d == depth:
            inner = 1
        elif kind == "close" and d == depth:
            inner = 0
            segments[-1].append(tok)
            continue
        if not inner and kind == "line" and d == depth and content.strip() in _CHAINS:
            segments.append([])
            continue
        segments[-1].append(tok)
    out = []
    for seg in segments:
        exc = _parse_one(seg, depth)
        if exc is not None:
            out.append(exc)
    return out


def _parse_one(tokens: list[tuple[str, int, str]], depth: int) -> ExceptionInfo | None:
    """One exception printed at ``depth``: its own lines, and for a group each inner exception's region."""
    own: list[str] = []
    children: list[list[tuple[str, int, str]]] = []
    in_child = False
    for kind, d, content in tokens:
        if kind == "sep" and d == depth:
            children.append([])
            in_child = True
        elif kind == "close" and d == depth:
            in_child = False
        elif in_child:
            children[-1].append((kind, d, content))
        elif kind == "line" and d == depth:
            own.append(content)
    while own and not own[0].strip():
        own.pop(0)
    if not own:  # a top-level exception group prints one level in: "  + Exception Group Traceback ..."
        deeper = [t for t in tokens if t[1] > depth]
        return _parse_one(tokens, depth + 1) if deeper and not children else None
    i = 0
    if own[0].startswith(("Traceback (most recent call last):", "Exception Group Traceback (most recent call last):")):
        i = 1
        while i < len(own) and (own[i].startswith(" ") or not own[i]):
            i += 1
    if i >= len(own):
        return None
    line = own[i]
    type_text, _, first = line.partition(": ")
    if not first and line.endswith(":"):
        type_text = line[:-1]
    m = _NAME_END.search(type_text)
    if m is None or type_text != type_text.strip():
        return None
    rest = own[i + 1:]
    while rest and not rest[-1].strip():
        rest.pop()
    message = "\n".join([first, *rest])
    inner = []
    for child in children:
        chain = _parse_chain(child, depth + 1)
        if chain:
            inner.append(chain[-1])
    return ExceptionInfo(type=type_text, name=m.group(1), message=message, exceptions=tuple(inner))


def parse_error(message: str, traceback: str | None) -> ErrorInfo:
    """The structure of an error inspect_ai recorded (``EvalError`` / ``EvalRetryError``).

    The exception is the one the traceback ends with: its exception line (after the last frame) gives
    the class as printed, qualified (``module.Class``; ``/path/task.py.Class`` for a class defined in a
    task file) and bare (``Class``), and everything after ``Class: `` to the end is its message, so a
    multi-line message (``RuntimeError("docker compose up failed\\nstderr: ...")``) never yields a
    type from one of its lines. When the traceback names none (empty, cut), the class is the prefix
    of ``message``, which inspect_ai writes as ``repr(exception)`` (``AgentGaveUp('...')``).

    Exception groups: inspect_ai raises one inner exception of a task group in place of the group
    (which one is arbitrary), the group printed as its context. When the raised exception is one of
    the inner exceptions of the group printed just before it, the error is that group: its
    ``exception`` is the group and :meth:`ErrorInfo.leaves` lists every inner exception. A group
    that ends the traceback itself is read the same way.
    """
    chain = _parse_chain(_tokens(traceback), 0) if traceback else []
    exc = chain[-1] if chain else None
    if exc is not None and not exc.exceptions and len(chain) > 1 and chain[-2].exceptions:
        group = chain[-2]
        if any(leaf.type == exc.type and leaf.message == exc.message for leaf in group.leaves()):
            exc = group
    if exc is None:
        m = _REPR.match(message)
        if m is not None:
            exc = ExceptionInfo(type=m.group(1), name=m.group(1), message=message)
    return ErrorInfo(message=message, traceback=traceback or "", exception=exc)


# --------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class ScoreEdit:
    """One entry of a score's edit history (``inspect_ai.log.edit_score``): the value it set (``UNCHANGED``
    when it kept the value), who made it and why (None for the original score inspect_ai keeps first)."""

    value: Any
    author: str | None
    reason: str | None
    timestamp: str | None


@dataclass(frozen=True, slots=True)
class SampleScore:
    """One scorer's score of a sample: ``value`` (``C``/``I``/``P``/``N``, a number, a boolean, a list or a
    dict), ``answer``, ``explanation``, ``metadata``, and ``history`` (empty unless it was edited)."""

    value: Any
    answer: str | None
    explanation: str | None
    metadata: dict[str, Any] | None
    history: tuple[ScoreEdit, ...] = ()

    @property
    def edits(self) -> tuple[ScoreEdit, ...]:
        """The edits made after the run: the history without the original score inspect_ai keeps first."""
        if self.history and self.history[0].author is None:
            return self.history[1:] or self.history[:0]
        return self.history

    @property
    def original(self) -> Any:
        """The value the scorer gave, before any edit (None for a score an edit added)."""
        return self.history[0].value if self.history and self.history[0].author is None else None


@dataclass(frozen=True)
class Approval:
    """One approval decision (``ApprovalEvent``): ``approve``, ``modify``, ``reject``, ``escalate`` or
    ``terminate``, by ``approver``, on the tool call ``function(arguments)``."""

    decision: str
    approver: str
    function: str
    arguments: dict[str, Any]
    explanation: str | None


@dataclass(frozen=True)
class RetriedError:
    """An attempt of the sample that errored and was retried (``error_retries``), with the approval
    decisions its kept events hold (inspect_ai keeps the events back to the attempt's last model call)."""

    error: ErrorInfo
    approvals: tuple[Approval, ...]


@dataclass(frozen=True)
class Invalidation:
    """Who invalidated the sample (``inspect_ai.log.invalidate_samples``) and why."""

    author: str | None
    reason: str | None


@dataclass(slots=True)
class SampleRecord:
    """One sample x epoch of a log, as plain values (see the module docstring). A record of its own: changing
    it changes nothing in the log."""

    id: str | int
    epoch: int
    uuid: str | None
    input: Any
    target: Any
    choices: list[str] | None
    metadata: dict[str, Any]
    scores: dict[str, SampleScore]
    output: str
    error: ErrorInfo | None
    retries: tuple[RetriedError, ...]
    limit: str | None
    working_time: float | None
    total_time: float | None
    invalidation: Invalidation | None
    approvals: tuple[Approval, ...]
    model_graded: frozenset[str]

    @property
    def key(self) -> str:
        return f"sample {self.id!r} epoch {self.epoch}"


def scorers_calling_models(events: Iterable[Mapping[str, Any]]) -> set[str]:
    """Names of the scorers inside whose span a model was called (inspect_ai events as dicts with
    ``event``, ``id``/``span_id``, ``parent_id``, ``type``, ``name``)."""
    spans: dict[str, tuple[str | None, str | None, str | None]] = {}
    found: set[str] = set()
    for ev in events:
        kind = ev.get("event")
        if kind == "span_begin":
            spans[ev.get("id")] = (ev.get("name"), ev.get("type"), ev.get("parent_id"))  # type: ignore[index]
        elif kind == "model":
            span = ev.get("span_id")
            seen: set[str] = set()
            while span is not None and span in spans and span not in seen:
                seen.add(span)
                name, typ, parent = spans[span]
                if typ == "scorer" and name:
                    found.add(name)
                    break
                span = parent
    return found


def _resolve(value: Any, attachments: Mapping[str, str]) -> Any:
    """``attachment://HASH`` texts replaced by their content (inspect_ai's de-duplication of long texts)."""
    if isinstance(value, str):
        if value.startswith(_ATTACHMENT):
            return attachments.get(value[len(_ATTACHMENT):], value)
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _span_id(value: Any) -> Any:
    """A span id as inspect_ai writes it (a text; an integer is taken too); anything else is no id."""
    return value if type(value) in (str, int) else None


def _scan_events(events: Any, attachments: Mapping[str, str], *, approvals_possible: bool = True
                 ) -> tuple[tuple[Approval, ...], frozenset[str]]:
    """One pass over a sample's events (nested ones too: older logs nest tool and subtask events): its approval
    decisions, and the scorers inside whose span a model was called (see :func:`scorers_calling_models`).

    ``approvals_possible=False`` (the sample's bytes hold no ``"approval"``): only the events of the scoring
    phase are read, from the end back to the ``scorers`` span that opens it (model calls made while scoring
    happen there)."""
    approvals: list[Approval] = []
    scorer_spans: dict[Any, Any] = {}  # span id -> scorer name (a span of type scorer)
    parents: dict[Any, Any] = {}  # span id -> parent span id
    models: list[Any] = []  # the span of each model event
    if not approvals_possible and type(events) is list:
        start = len(events)
        for i in range(len(events) - 1, -1, -1):
            ev = events[i]
            if type(ev) is dict and ev.get("event") == "span_begin" and ev.get("type") == "scorers":
                start = i
                break
            if type(ev) is dict and ev.get("event") in ("tool", "subtask") and ev.get("events"):
                start = 0  # an older log's nested events: read them all
                break
        else:
            start = 0
        events = events[start:]
    todo = [events] if type(events) is list else []
    while todo:
        for ev in todo.pop():
            kind = ev.get("event") if type(ev) is dict else None
            if kind == "span_begin":
                sid = _span_id(ev.get("id"))
                parents[sid] = _span_id(ev.get("parent_id"))
                if ev.get("type") == "scorer" and type(ev.get("name")) is str and ev["name"]:
                    scorer_spans[sid] = ev["name"]
            elif kind == "model":
                models.append(_span_id(ev.get("span_id")))
            elif kind == "approval":
                approvals.append(_approval(ev, attachments))
            elif kind in ("tool", "subtask") and type(ev.get("events")) is list and ev["events"]:
                todo.append(ev["events"])
    graded: set[str] = set()
    if scorer_spans:
        for span in models:
            seen: set[Any] = set()
            while span is not None and span not in seen:
                if span in scorer_spans:
                    graded.add(scorer_spans[span])
                    break
                seen.add(span)
                span = parents.get(span)
    return tuple(approvals), frozenset(graded)


def _approval(ev: dict[str, Any], attachments: Mapping[str, str]) -> Approval:
    call = ev.get("call") if isinstance(ev.get("call"), dict) else {}
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    return Approval(decision=str(ev.get("decision")), approver=str(ev.get("approver")),
                    function=str(call.get("function")), arguments=_resolve(args, attachments),
                    explanation=ev.get("explanation") if isinstance(ev.get("explanation"), str) else None)


def _error(raw: Any, source: str, where: str, name: str) -> ErrorInfo | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("message"), str):
        raise BadInput(f"expected an error with a message, got {raw!r}"[:300], source=source, record=where, field=name)
    tb = raw.get("traceback")
    return parse_error(raw["message"], tb if isinstance(tb, str) else None)


def _score(raw: Any, source: str, sid: Any, epoch: Any, name: str) -> SampleScore:
    if type(raw) is not dict or "value" not in raw:
        raise BadInput(f"expected a score with a value, got {raw!r}"[:300], source=source,
                       record=f"sample {sid!r} epoch {epoch}", field=f"scores.{name}")
    history: tuple[ScoreEdit, ...] = ()
    if raw.get("history") and type(raw["history"]) is not list:
        raise BadInput(f"expected a list of edits, got {raw['history']!r}"[:300], source=source,
                       record=f"sample {sid!r} epoch {epoch}", field=f"scores.{name}.history")
    if raw.get("history"):
        edits = []
        for h in raw["history"]:
            if type(h) is not dict:
                raise BadInput("expected an edit", source=source, record=f"sample {sid!r} epoch {epoch}",
                               field=f"scores.{name}.history")
            prov = h.get("provenance") if type(h.get("provenance")) is dict else None
            edits.append(ScoreEdit(value=h.get("value", "UNCHANGED"),
                                   author=str(prov.get("author")) if prov and prov.get("author") is not None else None,
                                   reason=prov.get("reason") if prov and isinstance(prov.get("reason"), str) else None,
                                   timestamp=prov.get("timestamp") if prov and isinstance(prov.get("timestamp"), str)
                                   else None))
        history = tuple(edits)
    meta, answer, explanation = raw.get("metadata"), raw.get("answer"), raw.get("explanation")
    return SampleScore(raw["value"], answer if type(answer) is str else None,
                       explanation if type(explanation) is str else None,
                       meta if type(meta) is dict else None, history)


def _completion(output: Any, attachments: Mapping[str, str]) -> str:
    """``ModelOutput.completion`` as inspect_ai computes it: the field when set, else the first choice's text
    (a text content, or its text parts joined by newlines)."""
    if not isinstance(output, dict):
        return ""
    completion = output.get("completion")
    if isinstance(completion, str) and completion:
        return _resolve(completion, attachments)
    choices = output.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    message = choices[0].get("message") if isinstance(choices[0].get("message"), dict) else {}
    content = _resolve(message.get("content"), attachments)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text")) for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


def _check_input(value: Any, source: str, where: str) -> None:
    """A sample's ``input`` as inspect_ai writes it: a text, or a list of chat messages (objects) whose ``content``
    is a text or a list of content objects; anything else is refused in one line."""
    if type(value) is str:
        return
    if type(value) is not list:
        raise BadInput(f"expected a text or a list of chat messages, got {value!r}"[:300], source=source, record=where,
                       field="input")
    for i, message in enumerate(value):
        if type(message) is not dict:
            raise BadInput(f"expected a chat message (an object), got {message!r}"[:300], source=source, record=where,
                           field=f"input[{i}]")
        content = message.get("content")
        if content is None or type(content) is str:
            continue
        if type(content) is not list or any(type(c) is not dict for c in content):
            raise BadInput(f"expected a text or a list of content objects, got {content!r}"[:300], source=source,
                           record=where, field=f"input[{i}].content")


def sample_record(doc: Any, source: str, raw: bytes | None = None) -> SampleRecord:
    """One sample of a log (its JSON object) as a :class:`SampleRecord`; refuses a malformed one in one line.
    ``raw``: the sample's JSON bytes, when at hand (a sample whose bytes hold no ``"approval"`` has none, so
    only the scoring phase of its events is read)."""
    if type(doc) is not dict:
        raise BadInput("a sample is not a JSON object", source=source, field="samples")
    get = doc.get
    sid, epoch = get("id"), get("epoch")
    if type(sid) not in (str, int):
        raise BadInput(f"expected a sample id (a text or an integer), got {sid!r}"[:300], source=source, field="id")
    if type(epoch) is not int or epoch < 1:
        raise BadInput(f"expected an epoch >= 1, got {epoch!r}", source=source, record=f"sample {sid!r} epoch {epoch}",
                       field="epoch")
    attachments = get("attachments") or {}
    if type(attachments) is not dict:
        attachments = {}
    scores_raw = get("scores") or {}
    if type(scores_raw) is not dict:
        raise BadInput("expected the scores as an object", source=source, record=f"sample {sid!r} epoch {epoch}",
                       field="scores")
    scores = {str(k): _score(v, source, sid, epoch, str(k)) for k, v in scores_raw.items()}
    wt, tt = get("working_time"), get("total_time")
    for key, value in (("working_time", wt), ("total_time", tt)):
        if value is not None and type(value) not in (int, float):
            raise BadInput(f"expected a number of seconds, got {value!r}", source=source,
                           record=f"sample {sid!r} epoch {epoch}", field=key)
    limit = get("limit")
    limit_type = None
    if limit is not None:
        if type(limit) is not dict or type(limit.get("type")) is not str:
            raise BadInput(f"expected a limit with a type, got {limit!r}"[:300], source=source,
                           record=f"sample {sid!r} epoch {epoch}", field="limit")
        limit_type = limit["type"]
    retries: tuple[RetriedError, ...] = ()
    if get("error_retries"):
        where = f"sample {sid!r} epoch {epoch}"
        if type(get("error_retries")) is not list:
            raise BadInput(f"expected a list of errors, got {get('error_retries')!r}"[:300], source=source,
                           record=where, field="error_retries")
        for i, r in enumerate(get("error_retries")):
            if r is None:
                raise BadInput("expected the error of a retried attempt, got null", source=source, record=where,
                               field=f"error_retries[{i}]")
        retries = tuple(RetriedError(_error(r, source, where, f"error_retries[{i}]"),  # type: ignore[arg-type]
                                     _scan_events(r.get("events"), attachments)[0])
                        for i, r in enumerate(get("error_retries")))
    inv = get("invalidation")
    approvals, graded = _scan_events(get("events"), attachments,
                                     approvals_possible=raw is None or b'"approval"' in raw)
    metadata = get("metadata")
    error = get("error")
    text_input = get("input")
    _check_input(text_input, source, f"sample {sid!r} epoch {epoch}")
    return SampleRecord(
        id=sid, epoch=epoch, uuid=get("uuid") if type(get("uuid")) is str else None,
        input=_resolve(text_input, attachments) if attachments else text_input, target=get("target"),
        choices=get("choices") if type(get("choices")) is list else None,
        metadata=metadata if type(metadata) is dict else {},
        scores=scores, output=_completion(get("output"), attachments),
        error=_error(error, source, f"sample {sid!r} epoch {epoch}", "error") if error is not None else None,
        retries=retries, limit=limit_type,
        working_time=float(wt) if wt is not None else None, total_time=float(tt) if tt is not None else None,
        invalidation=Invalidation(str(inv.get("author")) if inv.get("author") is not None else None,
                                  inv.get("reason") if isinstance(inv.get("reason"), str) else None)
        if type(inv) is dict else None,
        approvals=approvals, model_graded=graded)


def iter_samples(header: LogHeader) -> Iterator[SampleRecord]:
    """Every sample x epoch of the log, one at a time, in the order the log stores them."""
    source = header.location.url
    with open(header.path, "rb") as fp:
        if header.format == "eval":
            members = header.members or _central_directory(fp, source) or _members(_zip(fp, source))
            for name, info in members.items():
                if name.startswith("samples/") and name.endswith(".json"):
                    data = _member_bytes(fp, info, source)
                    yield sample_record(_loads(data, name, source), source, data)
        else:
            yield from _json_samples(fp, source)


def _json_samples(fp: BinaryIO, source: str) -> Iterator[SampleRecord]:
    done = 0
    try:
        for key, events in _top_level(fp, source):
            if key != "samples":
                continue
            first = next(events)
            if first[0] != "start_array":  # not a list: read as the whole document reads it
                _value(events, first, 1, source)
                continue
            while (first := next(events))[0] != "end_array":
                yield sample_record(_value(events, first, 2, source), source)
                done += 1
            return
        return
    except (KeyboardInterrupt, SystemExit, BadInput, GeneratorExit):
        raise
    except Exception:  # noqa: BLE001 - NaN, Infinity or no ijson: the rest from the whole document
        fp.seek(0)
        whole = _loads(fp.read(), "the log", source)
        samples = whole.get("samples") if isinstance(whole, dict) else None
        for doc in (samples if isinstance(samples, list) else [])[done:]:
            yield sample_record(doc, source)


# --------------------------------------------------------------------------- opening logs


@dataclass
class InspectLog:
    """An opened log: its checked header, and its samples read on demand (:meth:`samples`)."""

    header: LogHeader

    def samples(self) -> Iterator[SampleRecord]:
        return iter_samples(self.header)


def _local_file(location: LogLocation) -> tuple[Path, str]:
    from benchscore.common.guard import note_input
    from benchscore.common.provenance import sha256_file
    from benchscore.common.readers import check_file

    path = Path(location.url)
    if path.is_dir():
        raise BadInput("is a folder, expected an inspect_ai log file (.eval or .json)", source=path)
    check_file(path)  # a regular file within the size limit: never a FIFO, a device or a link loop
    note_input(path)
    return path, sha256_file(path)


def fetch_log(location: LogLocation, folder: Path) -> tuple[Path, str]:
    """Copy a remote log to ``folder`` in one streamed read, hashing as it goes (size limit enforced)."""
    import hashlib

    from benchscore.common.readers import DEFAULT_MAX_BYTES

    fs, path, _ = _split_url(location.url)
    info = _remote_call(location.url, "reach the log", fs.info, path)
    if info.get("type") == "directory":
        raise BadInput("is a folder, expected an inspect_ai log file (.eval or .json)", source=location.url)
    if (info.get("size") or 0) > DEFAULT_MAX_BYTES:
        raise BadInput(f"is {info.get('size')} bytes; inputs are at most {DEFAULT_MAX_BYTES} bytes",
                       source=location.url)
    target = folder / f"{len(list(folder.iterdir()))}-{location.name}"
    digest = hashlib.sha256()
    size = 0
    with _remote_call(location.url, "open the log", fs.open, path, "rb") as src, open(target, "wb") as dst:
        while True:
            chunk = _remote_call(location.url, "read the log", src.read, _COPY_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > DEFAULT_MAX_BYTES:
                raise BadInput(f"is over {DEFAULT_MAX_BYTES} bytes; inputs are at most that", source=location.url)
            digest.update(chunk)
            dst.write(chunk)
    return target, digest.hexdigest()


@contextlib.contextmanager
def open_logs(given: Iterable[str | os.PathLike[str]]) -> Iterator[list[InspectLog]]:
    """Resolve what the user gave (:func:`resolve_logs`), fetch remote logs, read and check each header."""
    require_reader()
    locations = resolve_logs(given)
    with contextlib.ExitStack() as stack:
        folder: Path | None = None
        logs = []
        for loc in locations:
            if loc.remote:
                if folder is None:
                    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="benchscore-logs-")))
                path, sha = fetch_log(loc, folder)
            else:
                path, sha = _local_file(loc)
            logs.append(InspectLog(read_header(loc, path, sha)))
        yield logs


__all__ = [
    "EVAL_SET_MANIFEST", "FINISHED", "INSTALL_HINT", "LOG_FORMAT_VERSION", "MIN_WRITER_VERSION", "Approval",
    "ErrorInfo", "ExceptionInfo", "InspectLog", "Invalidation", "LogError", "LogHeader", "LogLocation",
    "RetriedError", "SampleRecord", "SampleScore", "ScoreEdit", "fetch_log", "iter_samples", "open_logs",
    "attempt_order", "parse_error", "read_header", "require_reader", "resolve_logs", "sample_record",
    "scorers_calling_models", "version_tuple",
]
