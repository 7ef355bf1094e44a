"""``benchscore verify OUTPUT.json... [--search DIR ...]`` and ``benchscore verify DIR/``.

Every output records how it was made (:mod:`benchscore.common.provenance`: ``command``,
``arguments`` with each input's name and sha256, ``created_at``). Verifying an output:

1. tells its kind by validation: the output is of a kind when it validates against that kind's
   model exactly (strict types, no unknown key; each domain lists its kinds, :class:`Kind`). One
   that validates as no kind, or as several, cannot be verified (exit 1, saying why). Its recorded
   command and metric id must be its kind's (else: cannot be verified, naming the field); then a
   kind written from live model calls or measured runs cannot be recomputed, and says why (exit 0):
   a recorded field can never turn verification off;
2. finds every input by its sha256: at its recorded path relative to the output, beside the output,
   as given (a folder's or a URL's files), under the ``--search`` folders (and the folder being
   verified), then in benchscore's own bundled data;
3. stages the inputs as the output records them (a file at its recorded path relative to the
   output, under its recorded name; the files of a folder or URL under their names relative to it)
   and re-runs the recorded command in this process on the recorded arguments, into a temporary
   folder, with ``SOURCE_DATE_EPOCH`` set to the recorded ``created_at`` (a folder or URL given is
   the same text, read from its staged copy: :func:`benchscore.common.provenance.staged`);
4. compares the recomputed JSON with the file, value by value: every value, the recorded inputs'
   names and places included.

An output that carries no provenance of its own (an Every Eval Ever record a leaderboard wrote)
names the output whose run wrote it (:attr:`Kind.written_with`): that run is re-run and the file
compared with its counterpart.

Outcomes: ``reproduced`` (N values), ``differs`` (every differing JSON path with both values),
``missing input`` (role, name and sha256), ``not recomputable`` (why), ``cannot be verified`` (why),
``failed`` (the command refused the inputs). One invocation that wrote several outputs (a build
folder) runs once. An output written by another benchscore version is compared on every value but
``provenance.benchscore_version``, and the outcome names both versions.
"""

from __future__ import annotations

import calendar
import contextlib
import io
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from .errors import BadInput, BenchscoreError
from .provenance import sha256_file
from .readers import loads_json, read_json_bytes

#: where benchscore's bundled data lives (the package folder): inputs named there are found there
PACKAGE = Path(__file__).resolve().parents[1]
REPRODUCED, DIFFERS, MISSING, NOT_RECOMPUTABLE, UNVERIFIABLE, FAILED, SKIPPED = (
    "reproduced", "differs", "missing input", "not recomputable", "cannot be verified", "failed", "skipped")
EXIT = {REPRODUCED: 0, NOT_RECOMPUTABLE: 0, SKIPPED: 0, DIFFERS: 1, UNVERIFIABLE: 1, MISSING: 2, FAILED: 2}
#: the provenance field that names the benchscore version (compared apart from the rest)
VERSION = "benchscore_version"


@dataclass(frozen=True)
class Kind:
    """A kind of output, told apart by validation: an output is of this kind when it validates
    exactly against one of ``models`` (pydantic; every top-level key one of the model's fields), or,
    for a format that is not benchscore's own, when ``check`` finds nothing wrong with it (``check``
    returns the first problem, None when there is none). ``metric`` says whether a metric id belongs
    to the kind (its description: ``metric_ids``); ``commands`` are the commands that write it; ``live``
    says why it cannot be recomputed (None: it can). ``written_with``: for a kind that carries no
    provenance of its own, the output whose run wrote it, from the document (its path relative to
    this file, its sha256), or why the document does not say."""

    name: str
    models: tuple[type, ...]
    metric: Callable[[str], bool]
    metric_ids: str
    commands: tuple[str, ...] = ()
    live: str | None = None
    check: Callable[[Any], str | None] | None = None
    written_with: Callable[[dict[str, Any]], tuple[str, str] | str] | None = None
    #: (folder, owner): a file in a folder of that name, beside whose folder the owner file lies, is of this kind
    #: or no output (in a folder it is verified, never skipped as an input)
    owner: tuple[str, str] | None = None

    def problem(self, doc: Any) -> str | None:
        """Why ``doc`` is not of this kind (the first field that does not validate), None when it is."""
        if self.check is not None:
            return self.check(doc)
        first = None
        for model in self.models:
            why = _model_problem(model, doc)
            if why is None:
                return None
            first = first or why
        return first


