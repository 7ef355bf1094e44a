"""matplotlib for the HTML report: figures without pyplot state, rendered to inline SVG.

- Text is drawn as paths (``svg.fonttype = "path"``, matplotlib's bundled DejaVu Sans), so a
  figure needs no font and no network when it is viewed.
- Labels are plain text: ``$`` never starts mathtext (``text.parse_math`` off), so an id such as
  ``cost$2`` is drawn as written.
- The SVG is reproducible (no date, a fixed hash salt).
- A label longer than :data:`MAX_LABEL` characters is drawn shortened (ending in an ellipsis).
- Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
  deficiencies); PASS/FAIL-like states also differ in hatch or marker, never in colour alone.
- Every text the figure draws is recorded when it is drawn: :func:`to_svg` gives each one its own
  group id (``bs-tN``) and lists them on the ``<svg>`` as ``data-texts`` (JSON: the string, its role
  -- ``xtick``, ``ytick``, ``legend``, ``title`` or ``text`` --, its axes, and what :func:`data_label`
  says it shows). The report's browser test reads them: each data label against the table the
  figure sits above, no two texts overlapping, legends and row labels unique, ticks inside the
  metric's range (:func:`value_axis`, recorded as ``data-ranges``).

matplotlib is imported on first use of this module, which only the report code imports.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import re
from typing import Any

import matplotlib

matplotlib.use("svg")

from matplotlib import colormaps  # noqa: E402
from matplotlib.collections import Collection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import Formatter, MaxNLocator  # noqa: E402

__all__ = ["ACCENT", "BAD", "GOOD", "METRIC_COLOURS", "NEUTRAL", "PALETTE", "WARN", "Figure", "Line2D", "MaxNLocator",
           "MARKERS", "Rectangle", "collisions", "colormaps", "count_axis", "data_label", "error_bar", "metric_colour",
           "label_beside", "new_figure", "styled", "to_svg", "value_axis"]

#: Okabe-Ito (Wong 2011, Nature Methods 8:441): black excluded
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: markers to tell series apart where colours repeat
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
GOOD = "#009E73"  # bluish green
BAD = "#D55E00"  # vermillion
WARN = "#E69F00"  # orange
NEUTRAL = "#999999"
ACCENT = "#0072B2"  # blue

#: one colour per metric name, the same in every figure of every page and report (a legend's swatch
#: for a metric is this colour, never hatched: hatching marks a status, not a metric)
METRIC_COLOURS: dict[str, str] = {
    # rxn rates and counts
    "avg_relative_score": "#0072B2", "exact_match_accuracy": "#E69F00", "avg_yield_ratio": "#009E73",
    "hit_rate": "#CC79A7", "best_hit_rate_among_scored": "#56B4E9", "num_samples": "#bbbbbb", "num_scored": "#56B4E9", "num_unhit": "#999999",
    "num_invalid": "#D55E00", "num_missing": "#F0E442",
    # tcsexam tracks
    "theorem": "#0072B2", "solver": "#E69F00", "construction": "#009E73", "conjecture": "#CC79A7",
    # mira
    "task_success": "#0072B2", "reliability": "#009E73",
}


def metric_colour(name: str) -> str:
    """The colour of metric ``name`` (:data:`METRIC_COLOURS`; any other name gets a colour of the
    palette picked by a hash of the name, so it too is the same on every page)."""
    if name in METRIC_COLOURS:
        return METRIC_COLOURS[name]
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
    return PALETTE[digest % 7]


def count_axis(ax: Any, axis: str) -> None:
    """Mark ``axis`` ('x' or 'y') of ``ax`` as counting things: integer ticks only."""
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(MaxNLocator(integer=True))

STYLE: dict[str, Any] = {
    "svg.fonttype": "path",
    "svg.hashsalt": "benchscore-report",
    "text.parse_math": False,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "figure.dpi": 100,
}

_COMMENT = re.compile(r"<!--.*?-->", re.S)
#: a label longer than this is drawn shortened (the tables beside every figure hold the whole value):
#: matplotlib lays out text in time that grows with its length, and an id of 200,000 characters took minutes
MAX_LABEL = 200


def _short(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "\u2026"


class _Shortened(Formatter):
    """Another formatter's tick labels, each at most :data:`MAX_LABEL` characters."""

    def __init__(self, inner: Formatter) -> None:
        self.inner = inner

    def set_axis(self, axis: Any) -> None:
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def set_locs(self, locs: Any) -> None:
        self.inner.set_locs(locs)

    def __call__(self, x: Any, pos: Any = None) -> str:
        return _short(str(self.inner(x, pos)))

    def format_ticks(self, values: Any) -> list[str]:
        return [_short(str(s)) for s in self.inner.format_ticks(values)]


