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
