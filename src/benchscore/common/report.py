"""Terminal rendering with rich: tables and progress bars.

rich is imported on first use (``console``, ``err_console`` and the functions), so importing this
module costs nothing at start-up.

- :func:`print_table` prints a table whole: on a terminal as a rich table when it fits the width;
  otherwise, and whenever stdout is a pipe or a file, as plain aligned lines at their natural width
  (never truncated, never hard-wrapped, no box characters), so the output can be copied, grepped
  and diffed.
- :func:`progress` draws a bar on stderr only when stderr is a terminal; otherwise it prints
  nothing at all (not even a blank line).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table


@cache
def _console(stderr: bool) -> Console:
    from rich.console import Console

    return Console(stderr=stderr)


def __getattr__(name: str) -> Any:
    if name == "console":
        return _console(False)
    if name == "err_console":
        return _console(True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fmt(value: Any, digits: int = 4) -> str:
    """Human formatting for table cells: None -> '-', floats to ``digits`` places."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, digits: int = 4) -> Table:
    """A rich table (first column left-aligned, the others right-aligned); cells go through :func:`fmt`."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*(fmt(v, digits) for v in row))
    return t


def plain_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, digits: int = 4) -> str:
    """The table as plain text: a title line, then aligned columns separated by two spaces."""
    cells = [[str(c) for c in columns]] + [[fmt(v, digits) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = [title] if title else []
    for r in cells:
        parts = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def print_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                digits: int = 4, err: bool = False) -> None:
    """Print a table whole: rich on a terminal, :func:`plain_table` lines when piped (see module doc)."""
    rows = list(rows)
    stream = sys.stderr if err else sys.stdout
    if stream.isatty():
        console, rich_table = _console(err), table(title or "", columns, rows, digits=digits)
        natural = console.measure(rich_table, options=console.options.update_width(1_000_000)).maximum
        if natural <= console.width:
            console.print(rich_table)
            return
        # too wide: rich would cut cells with an ellipsis; plain lines are wrapped by the terminal instead
    stream.write(plain_table(title, columns, rows, digits=digits) + "\n")
    stream.flush()


def interval_cell(record: dict[str, Any] | None, number: Any = None) -> str:
    """A table cell for an interval record (:func:`benchscore.common.stats.beside`):
    ``[low, high] method``, or ``- (reason)`` when there is none; ``number`` formats a bound
    (default: 4 decimals, like :func:`fmt`)."""
    if not record:
        return "-"
    if record.get("ci95") is None:
        return f"- ({record.get('ci_reason', 'no interval')})"
    show = number or (lambda v: fmt(float(v)))
    low, high = record["ci95"]
    return f"[{show(low)}, {show(high)}] {record['ci_method']}"


def print_line(text: str, *, err: bool = False) -> None:
    """One plain line (never wrapped, no markup), on stdout or stderr."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def note(text: str) -> None:
    """A status line on stderr (``running S09``), shown only when stderr is a terminal."""
    err = _console(True)
    if err.is_terminal:
        err.print(f"[dim]{text}[/dim]")


def progress(*, transient: bool = True, disable: bool = False) -> Progress:
    """A progress bar on stderr (never mixed with stdout), shown only when stderr is a terminal."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    err = _console(True)
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=transient,
        disable=disable or not err.is_terminal,
    )
