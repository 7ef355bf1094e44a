"""Terminal rendering with rich: tables and progress bars.

rich is imported on first use (``console``, ``err_console`` and the functions), so importing this
module costs nothing at start-up.

- :func:`print_table` prints a table whole: on a terminal as a rich table when it fits the width;
  otherwise, and whenever stdout is a pipe or a file, as plain aligned lines at their natural width
  (never truncated, never hard-wrapped, no box characters), so the output can be copied, grepped
  and diffed.
- :func:`fmt` (and :func:`pct`, :func:`metric_cell`, :func:`interval_cell`) is how every command prints a
  number for reading: floats rounded to 4 significant digits, percentages with ``%``; the JSON
  outputs keep every digit.
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


#: significant digits of every number printed for reading (the JSON keeps every digit)
DIGITS = 4

#: metrics that their seed defines as percentages (``x 100``): mira's Reliability, Pass@1, Stable@3 and
#: Complete@3. Their terminal cells say ``%``; fractions (Task Success, hit rates) and points (the tcsexam
#: index, the swarm's 0-100 scores) are printed as plain numbers.
PERCENT_METRICS = frozenset({"reliability", "pass_at_1", "stable_at_3", "complete_at_3"})


def number(value: float, digits: int = DIGITS) -> str:
    """A float rounded to ``digits`` significant digits for reading, without trailing zeros or an
    exponent (``33.33333333333333`` -> ``33.33``, ``0.5700000000000001`` -> ``0.57``, ``7692.6`` ->
    ``7693``, ``131072.0`` -> ``131100``); below 1e-4 or from 1e15 on, in scientific notation (``1e-09``)."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value == 0:
        return "0"
    if not 1e-4 <= abs(value) < 1e15:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{mantissa}e{exponent}"
    from math import floor, log10

    exponent = floor(log10(abs(value)))
    rounded = round(value, digits - 1 - exponent)
    if rounded and floor(log10(abs(rounded))) > exponent:  # 9.9996 -> 10.0: one digit fewer after the point
        exponent += 1
    text = f"{rounded:.{max(digits - 1 - exponent, 0)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt(value: Any, digits: int = DIGITS) -> str:
    """A table cell or a number in a line, for reading: None -> ``-``, booleans yes/no, integers as they
    are, floats rounded to ``digits`` significant digits (:func:`number`); anything else ``str``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value, digits)
    return str(value)


def pct(value: Any, digits: int = DIGITS) -> str:
    """A percentage (a value already on the 0-100 scale) for reading: ``33.33 %``; None -> ``-``."""
    return "-" if value is None else f"{fmt(value, digits)} %"


def metric_cell(name: str, value: Any, digits: int = DIGITS) -> str:
    """A metric's value for reading: with ``%`` when the metric is a percentage (:data:`PERCENT_METRICS`)."""
    return pct(value, digits) if name in PERCENT_METRICS and isinstance(value, int | float) \
        and not isinstance(value, bool) else fmt(value, digits)


def rounded(value: Any, digits: int = DIGITS) -> Any:
    """``value`` with every float inside it (dicts, lists, tuples) rounded to ``digits`` significant digits,
    for a terminal line that shows a nested value as JSON; the JSON outputs keep every digit."""
    if isinstance(value, float):
        return float(number(value, digits)) if value == value and abs(value) != float("inf") else value
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, digits) for v in value]
    return value


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, digits: int = DIGITS) -> Table:
    """A rich table (first column left-aligned, the others right-aligned); cells go through :func:`fmt`."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*(fmt(v, digits) for v in row))
    return t


def plain_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                digits: int = DIGITS) -> str:
    """The table as plain text: a title line, then aligned columns separated by two spaces."""
    cells = [[str(c) for c in columns]] + [[fmt(v, digits) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = [title] if title else []
    for r in cells:
        parts = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def print_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                digits: int = DIGITS, err: bool = False) -> None:
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


def interval_cell(record: dict[str, Any] | None, number: Any = None, *, percent: bool = False) -> str:
    """A table cell for an interval record (:func:`benchscore.stats.intervals.beside`):
    ``[low, high] method``, or ``- (reason)`` when there is none; each bound is rounded like :func:`fmt`
    (``number`` formats a bound instead), with ``%`` after the bracket when ``percent``."""
    if not record:
        return "-"
    if record.get("ci95") is None:
        return f"- ({record.get('ci_reason', 'no interval')})"
    show = number or (lambda v: fmt(float(v)))
    low, high = record["ci95"]
    return f"[{show(low)}, {show(high)}]{' %' if percent else ''} {record['ci_method']}"


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
