"""Every figure of every demo page, measured in headless Chromium: its data labels against the table it
sits above, no two of its texts overlapping, its row labels, legends and "Drawn from" list without
duplicates, its ticks inside the metric's range, no legend over an axis label or tick label (measured by matplotlib's
renderer when the figure is drawn, ``data-collisions``), whole-number ticks on an axis that counts, every
legend swatch filled, a metric's swatch never hatched, and one colour per metric on every page.

The figures record each text they draw (``data-texts`` on the ``<svg>``, see
:mod:`benchscore.common.plot`): its string, role (tick, legend, ...) and, for a data label, the
table cell it shows (``row``/``col``) or the rows it counts (``row``/``series``/``count``, with the
figure's ``data-counts`` naming the two columns). The glyphs of each text are measured in the
browser (``getBoundingClientRect`` of each drawn glyph), so a rotated label is measured as drawn.
Skips without /usr/bin/chromium unless BENCHSCORE_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from report_helpers import invoke

PAGES = ("index.html", "tcsexam.html", "mira.html", "rxn.html", "swarm.html")
#: two glyph boxes of different texts overlap when they share more than this many pixels each way
OVERLAP_PX = 1.0

COLLECT = """
() => {
  const all = [...document.querySelectorAll('figure, table')];
  const cellText = (c) => c.textContent.replace(/\\s+/g, ' ').trim();
  return [...document.querySelectorAll('figure')].map((fig) => {
    const svg = fig.querySelector('svg');
    const texts = JSON.parse(svg.getAttribute('data-texts') || 'null');
    const ranges = JSON.parse(svg.getAttribute('data-ranges') || '[]');
    const collisions = JSON.parse(svg.getAttribute('data-collisions') || 'null');
    const glyphs = (texts || []).map((t, i) => {
      const g = svg.querySelector(`g[id$="-bs-t${i}"]`);
      if (!g) return null;
      return [...g.querySelectorAll('use, path')].filter((e) => !e.closest('defs')).map((e) => {
        const r = e.getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom];
      }).filter((r) => r[2] > r[0] && r[3] > r[1]);
    });
    let table = null;
    for (let k = all.indexOf(fig) + 1; k < all.length; k++) {
      if (all[k].tagName === 'TABLE') { table = all[k]; break; }
    }
    const tab = table && {
      headers: [...table.querySelectorAll('thead th')].map(cellText),
      rows: [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map(cellText)),
    };
    return {
      title: svg.getAttribute('aria-label'), texts, glyphs, ranges, collisions, counts: fig.dataset.counts || null,
      table: tab, drawnFrom: [...fig.querySelectorAll('details.prov li > a')].map((a) => a.textContent),
    };
  });
}
"""


@pytest.fixture(scope="module")
def pages(demo_out, tmp_path_factory) -> dict[str, Path]:
    """The demo's pages, and a report of two rxn evaluations of the same question type and dataset in
    two files (their series must be told apart by file)."""
    found = {name: demo_out / name for name in PAGES}
    folder = tmp_path_factory.mktemp("report-two-evals")
    for run in ("run-a", "run-b"):
        (folder / run).mkdir()
        shutil.copyfile(demo_out / "rxn" / "eval_mc_all_varying.json", folder / run / "eval_mc.json")
    page = folder / "two-evals.html"
    result = invoke("report", str(folder / "run-a" / "eval_mc.json"), str(folder / "run-b" / "eval_mc.json"),
                    "--output", str(page))
    assert result.exit_code == 0, result.output
    found["two-evals.html"] = page
    return found


@pytest.fixture(scope="module")
def measured(browser, pages) -> dict[str, list[dict]]:
    out = {}
    for name, path in pages.items():
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        try:
            page.goto(path.as_uri(), wait_until="load")
            out[name] = page.evaluate(COLLECT)
        finally:
            page.close()
    return out


def _figures(measured, name):
    figures = measured[name]
    if name != "index.html":
        assert figures, f"{name} has no figure"
    return figures


def _overlaps(fig: dict) -> list[str]:
    texts, glyphs = fig["texts"], fig["glyphs"]
    hull = [None if not g else (min(r[0] for r in g), min(r[1] for r in g), max(r[2] for r in g),
                                max(r[3] for r in g)) for g in glyphs]

    def cross(a, b) -> bool:
        return (min(a[2], b[2]) - max(a[0], b[0]) > OVERLAP_PX) and (min(a[3], b[3]) - max(a[1], b[1]) > OVERLAP_PX)

    found = []
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if hull[i] and hull[j] and cross(hull[i], hull[j]) and any(
                    cross(a, b) for a in glyphs[i] for b in glyphs[j]):
                found.append(f"{texts[i]['text']!r} overlaps {texts[j]['text']!r}")
    return found


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_every_figure_records_and_draws_its_texts(measured, name):
    for fig in _figures(measured, name):
        assert fig["texts"] is not None, f"{name}: {fig['title']!r} records no data-texts"
        missing = [t["text"] for t, g in zip(fig["texts"], fig["glyphs"], strict=True) if not g]
        assert not missing, f"{name}: {fig['title']!r}: texts recorded but not drawn: {missing}"


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_no_two_texts_of_a_figure_overlap(measured, name):
    problems = {fig["title"]: o for fig in _figures(measured, name) if (o := _overlaps(fig))}
    assert not problems, f"{name}: {problems}"


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_row_labels_legends_and_sources_are_unique(measured, name):
    for fig in _figures(measured, name):
        for role in ("ytick", "xtick", "legend"):
            per_axes = Counter((t["axes"], t["text"]) for t in fig["texts"] or [] if t["role"] == role)
            twice = [text for (_, text), k in per_axes.items() if k > 1]
            assert not twice, f"{name}: {fig['title']!r}: {role} labels drawn twice: {twice}"
        twice = [label for label, k in Counter(fig["drawnFrom"]).items() if k > 1]
        assert not twice, f"{name}: {fig['title']!r}: 'Drawn from' lists {twice} twice"


def _number(text: str) -> float | None:
    m = re.fullmatch(r"\s*([-\u2212]?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)\s*%?\s*", text)
    return float(m.group(1).replace("\u2212", "-")) if m else None


def _agrees(drawn: str, cell: str) -> bool:
    """The label shows the cell: the same text, or the same number to the label's precision."""
    if " ".join(drawn.split()) == " ".join(cell.split()):
        return True
    a, b = _number(drawn), _number(cell)
    if a is None or b is None:
        return False
    decimals = len(drawn.strip().rstrip("%").partition(".")[2])
    return abs(a - b) <= 0.5 * 10 ** -decimals + 1e-9


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_data_labels_match_the_table_below_the_figure(measured, name):
    checked = 0
    for fig in _figures(measured, name):
        cells = [t for t in fig["texts"] or [] if "col" in t]
        if cells:
            table = fig["table"]
            assert table, f"{name}: {fig['title']!r} has data labels but no table below it"
            for t in cells:
                assert t["col"] in table["headers"], f"{name}: {fig['title']!r}: no column {t['col']!r} below it"
                col = table["headers"].index(t["col"])
                rows = [r for r in table["rows"] if r and r[0] == t["row"]]
                assert len(rows) == 1, f"{name}: {fig['title']!r}: {len(rows)} rows {t['row']!r} in the table below"
                drawn = str(t.get("value", t["text"]))
                assert _agrees(drawn, rows[0][col]), (
                    f"{name}: {fig['title']!r}: {t['row']} {t['col']} drawn {drawn!r}, the table says {rows[0][col]!r}")
                checked += 1
        if fig["counts"]:
            key, series = fig["counts"].split("|")
            table = fig["table"]
            k, s = table["headers"].index(key), table["headers"].index(series)
            in_table = Counter((r[k], r[s]) for r in table["rows"] if len(r) > max(k, s))
            drawn = {(t["row"], t["series"]): int(t["text"]) for t in fig["texts"] if "count" in t}
            assert drawn == dict(in_table), (
                f"{name}: {fig['title']!r}: counts drawn {drawn} but the table below counts {dict(in_table)}")
            checked += 1
    if name in ("tcsexam.html", "mira.html", "rxn.html", "swarm.html", "two-evals.html"):
        assert checked, f"{name}: no data label was checked against a table"


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_ticks_stay_inside_the_metrics_range(measured, name):
    for fig in _figures(measured, name):
        for r in fig["ranges"]:
            low, high = r["range"]
            ticks = [_number(t["text"]) for t in fig["texts"]
                     if t["role"] == f"{r['axis']}tick" and t["axes"] == r["axes"]]
            outside = [v for v in ticks if v is not None and not low - 1e-9 <= v <= high + 1e-9]
            assert not outside, f"{name}: {fig['title']!r}: ticks {outside} outside [{low}, {high}]"


