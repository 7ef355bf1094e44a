"""A progress bar for work that may take long (reading results, a bootstrap): drawn only once the work has taken
a couple of seconds, and only for a person watching.

:class:`Progress` draws on stderr (never mixed with stdout) a bar with what is done of what is planned, a
count beside it (samples read) and its rate, when, and only when, stdout and stderr are both terminals (a
pipe, a file, a CI log or click's CliRunner: nothing at all), and not before ``delay`` seconds have passed
(a run shorter than that draws nothing). It draws from the first update after the delay: no thread runs
before (a process pool forked meanwhile forks no drawing thread).
"""

from __future__ import annotations

import sys
import time
from typing import Any

#: seconds of work before a bar is drawn
DELAY = 2.0


def watched() -> bool:
    """Whether a person watches: stdout and stderr are terminals."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if not stream.isatty():
                return False
        except (AttributeError, ValueError):  # no stream, a closed one, a captured one without isatty
            return False
    return True


class Progress:
    """``with Progress("reading results", total=12, unit="samples") as bar: bar.advance(1, samples=n)``."""

    def __init__(self, description: str, *, total: int | None = None, unit: str | None = None,
                 delay: float | None = None, enabled: bool | None = None) -> None:
        self.description, self.total, self.unit = description, total, unit
        self.delay = DELAY if delay is None else delay
        self.enabled = watched() if enabled is None else enabled
        self.done = 0
        self.count = 0
        self._start = 0.0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    @property
    def drawing(self) -> bool:
        """Whether the bar is on screen."""
        return self._bar is not None

    def _draw(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        columns: list[Any] = [TextColumn("[progress.description]{task.description}"), BarColumn(),
                              MofNCompleteColumn()]
        if self.unit:
            columns.append(TextColumn("{task.fields[count]:,} " + self.unit + " ({task.fields[rate]:,.0f}/s)"))
        columns.append(TimeElapsedColumn())
        self._bar = Bar(*columns, console=Console(stderr=True), transient=True)
        self._task = self._bar.add_task(self.description, total=self.total, completed=self.done, count=self.count,
                                        rate=0.0)
        self._bar.start()

    def update(self, done: int | None = None, *, total: int | None = None, count: int | None = None) -> None:
        """Set what is done (and the total, and the count beside it)."""
        if done is not None:
            self.done = done
        if total is not None:
            self.total = total
        if count is not None:
            self.count = count
        if not self.enabled:
            return
        took = time.monotonic() - self._start
        if self._bar is None:
            if took < self.delay:
                return
            self._draw()
        self._bar.update(self._task, completed=self.done, total=self.total, count=self.count,
                         rate=self.count / took if took > 0 else 0.0)

    def advance(self, done: int = 1, *, count: int = 0) -> None:
        """``done`` more done (files read), ``count`` more beside it (their samples)."""
        self.update(self.done + done, count=self.count + count)


__all__ = ["DELAY", "Progress", "watched"]