def _shorten_labels(fig: Figure) -> None:
    for text in fig.findobj(Text):
        label = text.get_text()
        if len(label) > MAX_LABEL:
            text.set_text(_short(label))
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if not isinstance(formatter, _Shortened):
                axis.set_major_formatter(_Shortened(formatter))


def new_figure(width: float = 7.5, height: float = 3.2) -> Figure:
    """A pyplot-free figure (inches) with the report's style."""
    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(width, height), layout="constrained")


def data_label(text: Text, **meaning: Any) -> Text:
    """Say what a drawn text shows, for the report's checks: ``row`` and ``col`` name the cell of the
    table the figure sits above that holds the same value (``value``, default: the text itself);
    ``row`` and ``series`` with ``count`` name a count of that table's rows (see
    :func:`benchscore.common.html.figure`'s ``counts``)."""
    text._benchscore_meaning = {k: v for k, v in meaning.items() if v is not None}  # type: ignore[attr-defined]
    return text


def value_axis(ax: Any, axis: str, low: float, high: float, *, room: float = 0.0, step: float | None = None) -> None:
    """Draw ``axis`` ('x' or 'y') of ``ax`` for a metric bounded by ``[low, high]``: ticks and the
    spine stop at ``high`` (``room`` more is left for value labels beyond it, with no tick there);
    the range is recorded for the report's checks."""
    lim = ax.set_xlim if axis == "x" else ax.set_ylim
    lim(low, high + room)
    ticks = ([low + k * step for k in range(int(round((high - low) / step)) + 1)] if step
             else MaxNLocator(6).tick_values(low, high))
    (ax.set_xticks if axis == "x" else ax.set_yticks)([t for t in ticks if low - 1e-9 <= t <= high + 1e-9])
    ax.spines["bottom" if axis == "x" else "left"].set_bounds(low, high)
    ranges = getattr(ax, "_benchscore_ranges", {})
    ranges[axis] = [low, high]
    ax._benchscore_ranges = ranges


def _roles(fig: Figure) -> dict[int, tuple[str, int]]:
    """id(text) -> (role, axes index) for the texts whose role the figure's structure tells."""
    roles: dict[int, tuple[str, int]] = {}
    for i, ax in enumerate(fig.axes):
        for role, axis in (("xtick", ax.xaxis), ("ytick", ax.yaxis)):
            shown = ax.axison and axis.get_visible()
            drawn = {id(x) for t in axis._update_ticks() for x in (t.label1, t.label2)} if shown else set()  # in view
            for t in [*axis.get_ticklabels(minor=False, which="both"), *axis.get_ticklabels(minor=True, which="both")]:
                roles[id(t)] = (role if id(t) in drawn else "", i)
        for t in (ax.title, ax._left_title, ax._right_title):
            roles[id(t)] = ("title", i)
        roles[id(ax.xaxis.label)] = ("x-label", i)
        roles[id(ax.yaxis.label)] = ("y-label", i)
        legend = ax.get_legend()
        if legend is not None:
            for t in legend.get_texts():
                roles[id(t)] = ("legend", i)
        for t in ax.texts:
            roles.setdefault(id(t), ("text", i))
    for legend in fig.legends:
        for t in legend.get_texts():
            roles[id(t)] = ("legend", -1)
    return roles


def _colour(value: Any) -> str | None:
    """A colour as ``#rrggbb``, or None when it is not drawn (no fill, or fully transparent)."""
    from matplotlib.colors import to_hex, to_rgba

    if value is None or (isinstance(value, str) and value == "none"):
        return None
    rgba = to_rgba(value)
    return None if rgba[3] == 0 else to_hex(rgba)


def _swatches(fig: Figure) -> dict[int, dict[str, Any]]:
    """id(legend text) -> its swatch: ``fill`` (a patch's face colour, None when unfilled), ``colour``
    (a line's or marker's), ``hatch``."""
    found: dict[int, dict[str, Any]] = {}
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    for legend in legends:
        if legend is None:
            continue
        for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=False):
            if isinstance(handle, Line2D):
                colour = _colour(handle.get_markerfacecolor()) if handle.get_marker() not in ("", "None", None) \
                    else _colour(handle.get_color())
                found[id(text)] = {"fill": colour, "hatch": ""}
            elif isinstance(handle, Patch):
                found[id(text)] = {"fill": _colour(handle.get_facecolor()) if handle.get_fill() else None,
                                   "hatch": handle.get_hatch() or ""}
            elif isinstance(handle, Collection):
                faces = handle.get_facecolor()
                found[id(text)] = {"fill": _colour(tuple(faces[0])) if len(faces) else None,
                                   "hatch": handle.get_hatch() or ""}
    return found


