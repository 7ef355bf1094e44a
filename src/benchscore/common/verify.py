"""``benchscore verify OUTPUT.json... [--search DIR ...]`` and ``benchscore verify DIR/``.

Every output records how it was made (:mod:`benchscore.common.provenance`: ``command``,
``arguments`` with each input's name and sha256, ``created_at``). Verifying an output:

1. tells its kind from its format alone (the top-level fields it holds, never the command or
   metric id it records: each domain lists its kinds, :class:`Kind`). A kind written from live
   model calls or measured runs cannot be recomputed, and says why (exit 0). An output of a
   recomputable kind whose recorded command is missing or another kind's, or whose metric id is
   not its kind's, cannot be verified (exit 1, naming the field): a recorded field can never turn
   verification off;
2. finds every input by its sha256: at its recorded path relative to the output, beside the output,
   under the ``--search`` folders (and the folder being verified), then in benchscore's own bundled
   data; an input found under another name is given to the command under its recorded name;
3. re-runs the recorded command in this process, with the recorded options, into a temporary
   folder, with ``SOURCE_DATE_EPOCH`` set to the recorded ``created_at``;
4. compares the recomputed JSON with the file, value by value (where an input was found is not
   compared: the ``path`` of an input in ``arguments``).

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
from dataclasses import dataclass, field
from pathlib import Path
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
    """A kind of output, told apart by its format: ``fields`` are top-level fields an output of this
    kind always holds (the kind with the most of them wins when several match). ``metric`` says
    whether a metric id belongs to the kind (its description: ``metric_ids``); ``commands`` are the
    commands that write it; ``live`` says why it cannot be recomputed (None: it can)."""

    name: str
    fields: frozenset[str]
    metric: Callable[[str], bool]
    metric_ids: str
    commands: tuple[str, ...] = ()
    live: str | None = None


def kind_of(doc: dict[str, Any], kinds: Sequence[Kind]) -> Kind | None:
    """The kind whose fields ``doc`` holds (the most specific), or None."""
    held = [k for k in kinds if k.fields <= doc.keys()]
    return max(held, key=lambda k: len(k.fields)) if held else None


@dataclass
class Outcome:
    path: Path
    status: str
    message: str = ""
    values: int = 0
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)


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


def _without_locations(doc: Any) -> Any:
    """The document with the recorded ``path`` of every input in ``provenance.arguments`` removed:
    where an input was found is no part of what was computed."""
    if not isinstance(doc, dict) or not isinstance(doc.get("provenance"), dict):
        return doc
    prov = dict(doc["provenance"])
    args = prov.get("arguments")
    if isinstance(args, dict):
        def strip(v: Any) -> Any:
            if isinstance(v, list):
                return [strip(x) for x in v]
            if isinstance(v, dict) and "sha256" in v:
                return {k: x for k, x in v.items() if k != "path"}
            return v
        prov["arguments"] = {k: strip(v) for k, v in args.items()}
    return {**doc, "provenance": prov}


@dataclass
class _Run:
    folder: Path
    error: Outcome | None = None


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

    def verify(self, path: Path, *, explicit: bool = True) -> Outcome:
        try:  # the common reader's door: a regular file within the size and nesting limits, strict JSON
            doc = loads_json(read_json_bytes(path), path)
        except BadInput as exc:
            if not explicit:
                return Outcome(path, SKIPPED, f"not a JSON output ({exc.detail})")
            raise
        prov = doc.get("provenance") if isinstance(doc, dict) else None
        if not isinstance(prov, dict):
            if not explicit:
                return Outcome(path, SKIPPED, "no provenance")
            raise BadInput("has no provenance block: not an output of benchscore", source=path)
        kind = kind_of(doc, self.kinds)
        if kind is None:
            return Outcome(path, UNVERIFIABLE, "cannot be verified: its fields match no kind of output benchscore "
                                               "writes (" + ", ".join(sorted(doc)[:6]) + ")")
        if kind.live is not None:
            return Outcome(path, NOT_RECOMPUTABLE, kind.live)
        command, arguments, created = prov.get("command"), prov.get("arguments"), prov.get("created_at")
        metric = prov.get("metric_id")
        if not isinstance(metric, str) or not kind.metric(metric):
            return Outcome(path, UNVERIFIABLE, f"cannot be verified: provenance.metric_id is {metric!r}, but this is "
                                               f"a {kind.name} (metric id {kind.metric_ids})")
        if command not in kind.commands:
            said = "missing" if command is None else repr(command)
            return Outcome(path, UNVERIFIABLE, f"cannot be verified: provenance.command is {said}, but a {kind.name} "
                                               f"is written by {' or '.join(kind.commands)}")
        if not isinstance(arguments, dict) or not isinstance(created, str):
            field_name = "arguments" if not isinstance(arguments, dict) else "created_at"
            return Outcome(path, UNVERIFIABLE, f"cannot be verified: provenance.{field_name} is missing or not "
                                               "what the command recorded")
        words = command.split()
        cmd = self._command(words[1:])
        if cmd is None:
            return Outcome(path, FAILED, f"benchscore has no command {command!r}")
        outputs = {k: v["output"] for k, v in arguments.items() if isinstance(v, dict) and "output" in v}
        roots = self._original_roots(path, outputs)
        key = orjson.dumps([command, arguments, created])
        run = self.runs.get(key)
        if run is None:
            slot = self.tmp / "out" / str(len(self.runs))
            argv, missing = self._argv(cmd, arguments, roots, path, slot)
            if missing is not None:
                return missing
            run = self.runs[key] = self._run(path, words[1:], argv, created, slot)
        if run.error is not None:
            return Outcome(path, run.error.status, run.error.message)
        recomputed = self._locate(run.folder, path, outputs, roots)
        if recomputed is None:
            return Outcome(path, DIFFERS, f"a re-run of {command} did not write {path.name}",
                           differences=[("$", "<this file>", "<absent>")])
        mine = _without_locations(doc)
        theirs = _without_locations(orjson.loads(recomputed.read_bytes()))
        versions = ""
        written, now = mine["provenance"].get(VERSION), theirs["provenance"].get(VERSION)
        if written != now:
            versions = f" (written by benchscore {written}, recomputed with {now}: every other value compared)"
            theirs = {**theirs, "provenance": {**theirs["provenance"], VERSION: written}}
        diff = differences(mine, theirs)
        if diff:
            return Outcome(path, DIFFERS, f"{len(diff)} value(s) differ from a re-run of {command}{versions}",
                           differences=diff)
        return Outcome(path, REPRODUCED, f"reproduced: {_leaves(mine)} values{versions}", values=_leaves(mine))

    def _command(self, words: list[str]) -> Any:
        import click

        cmd = self.root
        for w in words:
            if not isinstance(cmd, click.Group):
                return None
            cmd = cmd.get_command(click.Context(cmd), w)
            if cmd is None:
                return None
        return cmd

    @staticmethod
    def _original_roots(path: Path, outputs: dict[str, str]) -> list[Path]:
        """Folders the output's recorded input paths are relative to: the output's folder when it
        was written as a file (``--output``); every ancestor, nearest first, when it was written into
        an output folder (``--output-dir``: the file lies somewhere below it)."""
        if "folder" not in outputs.values():
            return [path.parent.resolve()]
        return list(path.resolve().parents)

    def _argv(self, cmd: Any, arguments: dict[str, Any], roots: list[Path], path: Path,
              slot: Path) -> tuple[list[str], Outcome | None]:
        import click

        argv: list[str] = []
        positional: list[str] = []
        staged = self.tmp / "inputs" / slot.name
        for param in cmd.params:
            key = param.opts[0] if isinstance(param, click.Option) and param.opts else str(param.name)
            if key not in arguments:
                continue
            value = arguments[key]
            values = value if isinstance(value, list) else [value]
            texts = []
            for i, v in enumerate(values):
                if isinstance(v, dict) and "output" in v:
                    texts.append(str(slot / (path.name if v["output"] == "file" else "out")))
                elif isinstance(v, dict) and "sha256" in v:
                    found = self.finder.find(v["name"], v["sha256"], [*(r / v["path"] for r in roots if "path" in v),
                                                                      path.parent / v["name"]])
                    if found is None:
                        return [], self._missing(path, key, v, roots)
                    if found.name != v["name"]:
                        target = staged / f"{key.strip('-')}{i}" / v["name"]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        os.symlink(found.resolve(), target)
                        found = target
                    texts.append(str(found))
                elif isinstance(v, dict):  # a folder, a store, a file that was not there: the default applies
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
        return [*argv, *positional], None

    def _missing(self, path: Path, key: str, record: dict[str, Any], roots: list[Path]) -> Outcome:
        where = ""
        for r in roots[:1]:
            spot = r / record.get("path", record["name"])
            if spot.is_file():
                where = (f"; {spot} has sha256 {sha256_file(spot)}: it was changed after the output was written")
        if not where:
            where = "; looked beside the output, at its recorded path, under the search folders and benchscore's data"
        return Outcome(path, MISSING, f"{key} ({record['name']}, sha256 {record['sha256']}) not found{where}")

    def _run(self, path: Path, words: list[str], argv: list[str], created: str, folder: Path) -> _Run:
        folder.mkdir(parents=True, exist_ok=True)
        sink = io.StringIO()
        try:
            with _pinned(created), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                self.root.main(args=[*words, *argv], prog_name="benchscore", standalone_mode=False)
        except BenchscoreError as exc:
            return _Run(folder, Outcome(path, FAILED, f"the re-run refused its inputs: {exc}"))
        except SystemExit as exc:  # a negative verdict (exit 1) still wrote its output
            if exc.code not in (0, 1, None):
                return _Run(folder, Outcome(path, FAILED, f"the re-run exited with {exc.code}"))
        except Exception as exc:
            import click

            if isinstance(exc, click.ClickException):
                return _Run(folder, Outcome(path, FAILED, f"the re-run was refused: {exc.format_message()}"))
            raise
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


def outputs_under(folder: Path) -> list[Path]:
    """Every ``*.json`` file below ``folder`` (hidden folders left out), in sorted order."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in sorted(files) if f.endswith(".json") and not f.startswith("."))
    return found