def test_the_mira_page_counts_unused_repetitions_apart(measured):
    """The public projection's unused repetitions (ADV-01 #4 and #5) are not counted as passes."""
    statuses = [f for f in measured["mira.html"] if f["title"] == "Repetition statuses per case."]
    assert len(statuses) == 3  # the score, the incomplete score and the public projection
    for fig in statuses:
        drawn = {(t["row"], t["series"]): int(t["text"]) for t in fig["texts"] if "count" in t}
        assert drawn[("ADV-01", "pass")] == 1, drawn
        assert sum(v for (row, series), v in drawn.items() if row == "ADV-01" and series.startswith("excluded")) == 2


#: an axis whose label starts with one of these counts things: its ticks are whole numbers
COUNT_WORDS = ("samples", "repetitions", "calls", "tasks", "count", "questions", "runs")


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_no_legend_covers_an_axis_label(measured, name):
    for fig in _figures(measured, name):
        assert fig["collisions"] is not None, f"{name}: {fig['title']!r} records no data-collisions"
        assert fig["collisions"] == [], f"{name}: {fig['title']!r}: {fig['collisions']}"


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_an_axis_that_counts_has_whole_number_ticks(measured, name):
    for fig in _figures(measured, name):
        for label in (t for t in fig["texts"] if t["role"] == "axis-label"):
            if label["text"].split(" ")[0] not in COUNT_WORDS:
                continue
            ticks = [t["text"] for t in fig["texts"]
                     if t["role"] == f"{label['axis']}tick" and t["axes"] == label["axes"]]
            assert ticks, f"{name}: {fig['title']!r}: axis {label['text']!r} has no tick"
            fractions = [t for t in ticks if (v := _number(t)) is None or v != int(v)]
            assert not fractions, f"{name}: {fig['title']!r}: axis {label['text']!r} counts, ticks at {fractions}"


