"""The HTML report: which domain drew an output, one page per set of outputs, the demo's pages.

Each domain's ``figures`` module recognises its own outputs (``kind_of``), draws them (``render``)
and says in a row or two what each one scores, its headline numbers and status (``summary_rows``,
for the summary table that opens every page); :mod:`benchscore.common.html` holds the page
machinery. This module only wires them,
like the umbrella CLI (and, like it, it may import every domain).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import warnings
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from benchscore.common import html
from benchscore.common.atomic import atomic_write_text
from benchscore.common.interrupts import checkpoint
from benchscore.common.outputs import Registry

DOMAINS = ("tcsexam", "mira", "rxn", "swarm")
#: what a report page has a section for: each domain, and ``benchscore compare`` outputs
SECTIONS = (*DOMAINS, "compare")


def figures(name: str) -> ModuleType:
    if name == "compare":
        return importlib.import_module("benchscore.publish.compare_figures")
    return importlib.import_module(f"benchscore.{name}.figures")


@cache
def outputs() -> Registry:
    """Every kind of output the report draws (and ``benchscore compare`` reads) with its model: each
    domain's ``figures`` module is its hook (``kind_of``, ``output_formats``)."""
    return Registry({name: figures(name) for name in SECTIONS})


def read_outputs(paths: list[tuple[Path, str]], *, strict: bool,
                 lenient: frozenset[Path] = frozenset()) -> dict[str, list[html.Output]]:
    """domain -> its outputs (in the order given); an output of no known kind is refused (``strict``,
    unless it is one of the ``lenient`` paths: found in a folder given) or skipped. Each output is validated against its kind's format before anything draws it: a
    value of the wrong type anywhere is one line naming the file and the JSON path of the field
    (:mod:`benchscore.common.outputs`). The same file given twice is one output."""
    found: dict[str, list[html.Output]] = {name: [] for name in SECTIONS}
    seen: set[str] = set()
    for path, label in paths:
        real = os.path.realpath(path)  # never raises (a link loop is refused by the reader below)
        if real in seen:
            continue
        seen.add(real)
        sha256, doc = html.read_output(path)
        known = outputs().check(doc, source=path)  # names the field the drawing would trip on
        if known is not None:
            name, kind = known
            found[name].append(html.Output(path=path, label=label, sha256=sha256, doc=doc, kind=kind))
        elif strict and path not in lenient:
            raise html.unknown_kind(path, doc, [f"{k} ({cmd})" for n in SECTIONS
                                                for k, cmd in figures(n).KINDS.items()])
    for name, outs in found.items():  # the kinds in each domain's own order (mira: the score before its projection)
        order = list(figures(name).KINDS)
        outs.sort(key=lambda o: order.index(o.kind))
    return found


def summary_rows(found: dict[str, list[html.Output]]) -> list[html.SummaryRow]:
    """Every output's rows of the summary table, from each domain's ``summary_rows`` hook."""
    return [dataclasses.replace(row, domain=name) for name, outs in found.items() for o in outs
            for row in figures(name).summary_rows(o)]


def report_page(found: dict[str, list[html.Output]], title: str, *, back: str | None = None) -> str:
    """One self-contained page: a section per domain that has outputs. matplotlib's layout warnings
    (an axis with nothing to draw) are not printed: what a figure cannot show, its page says."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        sections = [html.Section(name, figures(name).TITLE, figures(name).render(outs))
                    for name, outs in found.items() if outs]
    return html.page(title, sections, [o for outs in found.values() for o in outs], back=back,
                     summary=html.summary_table(summary_rows(found)))


def _demo_page(out: Path, name: str) -> tuple[str, list[html.Output]]:
    paths = sorted((out / name).rglob("*.json"))
    found = read_outputs([(p, str(p.relative_to(out))) for p in paths], strict=False)
    checkpoint("demo:pages")
    atomic_write_text(out / f"{name}.html", report_page(found, f"benchscore demo: {name}", back="index.html"))
    return name, found[name]


#: what the demo's index and terminal summary say of its rows short of complete or PASS
DEMO_ON_PURPOSE = ("Refusals shown on purpose (the bundled inputs leave a gap or a check unmet: a judge failure, a "
                   "missing repetition, a replay instead of a live gateway, a run below the seed's size)")


def demo_report(out: Path, names: tuple[str, ...]) -> list[html.SummaryRow]:
    """``OUT/index.html`` and ``OUT/<domain>.html``: every demo output of a kind the report draws.
    Returns the index's summary rows (``benchscore demo`` prints the same rows).

    The pages are drawn in parallel worker processes (matplotlib is CPU-bound), one per core; on Ctrl-C they
    are killed at once (:func:`benchscore.common.workers.forked_map`), before the demo puts its old folder back.
    """
    workers = min(len(names), os.cpu_count() or 1)
    if workers > 1:
        import matplotlib  # noqa: F401 - imported once here, inherited by the forked workers

        from benchscore.common.workers import forked_map

        done = dict(forked_map(_demo_page, [(out, name) for name in names], workers))
    else:
        done = dict(_demo_page(out, name) for name in names)
    checkpoint("demo:index")
    entries: list[Any] = [(name, figures(name).TITLE, f"{name}.html", done[name]) for name in names]
    rows = summary_rows({name: done[name] for name in names})
    atomic_write_text(out / "index.html", html.index_page(
        "benchscore demo report", entries, html.summary_table(rows, href={n: f"{n}.html" for n in names}),
        answer=html.status_sentence(rows, DEMO_ON_PURPOSE)))
    return rows
