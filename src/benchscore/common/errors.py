"""The project's error types and exit codes.

Every problem with a user's input is a :class:`BadInput`: its message is one line that
names the file, the record (line or index) and the field, and says what was expected.
The CLI prints that line to stderr and exits with :data:`EXIT_BAD_INPUT`.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - pathlib is not needed at start-up
    from pathlib import Path


class ExitCode(IntEnum):
    OK = 0
    #: the command ran but its verdict is negative (an acceptance check failed, ...)
    FAILED = 1
    #: bad input or an unusable environment: one line on stderr, nothing written
    BAD_INPUT = 2


EXIT_BAD_INPUT = ExitCode.BAD_INPUT


#: the longest message a :class:`BenchscoreError` prints (a value quoted from a huge input is cut)
MAX_MESSAGE = 1000


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a message, shortened past ``limit`` characters (saying how long it was)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value)} characters)" if isinstance(value, str | bytes) else ""
    return text[:limit - 1] + "\u2026" + size


class BenchscoreError(Exception):
    """Base class: a problem the user can fix; printed as one line, exit 2."""

    exit_code: int = ExitCode.BAD_INPUT

    def __str__(self) -> str:  # always one line, never longer than MAX_MESSAGE
        text = " ".join(str(self.args[0]).split()) if self.args else self.__class__.__name__
        return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "\u2026"


class BadInput(BenchscoreError):
    """A malformed, duplicate, non-finite or out-of-range value in an input."""

    def __init__(
        self,
        message: str,
        *,
        source: str | Path | None = None,
        record: str | int | None = None,
        field: str | None = None,
    ) -> None:
        self.source = str(source) if source is not None else None
        self.record = record
        self.field = field
        self.detail = message
        parts = []
        if self.source is not None:
            parts.append(self.source)
        if record is not None:
            parts.append(record if isinstance(record, str) else f"record {record}")
        if field is not None:
            parts.append(f"field {field!r}")
        prefix = ": ".join(str(p) for p in parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ServiceUnavailable(BenchscoreError):
    """A store or service named by the user cannot be reached (after retries)."""
