"""Terminal rendering with rich: tables and progress bars, written to stderr or stdout."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

console = Console()
err_console = Console(stderr=True)


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
    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*(fmt(v, digits) for v in row))
    return t


def progress(*, transient: bool = True, disable: bool = False) -> Progress:
    """A progress bar on stderr (so it never mixes with JSON on stdout)."""
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=transient,
        disable=disable,
    )