def _model_problem(model: Any, doc: Any) -> str | None:
    if not isinstance(doc, dict):
        return "not a JSON object"
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    unknown = [k for k in doc if k not in fields]
    if unknown:
        return f"{_step('', unknown[0])}: not a field of this kind"
    missing = [k for k, f in fields.items() if f.is_required() and k not in doc]
    if missing:
        return f"{missing[0]}: missing"
    from .outputs import check

    try:
        check(model, doc, source="output")
    except BadInput as exc:
        return f"{exc.field or '(root)'}: {exc.detail}"
    return None


def kinds_of(doc: Any, kinds: Sequence[Kind]) -> tuple[list[Kind], dict[str, str]]:
    """The kinds ``doc`` validates as, and, per kind it does not validate as, why."""
    held, why = [], {}
    for k in kinds:
        problem = k.problem(doc)
        if problem is None:
            held.append(k)
        else:
            why[k.name] = problem
    return held, why


def _closest(doc: dict[str, Any], kinds: Sequence[Kind], why: dict[str, str]) -> str:
    """The kind a document that validates as none comes closest to, with why it is not of it: the kind its
    metric id names, else the one sharing the most top-level fields with it."""
    metric = (doc.get("provenance") or {}).get("metric_id") if isinstance(doc.get("provenance"), dict) else None
    named = [k for k in kinds if isinstance(metric, str) and k.metric(metric) and k.name in why]

    def shared(k: Kind) -> int:
        return max((len(doc.keys() & {(f.alias or n) for n, f in m.model_fields.items()}) for m in k.models),
                   default=0)

    pool = named or [k for k in kinds if k.name in why and k.models]
    if not pool:
        return ""
    best = max(pool, key=shared)
    return f" (closest: a {best.name}, but {why[best.name]})"

@dataclass
class Outcome:
    path: Path
    status: str
    message: str = ""
    values: int = 0
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)
    #: the re-run's document it was compared with (reproduced or differs)
    recomputed: Any = None


class Finder:
    """Finds files by sha256 (hashes cached), first at given places, then by name, then any file,
    under the search folders."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = [f for f in dict.fromkeys(Path(x).resolve() for x in folders) if f.is_dir()]
        self._names: dict[str, list[Path]] | None = None

    def _index(self) -> dict[str, list[Path]]:
        if self._names is None:
            names: dict[str, list[Path]] = {}
            for folder in self.folders:
                for root, dirs, files in os.walk(folder):
                    dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                    for f in sorted(files):
                        names.setdefault(f, []).append(Path(root) / f)
            self._names = names
        return self._names

    @staticmethod
    def matches(path: Path, sha256: str) -> bool:
        try:
            return path.is_file() and sha256_file(path) == sha256
        except OSError:
            return False

    def find(self, name: str, sha256: str, near: Sequence[Path]) -> Path | None:
        for p in near:
            if self.matches(p, sha256):
                return p
        index = self._index()
        for p in index.get(name, []):
            if self.matches(p, sha256):
                return p
        for paths in index.values():
            for p in paths:
                if self.matches(p, sha256):
                    return p
        return None


def epoch_of(created_at: str) -> int:
    """Seconds since 1970 of a ``created_at`` (``2026-01-01T00:00:00Z``)."""
    return calendar.timegm(time.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ"))


@contextlib.contextmanager
def _pinned(created_at: str) -> Iterator[None]:
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch_of(created_at))
    try:
        yield
    finally:
        if old is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old


def _leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(_leaves(v) for v in value)
    return 1


def _step(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    text = str(key)
    if text.isidentifier():
        return f"{path}.{text}" if path else text
    return f"{path}[{orjson.dumps(text).decode()}]"


def differences(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Every JSON path where ``a`` (the file) and ``b`` (recomputed) differ, with both values (a
    missing key or list element is ``<absent>``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in dict.fromkeys([*a, *b]):
            if k not in b:
                out.append((_step(path, k), a[k], "<absent>"))
            elif k not in a:
                out.append((_step(path, k), "<absent>", b[k]))
            else:
                out.extend(differences(a[k], b[k], _step(path, k)))
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            if i >= len(b):
                out.append((_step(path, i), a[i], "<absent>"))
            elif i >= len(a):
                out.append((_step(path, i), "<absent>", b[i]))
            else:
                out.extend(differences(a[i], b[i], _step(path, i)))
        return out
    if type(a) is not type(b) or a != b:
        return [(path or "$", a, b)]
    return []


#: the folders a verify looks in, while it re-runs a command: a verify inside that command (a leaderboard's
#: reproduced mark) looks there too
_SEARCH: ContextVar[tuple[Path, ...]] = ContextVar("benchscore_verify_search", default=())


def searched() -> list[Path]:
    """The folders the verify re-running the current command looks in (none outside a verify)."""
    return list(_SEARCH.get())


class Unverifiable(Exception):
    """What a recorded argument says cannot be re-run as recorded (an ``UNVERIFIABLE`` outcome)."""


@dataclass
class _Run:
    folder: Path
    error: Outcome | None = None


@dataclass
class _Prepared:
    """An output's kind and the run that recomputes it (or the outcome that ends its verification)."""

    kind: Kind | None = None
    doc: dict[str, Any] | None = None
    run: _Run | None = None
    roots: list[Path] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    outcome: Outcome | None = None


