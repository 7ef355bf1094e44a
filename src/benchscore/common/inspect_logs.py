"""Reading inspect_ai evaluation logs at the door: the header checks and the samples (docs/inspect.md).

inspect_ai is an optional dependency (the ``inspect`` extra) and is imported here only when a log is
read, never at start-up. The reading is inspect_ai's own: the header with
``read_eval_log(header_only=True)``, the list of samples from the log's summaries, then the samples
in batches with ``read_eval_log_samples_by_id`` (one central directory for the whole ``.eval`` zip);
a ``.json`` log is one document and is read once, whole. Every failure of inspect_ai's reader
becomes one :class:`BadInput` line naming the file. Each domain turns the samples into its own
records (``mira.inspect_logs``, ``rxn.from_inspect``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import BadInput

if TYPE_CHECKING:  # pragma: no cover
    from inspect_ai.log import EvalLog, EvalSample

#: the log file format read here (``EvalLog.version``)
LOG_FORMAT_VERSION = 2
#: the oldest inspect_ai whose logs carry what benchscore reads: ``working_time`` (0.3.70) and the
#: scorer spans that show a model call made while scoring (0.3.94)
MIN_WRITER_VERSION = (0, 3, 94)
#: samples read per call of ``read_eval_log_samples_by_id`` (bounds the memory a large log needs)
BATCH = 1000

INSTALL_HINT = "pip install -e '.[inspect]'"


def require_inspect_ai() -> None:
    """Refuse, in one line, when the optional dependency is not installed."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise BadInput(f"reading inspect_ai logs needs inspect_ai: {INSTALL_HINT}") from None


def version_tuple(text: str | None) -> tuple[int, int, int] | None:
    """``"0.3.285"`` -> ``(0, 3, 285)``; a development suffix is ignored (``0.3.43.dev33+g6c9`` -> ``(0, 3, 43)``)."""
    if not text:
        return None
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _unreadable(path: Path, exc: BaseException) -> BadInput:
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:300] + "..."
    return BadInput(f"not a readable inspect_ai log ({type(exc).__name__}: {text})", source=path)


@dataclass
class LogHeader:
    """One log's identity, checked: ``log`` is inspect_ai's header (an ``EvalLog`` without samples)."""

    path: Path
    sha256: str
    log: EvalLog
    writer: str | None

    @property
    def eval_id(self) -> str:
        return self.log.eval.eval_id

    @property
    def epochs(self) -> int:
        return self.log.eval.config.epochs or 1

    def identity(self) -> dict[str, Any]:
        """What an output records of the log: file name and sha256, eval, run, task, model, writer."""
        e = self.log.eval
        return {"tool": "inspect_ai", "log": self.path.name, "log_sha256": self.sha256, "eval_id": e.eval_id,
                "run_id": e.run_id, "task": e.task, "model": e.model, "inspect_ai_version": self.writer}


def read_header(path: Path) -> LogHeader:
    """Read and check one log's header; refuses (one line each) a missing file, a file inspect_ai cannot
    read, another file format or inspect_ai version, a log still running, a log written without samples."""
    from .guard import note_input
    from .provenance import sha256_file
    from .readers import check_file

    require_inspect_ai()
    from inspect_ai.log import read_eval_log

    if path.is_dir():
        raise BadInput("is a folder, expected an inspect_ai log file (.eval or .json)", source=path)
    check_file(path)  # a regular file within the size limit: never a FIFO, a device or a link loop
    note_input(path)
    try:
        header = read_eval_log(str(path), header_only=True)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of inspect_ai's reader is an unreadable log
        raise _unreadable(path, exc) from None
    lowest = ".".join(map(str, MIN_WRITER_VERSION))
    if header.version != LOG_FORMAT_VERSION:
        raise BadInput(f"log file format version {header.version}; benchscore reads format version "
                       f"{LOG_FORMAT_VERSION} (inspect_ai {lowest} to 0.3.x)", source=path, field="version")
    writer = (header.eval.packages or {}).get("inspect_ai")
    wv = version_tuple(writer)
    if wv is None or wv < MIN_WRITER_VERSION or wv[:2] != MIN_WRITER_VERSION[:2]:
        raise BadInput(f"written by inspect_ai {writer or '(unknown version)'}; benchscore reads logs of inspect_ai "
                       f"{lowest} to 0.3.x (they record working_time and scorer spans)",
                       source=path, field="eval.packages.inspect_ai")
    if header.status == "started":
        raise BadInput("the eval is still running or crashed before finishing (status 'started'); use a "
                       "finished log (success, cancelled or error)", source=path, field="status")
    if header.eval.config.log_samples is False:
        raise BadInput("the log holds no samples (written with --no-log-samples); run the eval with samples "
                       "logged", source=path, field="eval.config.log_samples")
    return LogHeader(path=path, sha256=sha256_file(path), log=header, writer=writer)


def iter_samples(path: Path) -> Iterator[EvalSample]:
    """Every sample x epoch the log holds, read by inspect_ai (see the module docstring)."""
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries, read_eval_log_samples_by_id

    try:
        if path.suffix != ".eval":  # a .json log: one document, read once
            yield from read_eval_log(str(path)).samples or []
            return
        keys = [(s.id, s.epoch) for s in read_eval_log_sample_summaries(str(path))]
        for start in range(0, len(keys), BATCH):
            yield from read_eval_log_samples_by_id(str(path), keys[start:start + BATCH])
    except (KeyboardInterrupt, SystemExit, BadInput, GeneratorExit):
        raise
    except Exception as exc:  # noqa: BLE001 - a failure of inspect_ai's reader: the log is unreadable
        raise _unreadable(path, exc) from None


__all__ = ["BATCH", "INSTALL_HINT", "LOG_FORMAT_VERSION", "MIN_WRITER_VERSION", "LogHeader", "iter_samples",
           "read_header", "require_inspect_ai", "version_tuple"]