@pytest.mark.parametrize("name", [*PAGES, "two-evals.html"])
def test_every_legend_swatch_is_filled_and_a_metric_is_never_hatched(measured, name):
    from benchscore.common.plot import METRIC_COLOURS

    for fig in _figures(measured, name):
        for t in (t for t in fig["texts"] if t["role"] == "legend"):
            assert "swatch" in t, f"{name}: {fig['title']!r}: legend {t['text']!r} records no swatch"
            assert t["swatch"]["fill"], f"{name}: {fig['title']!r}: legend {t['text']!r} is an empty outline"
            if t["text"] in METRIC_COLOURS:
                assert not t["swatch"]["hatch"], f"{name}: {fig['title']!r}: metric {t['text']!r} is hatched"


def test_a_metric_has_one_colour_on_every_page(measured):
    """A legend entry naming a metric is drawn in the same colour in every figure of every page."""
    from benchscore.common.plot import METRIC_COLOURS, metric_colour

    seen: dict[str, set[tuple[str, str]]] = {}
    for name, figures in measured.items():
        for fig in figures:
            for t in fig["texts"] or []:
                if t["role"] == "legend" and t["text"] in METRIC_COLOURS:
                    seen.setdefault(t["text"], set()).add((t["swatch"]["fill"], f"{name}: {fig['title']}"))
    assert len(seen) >= 4, seen
    for metric, drawn in seen.items():
        colours = {c for c, _ in drawn}
        assert {c.lower() for c in colours} == {metric_colour(metric).lower()}, f"{metric} drawn in {sorted(drawn)}"
