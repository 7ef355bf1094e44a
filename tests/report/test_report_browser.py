"""The demo report in headless Chromium: every figure drawn, no console error, no request but file://.

Skips when /usr/bin/chromium is missing, unless BENCHSCORE_REQUIRE_BROWSER=1 (CI), which makes a missing
browser a failure. Chromium is Debian's; playwright only drives it (never `playwright install`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

PAGES = ("index.html", "tcsexam.html", "mira.html", "rxn.html", "swarm.html")


def _not_one_colour(png: Path) -> bool:
    from PIL import Image

    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    return colours is None or len(colours) > 1


@pytest.mark.parametrize("name", PAGES)
def test_the_demo_report_renders_in_chromium(browser, demo_out, tmp_path, name):
    page_path = demo_out / name
    problems: list[str] = []
    requests: list[str] = []
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(page_path.as_uri(), wait_until="load")
        figures = page.query_selector_all("figure")
        if name != "index.html":
            assert len(figures) >= 2, f"{name} has {len(figures)} figures"
        for i, figure in enumerate(figures):
            drawing = figure.query_selector("svg, img")
            assert drawing is not None, f"{name}: figure {i} holds no SVG or IMG"
            box = drawing.bounding_box()
            assert box and box["width"] > 0 and box["height"] > 0, f"{name}: figure {i} is empty ({box})"
            assert drawing.evaluate("e => e.childElementCount") > 0 or drawing.evaluate("e => e.tagName") == "IMG"
        shot = tmp_path / f"{name}.png"
        page.screenshot(path=str(shot), full_page=False)
        assert _not_one_colour(shot), f"{name}: the screenshot is one colour"
    finally:
        page.close()
    assert problems == []
    assert requests and all(url.startswith("file://") for url in requests), requests


#: everything a page shows, laid out at the width the issue measured (1,400 px); every folded block opened
LAYOUT = """
() => {
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const where = (e) => {
    const block = e.closest('.path, figure, article, section');
    const title = block && block.querySelector('h5, h3, h2, figcaption strong');
    return (title ? title.textContent.trim().slice(0, 60) + ': ' : '') + e.textContent.trim().slice(0, 60);
  };
  const wide = [...document.querySelectorAll('main *')]
    .filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
    .map((e) => `${e.tagName}.${e.className} ${e.scrollWidth} px in ${e.clientWidth} px: ${where(e)}`);
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) wide.push(`the page ${page.scrollWidth} px in ${page.clientWidth} px`);
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.data.matchAll(/(?<![\\w-])--[A-Za-z][\\w-]*/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (tops.size > 1) broken.push(`${m[0]} on ${tops.size} lines: ${where(node.parentElement)}`);
    }
  }
  for (const mark of document.querySelectorAll('.mark')) {
    const word = mark.textContent.trim();
    if (!word || /\\s/.test(word)) continue;
    const range = document.createRange();
    range.selectNodeContents(mark);
    const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    if (lines.size > 1) broken.push(`the state word ${word} on ${lines.size} lines: ${where(mark)}`);
  }
  const empty = [...document.querySelectorAll('tbody tr')].filter((tr) => !tr.classList.contains('group'))
    .filter((tr) => [...tr.children].slice(1).every((c) => !c.textContent.trim()))
    .filter((tr) => tr.children.length > 1).map((tr) => where(tr));
  const firsts = [...document.querySelectorAll('tbody th[scope="row"]')].map((th) => th.textContent.trim());
  return {wide, broken, empty, firsts};
}
"""


@pytest.fixture(scope="module")
def laid_out(browser, demo_out) -> dict[tuple[str, int], dict]:
    out = {}
    for width in (1400, 900):
        for name in PAGES:
            page = browser.new_page(viewport={"width": width, "height": 900})
            try:
                page.goto((demo_out / name).as_uri(), wait_until="load")
                out[(name, width)] = page.evaluate(LAYOUT)
            finally:
                page.close()
    return out


@pytest.mark.parametrize("name", PAGES)
def test_nothing_sits_behind_horizontal_scroll_at_1400_px(laid_out, name):
    """Every table (FAIL reasons, repetitions, every value) fits its container at 1,400 px: no element of
    the page is wider than the box that holds it, so no column is off-screen and no text leaves its cell."""
    assert laid_out[(name, 1400)]["wide"] == [], name


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("width", [1400, 900])
def test_an_option_or_a_state_word_is_never_broken_across_lines(laid_out, name, width):
    """``--quick`` never wraps as ``--`` / ``quick``, nor ``replay`` as ``re`` / ``pla`` / ``y``."""
    assert laid_out[(name, width)]["broken"] == [], name


@pytest.mark.parametrize("name", PAGES)
def test_no_table_has_an_empty_row_or_an_argument_s_inner_key(laid_out, name):
    """No row whose cells are all empty (a record that has only nested values), and no row naming an
    output argument by its recorded placeholder (``--output.output | file``)."""
    got = laid_out[(name, 1400)]
    assert got["empty"] == [], name
    placeholders = [f for f in got["firsts"] if f.startswith("--") and f.endswith((".output", ".folder"))]
    assert placeholders == [], name