def _relative(text: Any, what: str) -> PurePosixPath:
    """A recorded relative path (``a/b.json``) that stays where it is recorded: no ``..``, not absolute."""
    if not isinstance(text, str) or not text or "\\" in text or "\0" in text:
        raise Unverifiable(f"{what} is {text!r}, not a relative path")
    rel = PurePosixPath(text)
    if rel.is_absolute() or any(part in ("..", ".", "") for part in text.split("/")):
        raise Unverifiable(f"{what} is {text!r}: not a path below the place it is relative to")
    return rel


def _fetch(url: str, size: Any, folder: Path) -> Path | None:
    """A remote file fetched as given (fsspec), when it is reachable and of the recorded size; else None."""
    try:
        from fsspec.core import url_to_fs

        fs, where = url_to_fs(url)
        if not isinstance(size, int) or fs.info(where).get("size") != size:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{len(list(folder.iterdir()))}"
        fs.get_file(where, str(target))
        return target
    except Exception:  # noqa: BLE001 - unreachable as given: looked for by sha256 next
        return None


class Verifier:
    """Verifies outputs; ``root`` is the umbrella click group (``benchscore``), ``kinds`` every kind of
    output (each domain's :class:`Kind` list)."""

    def __init__(self, root: Any, kinds: Sequence[Kind], search: Sequence[Path]) -> None:
        self.root = root
        self.kinds = list(kinds)
        self.finder = Finder([*search, PACKAGE])
        self.tmp = Path(tempfile.mkdtemp(prefix="benchscore-verify-"))
        self.runs: dict[bytes, _Run] = {}

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- one output ------------------------------------------------------------------------------

    def owned(self, path: Path) -> bool:
        """Whether a file lies where an output owns it (an Every Eval Ever record beside its leaderboard):
        in a folder it is verified, never skipped."""
        return any(k.owner is not None and path.parent.name == k.owner[0] and (path.parent.parent / k.owner[1]).is_file()
                   for k in self.kinds)

    def verify(self, path: Path, *, explicit: bool = True) -> Outcome:
        try:  # the common reader's door: a regular file within the size and nesting limits, strict JSON
            doc = loads_json(read_json_bytes(path), path)
        except BadInput as exc:
            if not explicit:
                return Outcome(path, SKIPPED, f"not a JSON output ({exc.detail})")
            raise
        prov = doc.get("provenance") if isinstance(doc, dict) else None
        if not isinstance(prov, dict):
            held = [k for k in self.kinds if k.written_with is not None and k.problem(doc) is None]
            if not held:
                if not explicit and not self.owned(path):
                    bare = self._without_provenance(doc)
                    if bare is not None:
                        return Outcome(path, UNVERIFIABLE, f"it is a {bare.name} without its provenance block: "
                                                           "nothing records what made it")
                    return Outcome(path, SKIPPED, "no provenance")
                if self.owned(path):
                    owners = [k for k in self.kinds if k.written_with is not None]
                    why = "; ".join(f"not a {k.name}: {k.problem(doc)}" for k in owners)
                    return Outcome(path, UNVERIFIABLE, f"it lies where its leaderboard writes "
                                                       f"its records, but {why}")
                raise BadInput("has no provenance block: not an output of benchscore", source=path)
            return self._verify_written_with(path, doc, held)
        prepared = self._prepare(path, doc)
        if prepared.outcome is not None:
            return prepared.outcome
        return self._compare(path, doc, prepared, self._locate(prepared.run.folder, path, prepared.outputs,
                                                                prepared.roots))

    def _without_provenance(self, doc: Any) -> Kind | None:
        """The kind of output a document without provenance would be with one (a file in a folder that is an
        output stripped of its provenance, not an input), when a kind's model requires that block."""
        if not isinstance(doc, dict) or "provenance" in doc:
            return None
        for k in self.kinds:
            if any("provenance" in m.model_fields and m.model_fields["provenance"].is_required() for m in k.models) \
                    and k.problem({**doc, "provenance": {}}) is None:
                return k
        return None

    def _prepare(self, path: Path, doc: dict[str, Any]) -> _Prepared:
        held, why = kinds_of(doc, [k for k in self.kinds if k.written_with is None])
        if not held:
            return _Prepared(outcome=Outcome(path, UNVERIFIABLE, "it validates as no kind of "
                                                                 "output benchscore writes"
                                                                 + _closest(doc, self.kinds, why)))
        if len(held) > 1:
            return _Prepared(outcome=Outcome(path, UNVERIFIABLE, "it validates as "
                                                                 f"{len(held)} kinds of output ("
                                                                 + ", ".join(k.name for k in held)
                                                                 + "): an output is of one kind"))
        kind = held[0]
        prov = doc["provenance"]
        command, arguments, created = prov.get("command"), prov.get("arguments"), prov.get("created_at")
        metric = prov.get("metric_id")
        if not isinstance(metric, str) or not kind.metric(metric):
            return _Prepared(outcome=Outcome(path, UNVERIFIABLE, f"provenance.metric_id is "
                                                                 f"{metric!r}, but this is a {kind.name} (metric id "
                                                                 f"{kind.metric_ids})"))
        if command not in kind.commands:
            said = "missing" if command is None else repr(command)
            return _Prepared(outcome=Outcome(path, UNVERIFIABLE, f"provenance.command is {said}, "
                                                                 f"but a {kind.name} is written by "
                                                                 f"{' or '.join(kind.commands)}"))
        if kind.live is not None:
            return _Prepared(outcome=Outcome(path, NOT_RECOMPUTABLE, kind.live))
        if not isinstance(arguments, dict) or not isinstance(created, str):
            field_name = "arguments" if not isinstance(arguments, dict) else "created_at"
            return _Prepared(outcome=Outcome(path, UNVERIFIABLE, f"provenance.{field_name} is "
                                                                 "missing or not what the command recorded"))
        try:
            epoch_of(created)
        except (ValueError, OverflowError):
            return _Prepared(outcome=Outcome(path, UNVERIFIABLE, f"provenance.created_at is "
                                                                 f"{created!r}, not a time as benchscore writes it "
                                                                 "(2026-01-01T00:00:00Z)"))
        words = command.split()
        cmd = self._command(words[1:])
        if cmd is None:
            return _Prepared(outcome=Outcome(path, FAILED, f"benchscore has no command {command!r}"))
        outputs = {k: v["output"] for k, v in arguments.items() if isinstance(v, dict) and "output" in v}
        roots = self._original_roots(path, outputs)
        # one run per invocation; a file output is written under this file's name, so two files of one recipe
        # (a copy under another name) are two runs
        key = orjson.dumps([command, arguments, created, None if "folder" in outputs.values() else path.name])
        run = self.runs.get(key)
        if run is None:
            slot = self.tmp / "out" / str(len(self.runs))
            base = slot / "out" if "folder" in outputs.values() else slot
            try:
                argv, copies = self._argv(cmd, arguments, roots, path, slot, base)
            except Unverifiable as exc:
                return _Prepared(outcome=Outcome(path, UNVERIFIABLE, f"{exc}"))
            except _Missing as exc:
                return _Prepared(outcome=exc.outcome)
            run = self.runs[key] = self._run(path, cmd, words[1:], argv, copies, created, slot)
        if run.error is not None:
            return _Prepared(outcome=Outcome(path, run.error.status, run.error.message))
        return _Prepared(kind, doc, run, roots, outputs)

    def _compare(self, path: Path, mine: dict[str, Any], prepared: _Prepared, recomputed: Path | None) -> Outcome:
        command = (prepared.doc or {}).get("provenance", {}).get("command", "its leaderboard")
        if recomputed is None:
            return Outcome(path, DIFFERS, f"a re-run of {command} did not write {path.name}",
                           differences=[("$", "<this file>", "<absent>")])
        theirs = orjson.loads(recomputed.read_bytes())
        versions = ""
        if isinstance(mine.get("provenance"), dict) and isinstance(theirs.get("provenance"), dict):
            written, now = mine["provenance"].get(VERSION), theirs["provenance"].get(VERSION)
            if written != now and isinstance(written, str):
                versions = f" (written by benchscore {written}, recomputed with {now}: every other value compared)"
                theirs = {**theirs, "provenance": {**theirs["provenance"], VERSION: written}}
        diff = differences(mine, theirs)
        if diff:
            return Outcome(path, DIFFERS, f"{len(diff)} value(s) differ from a re-run of {command}{versions}",
                           differences=diff, recomputed=theirs)
        return Outcome(path, REPRODUCED, f"reproduced: {_leaves(mine)} values{versions}", values=_leaves(mine),
                       recomputed=theirs)

    def _verify_written_with(self, path: Path, doc: dict[str, Any], held: list[Kind]) -> Outcome:
        """A file without provenance of its own: re-run the output that names the run that wrote it, and
        compare the file with that run's counterpart."""
        if len(held) > 1:
            return Outcome(path, UNVERIFIABLE, "it validates as " + ", ".join(k.name for k in held))
        kind = held[0]
        said = kind.written_with(doc)  # type: ignore[misc]
        if isinstance(said, str):
            return Outcome(path, UNVERIFIABLE, f"{said}")
        rel, sha256 = said
        holder = self.finder.find(PurePosixPath(rel).name, sha256, [path.parent / rel])
        if holder is None:
            return Outcome(path, MISSING, f"the output that wrote it ({rel}, sha256 {sha256}) not found; looked "
                                          "beside it, under the search folders and benchscore's data")
        holder_doc = loads_json(read_json_bytes(holder), holder)
        if not isinstance(holder_doc, dict) or not isinstance(holder_doc.get("provenance"), dict):
            return Outcome(path, UNVERIFIABLE, f"{holder} has no provenance block")
        prepared = self._prepare(holder, holder_doc)
        if prepared.outcome is not None:
            outcome = prepared.outcome
            return Outcome(path, outcome.status, f"{outcome.message} (of {holder.name}, whose run wrote it)")
        if prepared.kind is None or prepared.kind.live is not None:
            return Outcome(path, UNVERIFIABLE, f"{holder.name} is not an output benchscore "
                                               "recomputes")
        counterpart = None
        for root in prepared.roots:
            again = prepared.run.folder / "out" / holder.resolve().relative_to(root)  # type: ignore[union-attr]
            if again.is_file():
                candidate = again.parent / os.path.relpath(path.resolve(), holder.resolve().parent)
                counterpart = candidate if candidate.is_file() else None
                break
        prepared.doc = holder_doc
        return self._compare(path, doc, prepared, counterpart)

    def _command(self, words: list[str]) -> Any:
        import click

        cmd = self.root
        for w in words:
            if not isinstance(cmd, click.Group):
                return None
            cmd = cmd.get_command(click.Context(cmd), w)
            if cmd is None:
                return None
        return None if isinstance(cmd, click.Group) else cmd

    @staticmethod
    def _original_roots(path: Path, outputs: dict[str, str]) -> list[Path]:
        """Folders the output's recorded input paths are relative to: the output's folder when it
        was written as a file (``--output``); every ancestor, nearest first, when it was written into
        an output folder (``--output-dir``: the file lies somewhere below it)."""
        if "folder" not in outputs.values():
            return [path.parent.resolve()]
        return list(path.resolve().parents)

    def _argv(self, cmd: Any, arguments: dict[str, Any], roots: list[Path], path: Path, slot: Path,
              base: Path) -> tuple[list[str], dict[str, Path]]:
        """The re-run's command line from the recorded arguments, and the staged copy of each folder or URL
        given (given text -> staged path). Inputs are staged as recorded: a file at its recorded ``path``
        below ``base`` (where the re-run's output goes) under its recorded name."""
        import click

        argv: list[str] = []
        positional: list[str] = []
        copies: dict[str, Path] = {}
        staged = self.tmp / "inputs" / slot.name
        used: set[Path] = set()
        in_place: set[Path] = set()
        for param in cmd.params:
            key = param.opts[0] if isinstance(param, click.Option) and param.opts else str(param.name)
            if key not in arguments:
                continue
            value = arguments[key]
            values = value if isinstance(value, list) else [value]
            texts = []
            for i, v in enumerate(values):
                where = f"provenance.arguments[{orjson.dumps(key).decode()}]" + (f"[{i}]" if isinstance(value, list)
                                                                                  else "")
                if isinstance(v, dict) and "output" in v:
                    texts.append(str(slot / (path.name if v["output"] == "file" else "out")))
                elif isinstance(v, dict) and "sha256" in v:
                    texts.append(self._file_input(key, v, where, roots, path, staged / f"{key.strip('-')}{i}", base,
                                                  copies, used, in_place))
                elif isinstance(v, dict) and ("given" in v or "url" in v or "files" in v):
                    texts.append(self._folder_input(key, v, where, path, staged / f"{key.strip('-')}{i}", copies,
                                                    used))
                elif isinstance(v, dict) and "folder" in v:
                    raise Unverifiable(f"{where} is the folder {v['folder']!r}, but the files read from it are not "
                                       "recorded (an output of an earlier benchscore): run its command again to "
                                       "record them")
                elif isinstance(v, dict):  # a store, a file that was not there: the default applies
                    continue
                else:
                    texts.append(str(v))
            if not texts and not isinstance(value, bool):
                continue
            if isinstance(param, click.Option):
                if param.is_flag:
                    if value:
                        argv.append(key)
                    continue
                for t in texts:
                    argv.extend([key, t])
            else:
                positional.extend(texts)
        if base == slot:  # beside the inputs found where the output records them, what is beside them there
            for folder in in_place:
                for entry in sorted(folder.iterdir()):
                    if entry.name != path.name and not (slot / entry.name).exists() and not entry.name.startswith("."):
                        os.symlink(entry.resolve(), slot / entry.name)
        return [*argv, *positional], copies

    def _stage(self, found: Path, target: Path, used: set[Path]) -> Path:
        """``found`` at ``target`` (a link; a copy when the same file is staged twice, which the readers
        would take for one input given twice)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        real = found.resolve()
        if target.exists() or target.is_symlink():
            raise Unverifiable(f"two inputs are recorded at {target.name}")
        if real in used:
            shutil.copyfile(real, target)
        else:
            os.symlink(real, target)
            used.add(real)
        return target

    def _file_input(self, key: str, v: dict[str, Any], where: str, roots: list[Path], path: Path, staged: Path,
                    base: Path, copies: dict[str, Path], used: set[Path], in_place: set[Path]) -> str:
        name, sha256 = v.get("name"), v.get("sha256")
        if not isinstance(sha256, str):
            raise Unverifiable(f"{where}.sha256 is {sha256!r}, not a sha256")
        rel_name = _relative(name, f"{where}.name")
        if len(rel_name.parts) != 1:
            raise Unverifiable(f"{where}.name is {name!r}, not a file name")
        url = v.get("url")
        near: list[Path] = []
        if "path" in v:
            rel = _relative(v["path"], f"{where}.path")
            near.extend(r / rel for r in roots)
        near.append(path.parent / str(name))
        if url is not None:
            if not isinstance(url, str):
                raise Unverifiable(f"{where}.url is {url!r}, not a URL")
            fetched = _fetch(url, v.get("size"), self.tmp / "fetched")
            if fetched is not None:
                near.insert(0, fetched)
        found = self.finder.find(str(name), sha256, near)
        if found is None:
            raise _Missing(self._missing(path, key, v, roots))
        if url is not None:
            copies[url] = self._stage(found, staged / str(name), used)
            return url
        if "path" in v:  # where the output records it, relative to the output: where the re-run writes its own
            in_place.update(r for r in roots if found == r / v["path"])  # files found through it are beside it
            return str(self._stage(found, base / v["path"], used))
        if found.name != name:
            return str(self._stage(found, staged / str(name), used))
        return str(found)

    def _folder_input(self, key: str, v: dict[str, Any], where: str, path: Path, staged: Path,
                      copies: dict[str, Path], used: set[Path]) -> str:
        given = v.get("url", v.get("given"))
        if not isinstance(given, str) or not given:
            raise Unverifiable(f"{where} records no text as given")
        files = v.get("files")
        if not isinstance(files, list) or not files:
            raise Unverifiable(f"{where} is {given!r}, but the files read from it are not recorded (an output "
                               "of an earlier benchscore): run its command again to record them")
        folder = staged / (PurePosixPath(given.rstrip("/")).name or "given")
        for j, f in enumerate(files):
            if not isinstance(f, dict) or not isinstance(f.get("sha256"), str):
                raise Unverifiable(f"{where}.files[{j}] is not a file as benchscore records one")
            rel = _relative(f.get("name"), f"{where}.files[{j}].name")
            near: list[Path] = []
            if "url" in v:
                fetched = _fetch(given.rstrip("/") + "/" + str(rel), f.get("size"), self.tmp / "fetched")
                near.extend([fetched] if fetched else [])
            else:  # as given: from the working folder, or from the output's own folder
                near.extend([Path(given) / rel, path.parent / given / rel])
            found = self.finder.find(rel.name, f["sha256"], near)
            if found is None:
                raise _Missing(Outcome(path, MISSING, f"{key} ({rel} in {given}, sha256 {f['sha256']}) not found; "
                                                      "looked as given, under the search folders and benchscore's "
                                                      "data"))
            self._stage(found, folder / rel, used)
        copies[given] = folder
        return given

    def _missing(self, path: Path, key: str, record: dict[str, Any], roots: list[Path]) -> Outcome:
        where = ""
        for r in roots[:1]:
            spot = r / str(record.get("path", record["name"]))
            if spot.is_file():
                where = (f"; {spot} has sha256 {sha256_file(spot)}: it was changed after the output was written")
        if not where:
            where = "; looked beside the output, at its recorded path, under the search folders and benchscore's data"
        return Outcome(path, MISSING, f"{key} ({record['name']}, sha256 {record['sha256']}) not found{where}")

    def _run(self, path: Path, cmd: Any, words: list[str], argv: list[str], copies: dict[str, Path], created: str,
             folder: Path) -> _Run:
        from .provenance import staged

        folder.mkdir(parents=True, exist_ok=True)
        sink = io.StringIO()
        token = _SEARCH.set(tuple(f for f in self.finder.folders if f != PACKAGE))
        try:
            with _pinned(created), _without_environment(cmd), staged(copies), contextlib.redirect_stdout(sink), \
                    contextlib.redirect_stderr(sink):
                self.root.main(args=[*words, *argv], prog_name="benchscore", standalone_mode=False)
        except BenchscoreError as exc:
            return _Run(folder, Outcome(path, FAILED, f"the re-run refused its inputs: {exc}"))
        except SystemExit as exc:  # a negative verdict (exit 1) still wrote its output
            if exc.code not in (0, 1, None):
                return _Run(folder, Outcome(path, FAILED, f"the re-run exited with {exc.code}"))
        except Exception as exc:  # noqa: BLE001 - what the recorded arguments make the command do, said in one line
            import click

            if isinstance(exc, click.ClickException):
                return _Run(folder, Outcome(path, FAILED, f"the re-run was refused: {exc.format_message()}"))
            return _Run(folder, Outcome(path, FAILED, f"the re-run failed: {type(exc).__name__}: "
                                                      f"{' '.join(str(exc).split())[:300]}"))
        finally:
            _SEARCH.reset(token)
        return _Run(folder)

    @staticmethod
    def _locate(folder: Path, path: Path, outputs: dict[str, str], roots: list[Path]) -> Path | None:
        """The recomputed counterpart of ``path``: the re-run's ``--output`` (written under this
        file's name), or the file at the same path below the re-run's ``--output-dir``."""
        if "folder" not in outputs.values():
            again = folder / path.name
            return again if again.is_file() else None
        for root in roots:
            again = folder / "out" / path.resolve().relative_to(root)
            if again.is_file():
                return again
        return None


class _Missing(Exception):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


@contextlib.contextmanager
def _without_environment(cmd: Any) -> Iterator[None]:
    """The re-run sees no environment variable an option of its command reads (``TCSEXAM_DATA``): the
    recorded arguments say everything it ran with."""
    names = [e for p in cmd.params for e in ([p.envvar] if isinstance(p.envvar, str) else (p.envvar or []))]
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def outputs_under(folder: Path) -> list[Path]:
    """Every ``*.json`` file below ``folder`` (hidden folders left out), in sorted order."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in sorted(files) if f.endswith(".json") and not f.startswith("."))
    return found
