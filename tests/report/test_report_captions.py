"""Issue 18, point 5: a caption says what its figure draws. The tcsexam per-task heatmap's caption said
missing cells were grey while they were drawn white and hatched in vermillion; this reads the demo's
page and checks the caption's words against the SVG the page holds (the hatch colour of the missing
cells, the cells' fill)."""

from __future__ import annotations

import html
import re

from benchscore.common import plot

#: the colour words a caption may use for the report's palette (plot.py names them in its comments)
COLOUR_NAMES = {plot.BAD.lower(): "vermillion"}


def _figure(page: str, caption_start: str) -> tuple[str, str]:
    at = page.index(caption_start)
    start, end = page.rindex("<figure", 0, at), page.index("</figure>", at)
    block = page[start:end]
    caption = html.unescape(re.sub(r"<[^>]+>", "", block[block.index("<figcaption"):]))
    return block, caption


def test_the_heatmap_caption_names_the_colours_its_missing_cells_are_drawn_in(demo_out):
    page = (demo_out / "tcsexam.html").read_text()
    svg, caption = _figure(page, "Per-task relative scores.")
    hatches = {m.lower() for body in re.findall(r"<pattern[^>]*>(.*?)</pattern>", svg, re.S)
               for m in re.findall(r"stroke: (#[0-9a-fA-F]{6})", body)}
    assert hatches, "the heatmap draws no hatched (missing) cell: the demo has one missing task"
    assert "missing" in svg, "the missing cells are not labelled 'missing'"
    for colour in hatches:
        name = COLOUR_NAMES.get(colour)
        assert name and name in caption, f"the hatch is drawn in {colour}; the caption does not name it: {caption!r}"
    assert "hatched" in caption and "white" in caption, caption  # the masked cells' fill is white (imshow bad)
    assert not re.search(r"\bgr[ae]y\b", caption), f"the caption names a colour the figure does not draw: {caption!r}"
