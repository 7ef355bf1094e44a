"""Every page that ``benchscore demo`` and ``benchscore leaderboard`` write reads the same (issue 39, point 5):
every number for reading at four significant digits and never with float noise (``0.9400000000000001``), no
``(empty string)`` placeholder, and, in headless Chromium at 900 px and 1,400 px, nothing wider than the box
that holds it (no horizontal scroll, no word such as ``incomplete`` leaving its status cell).

The browser tests skip when /usr/bin/chromium is missing, unless BENCHSCORE_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

#: a decimal number standing on its own in text: not part of a name, a version (``0.3.0``), an address
#: (``127.0.0.1``), a path or a time (``12:00:00.5``)
NUMBER = re.compile(r"(?<![\w.@/-])(?<!\d:)-?\d+\.\d+(?:e[-+]?\d+)?(?![\w:/]|\.\d)")
#: float noise: the binary float's shortest repr, a run of zeros or nines and a last digit, 15 digits or more
#: (``0.9400000000000001``, ``0.30000000000000004``, ``0.7999999999999999``); a tooltip's 12 digits are not noise
NOISE = re.compile(r"\d\.\d*(?:0{5,}|9{5,})\d")


def noise(text: str) -> list[str]:
    return [n for n in NOISE.findall(text) if significant_digits(n) >= 15]


class _Text(HTMLParser):
    """The text a reader sees (outside ``<style>`` and ``<script>``), and every attribute value apart."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = 0
        self.text: list[str] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self.hidden += 1
        self.attributes += [v for k, v in attrs if v and k in ("title", "aria-label", "alt")]

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self.hidden -= 1

    def handle_data(self, data):
        if not self.hidden:
            self.text.append(data)


def significant_digits(number: str) -> int:
    return len(number.lstrip("-").split("e")[0].replace(".", "").lstrip("0"))


def read(page: Path) -> _Text:
    parser = _Text()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def pages(demo_out: Path, leaderboard_out: Path) -> list[Path]:
    found = sorted(demo_out.glob("*.html")) + sorted(leaderboard_out.rglob("*.html"))
    assert len(found) >= 7, found  # the index and the four domains' pages; the leaderboard's index and pairs
    return found


def test_the_checks_catch_what_they_look_for():
    """The patterns find float noise and long numbers, and leave versions, addresses and times alone."""
    text = "0.9400000000000001 and 0.30000000000000004 and 0.7999999999999999"
    assert len(noise(text)) == 3
    assert noise("0.999999972304 and 0.999999993") == []
    assert [significant_digits(n) for n in NUMBER.findall("0.515234 and 68.72 and 0.08248")] == [6, 4, 4]
    assert NUMBER.findall("schema 0.3.0 at 127.0.0.1:8000 at 12:00:00.5 in a/b1.25 mira-core-demo@0.1") == []


def test_every_number_on_every_page_has_four_significant_digits_and_no_float_noise(demo_out, leaderboard_out):
    """One formatting rule on every page the demo and the leaderboard write: a number a reader sees has at
    most four significant digits; tooltips (``title``) may say more but never carry float noise."""
    problems = []
    for page in pages(demo_out, leaderboard_out):
        got = read(page)
        text = " ".join(got.text)
        long = sorted({n for n in NUMBER.findall(text) if significant_digits(n) > 4})
        noisy = sorted(set(noise(text)) | {n for a in got.attributes for n in noise(a)})
        if long or noisy:
            problems.append(f"{page.name}: more than 4 significant digits {long[:8]}, float noise {noisy[:8]}")
    assert problems == []


def test_no_page_shows_an_empty_string_placeholder(demo_out, leaderboard_out):
    """A missing value is '-' or nothing at all, never the words ``(empty string)``."""
    assert [p.name for p in pages(demo_out, leaderboard_out) if "(empty string)" in p.read_text()] == []


#: what is wider than the box that holds it, and whether the page scrolls sideways
OVERFLOW = """
() => {
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const where = (e) => `${e.tagName}.${e.className}: ${e.textContent.trim().slice(0, 60)}`;
  const wide = [...document.querySelectorAll('body *')]
    .filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && !e.classList.contains('scroll'))
    .map((e) => `${e.scrollWidth} px in ${e.clientWidth} px: ${where(e)}`);
  const cells = [...document.querySelectorAll('td, th')].flatMap((c) => {
    const box = c.getBoundingClientRect();
    return [...c.children].filter((k) => {
      const r = k.getBoundingClientRect();
      return r.width > 0 && (r.right > box.right + 1 || r.left < box.left - 1);
    }).map((k) => `${where(k)} leaves its cell (${Math.round(r0(k))} px past)`);
    function r0(k) { return Math.max(k.getBoundingClientRect().right - box.right, box.left - k.getBoundingClientRect().left); }
  });
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) wide.push(`the page: ${root.scrollWidth} px in ${root.clientWidth} px`);
  return [...wide, ...cells];
}
"""


@pytest.mark.parametrize("width", [900, 1400])
def test_nothing_overflows_on_any_page_at_900_and_1400_px(browser, demo_out, leaderboard_out, width):
    """No horizontal scroll of the page, no element wider than its box, nothing leaving its table cell. A
    table of many columns (Mira's repetitions at 900 px) may scroll inside its own ``.scroll`` box, which
    is what that box is for; the page never scrolls sideways and no cell's content leaves the cell."""
    problems = {}
    for path in pages(demo_out, leaderboard_out):
        page = browser.new_page(viewport={"width": width, "height": 900})
        try:
            page.goto(path.as_uri(), wait_until="load")
            found = page.evaluate(OVERFLOW)
        finally:
            page.close()
        if found:
            problems[str(path.relative_to(path.parents[1]))] = found[:6]
    assert problems == {}


def test_the_terminal_reads_the_same_as_the_pages(tmp_path, monkeypatch):
    """What ``benchscore demo`` (its swarm and rxn parts: the FAIL reasons and the chance levels) and
    ``benchscore leaderboard`` print: four significant digits, no float noise (``0.9400000000000001`` was in
    the swarm FAIL reason's evidence)."""
    from report_helpers import invoke

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    logs = Path(__file__).resolve().parents[2] / "examples" / "results" / "logs"
    printed = []
    for args in (["demo", "--only", "swarm", "--only", "rxn", "--output-dir", str(tmp_path / "demo")],
                 ["leaderboard", str(logs), "--output-dir", str(tmp_path / "site")]):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        printed.append(result.stdout)
    text = "\n".join(printed)
    assert "MINIMAL_CLOSED_LOOP_PASS = false" in text and "rank" in text
    assert sorted({n for n in NUMBER.findall(text) if significant_digits(n) > 4}) == []
    assert noise(text) == []