def collisions(fig: Figure) -> list[str]:
    """Where a legend's box covers an axis label or a tick label of any axes of ``fig``, measured
    with matplotlib's renderer after layout (``get_window_extent``): one line each, empty when none."""
    fig.draw_without_rendering()
    renderer = fig._get_renderer()  # the renderer draw_without_rendering laid the figure out with
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    found = []
    for legend in legends:
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            others = [ax.xaxis.label, ax.yaxis.label, ax.title, *ax.get_xticklabels(), *ax.get_yticklabels()]
            for t in others:
                if not t.get_visible() or not t.get_text().strip():
                    continue
                other = t.get_window_extent(renderer)
                wide = min(box.x1, other.x1) - max(box.x0, other.x0)
                high = min(box.y1, other.y1) - max(box.y0, other.y0)
                if wide > 1 and high > 1:
                    names = ", ".join(x.get_text() for x in legend.get_texts())
                    found.append(f"the legend ({names}) covers {t.get_text()!r}")
    return found


def _record_texts(fig: Figure) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Give every visible text its own group id and list them (see the module doc); and the value ranges."""
    fig.draw_without_rendering()  # lays out ticks and legends as the SVG will have them
    roles = _roles(fig)
    swatches = _swatches(fig)
    texts: list[dict[str, Any]] = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or t.figure is None:
            continue
        role, axes = roles.get(id(t), ("text", -1))
        if not role:  # a tick label outside the axis' view is not drawn
            continue
        extra: dict[str, Any] = {}
        if role in ("x-label", "y-label"):
            role, extra = "axis-label", {"axis": role[0]}
        elif role == "legend" and id(t) in swatches:
            extra = {"swatch": swatches[id(t)]}
        t.set_gid(f"bs-t{len(texts)}")
        texts.append({"text": t.get_text(), "role": role, "axes": axes, **extra,
                      **getattr(t, "_benchscore_meaning", {})})
    ranges = [{"axes": i, "axis": a, "range": r} for i, ax in enumerate(fig.axes)
              for a, r in getattr(ax, "_benchscore_ranges", {}).items()]
    return texts, ranges


def _attr(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True).replace("&", "&amp;").replace('"', "&quot;") \
        .replace("<", "&lt;").replace(">", "&gt;")


def to_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element for inline HTML: no XML prolog, comments or metadata
    (:func:`benchscore.common.html.figure` makes its ids unique on the page); its texts are listed
    as ``data-texts`` (see the module doc)."""
    buf = io.StringIO()
    _shorten_labels(fig)
    with matplotlib.rc_context(STYLE):
        texts, ranges = _record_texts(fig)
        covered = collisions(fig)
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    text = text.replace("<svg ", f'<svg data-texts="{_attr(texts)}" data-ranges="{_attr(ranges)}" '
                                 f'data-collisions="{_attr(covered)}" ', 1)
    return _COMMENT.sub("", text).strip()


def error_bar(ax: Any, y: float, value: float, ci95: Any, *, vertical: bool = False) -> None:
    """A 95 % interval ``ci95 = [low, high]`` around a bar's ``value`` at position ``y`` (horizontal
    bars; ``vertical`` for vertical ones), drawn in black with caps."""
    low, high = float(ci95[0]), float(ci95[1])
    err = [[max(0.0, value - low)], [max(0.0, high - value)]]
    if vertical:
        ax.errorbar([y], [value], yerr=err, fmt="none", ecolor="black", elinewidth=0.9, capsize=2.5, zorder=4)
    else:
        ax.errorbar([value], [y], xerr=err, fmt="none", ecolor="black", elinewidth=0.9, capsize=2.5, zorder=4)


def label_beside(ax: Any, x: float, y: float, text: str, **kw: Any) -> Text:
    """A value label just right of ``x`` (a bar's end or its error bar's upper cap) at row ``y``, 4 points
    clear of it whatever the axis' scale, so it never touches the cap (capsize 2.5 points)."""
    return ax.annotate(text, xy=(x, y), xytext=(4, 0), textcoords="offset points", va="center", **kw)


def styled(fn):
    """Run a drawing function with the report's rc style (ticks and fonts read rc at draw time)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper
