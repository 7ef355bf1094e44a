"""The answer first (issue 18): the summary table that opens every report page and the demo's index,
folded provenance, and what the swarm and mira pages show at their top."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_helpers import invoke, visible_text

from benchscore.common import html

DOMAIN_PAGES = ("tcsexam.html", "mira.html", "rxn.html", "swarm.html")



def _plain(markup: str) -> str:
    """The markup without what only steers line breaks (``<wbr>``, an option's ``<span class="opt">``)."""
    return re.sub(r'<wbr>|<span class="opt">([^<]*)</span>', r"\1", markup)

def _summary(page: str) -> str:
    """The summary table's HTML; it must be the first table of the page's main part."""
    main = page[page.index("<main>"):]
    first = main.index("<table")
    assert main[first:].startswith('<table class="summary">'), "the page does not open with the summary table"
    return main[first:main.index("</table>", first)]


def _rows(summary: str) -> list[str]:
    return [r for r in re.findall(r"<tr>(.*?)</tr>", summary, re.S) if 'scope="row"' in r]


@pytest.mark.parametrize("name", DOMAIN_PAGES)
def test_every_domain_page_opens_with_a_row_per_output(demo_out, name):
    page = (demo_out / name).read_text()
    rows = _rows(_summary(page))
    articles = set(re.findall(r'<span id="(o-[0-9a-f]{12})"></span>', page))
    linked = {m for r in rows for m in re.findall(r'href="#(o-[0-9a-f]{12})"', r)}
    assert articles and linked == articles  # every output on the page has its row, and each row its output
    for r in rows:
        status = re.search(r'class="[a-z]+ status"><span class="mark">([^<]+)<', r).group(1)
        if status not in ("complete", "PASS"):
            assert "no reason recorded" not in r, r  # the demo's outputs all say why
            assert re.search(r'<td class="(reason|note-warn)">[^<]{10,}', _plain(r)), r


def test_the_index_is_the_summary_of_every_domain_with_links_to_the_pages(demo_out):
    page = (demo_out / "index.html").read_text()
    rows = _rows(_summary(page))
    for name in DOMAIN_PAGES:
        domain_rows = _rows(_summary((demo_out / name).read_text()))
        assert len([r for r in rows if f'href="{name}#' in r]) == len(domain_rows)
    assert len(rows) == sum(len(_rows(_summary((demo_out / n).read_text()))) for n in DOMAIN_PAGES)


def test_headline_numbers_carry_their_intervals(demo_out):
    score = json.loads((demo_out / "mira" / "score.json").read_text())
    low, high = score["overall"]["task_success"]["ci95"]
    text = visible_text(_summary((demo_out / "mira.html").read_text()))
    assert f"Task Success 0.55 [{low:.4g}, {high:.4g}]" in text
    assert "Reliability 33.33%" in text
    index = json.loads((demo_out / "tcsexam" / "index.json").read_text())
    a = index["models"]["synthetic-model-a"]
    # the demo suite is Lite-shaped (5 tasks a track): no interval of the construction track, so none of the
    # index, and the page says so where the interval would be, with the reason
    assert a["intervals"]["index"]["ci95"] is None and "construction track" in a["intervals"]["index"]["ci_reason"]
    summary = _summary((demo_out / "tcsexam.html").read_text())
    assert f"index {a['index']:.4g} [no interval]" in visible_text(summary)
    assert "the construction track has no interval" in summary
    lo, hi = a["intervals"]["track_means"]["theorem"]["ci95"]
    assert lo < a["track_means"]["theorem"] < hi


def test_the_mira_score_and_its_status_come_before_the_public_projection(demo_out):
    page = (demo_out / "mira.html").read_text()
    rows = _rows(_summary(page))
    assert "mira/score.json" in rows[0] and "mira/public.json" in rows[-1]
    assert "incomplete" in rows[1] and "case ADV-03: 2 of 3 planned" in rows[1]
    assert page.index("<h3>mira/score.json") < page.index("<h3>mira/public.json")


def test_the_swarm_page_says_why_the_closed_loop_fails_and_shows_the_score_large(demo_out):
    page = (demo_out / "swarm.html").read_text()
    matrix = json.loads((demo_out / "swarm" / "acceptance" / "acceptance-matrix.json").read_text())
    failed = [k for k, v in matrix["closed_loop"].items() if v != "PASS"]
    banner = re.search(r'<p class="banner fail"><strong>FAIL</strong> MINIMAL_CLOSED_LOOP_PASS = false: ([^<]+)</p>',
                       _plain(page))
    assert banner and all(item in banner.group(1) for item in failed)
    summary = _plain(_summary(page))
    assert all(item in summary for item in failed)
    big = re.search(r'<p class="big-number [a-z]+"><span class="big">([^<]+)</span> <strong>minimal_compliance_score',
                    page)
    assert big and big.group(1) == html.number(matrix["minimal_compliance_score"])


def test_a_reduced_l01_is_reduced_not_a_red_fail(demo_out):
    page = (demo_out / "swarm.html").read_text()
    l01 = json.loads((demo_out / "swarm" / "l01-reduced.json").read_text())
    assert l01["L01_verdict"] == "reduced" and l01["checks_pass"]
    row = next(r for r in _rows(_summary(page)) if "l01-reduced.json" in r)
    assert 'class="warn status"><span class="mark">reduced<' in row and "below the seed" in row
    article = page[page.index("<h3>swarm/l01-reduced.json"):]
    first_banner = re.search(r'<p class="banner (\w+)"><strong>(\w+)</strong> L01 reduced', article)
    assert first_banner and first_banner.groups() == ("warn", "NOTE")


def test_a_consensus_round_before_the_last_is_not_yet_not_false(demo_out):
    page = (demo_out / "swarm.html").read_text()
    assert "not yet (round 1 of" in page
    # no converged cell is a red false unless it is the last round
    for cell in re.findall(r'<span class="mark fail">false</span>( <span class="reason">[^<]*</span>)?', page):
        assert "the last round did not converge" in cell


def test_provenance_is_folded_under_every_figure(demo_out):
    for name in DOMAIN_PAGES:
        page = (demo_out / name).read_text()
        figures = re.findall(r"<figure.*?</figure>", page, re.S)
        assert figures
        for fig in figures:
            assert fig.count('<details class="prov">') == 1 and "Drawn from" in fig
            labels = re.findall(r'<li><a href="#o-[0-9a-f]{12}">([^<]+)</a>', fig)
            assert labels and len(labels) == len(set(labels))


def test_benchscore_report_pages_open_with_the_summary_too(demo_out, tmp_path):
    out = tmp_path / "r.html"
    result = invoke("report", str(demo_out / "tcsexam" / "index.json"), str(demo_out / "mira" / "score.json"),
                    "--output", str(out))
    assert result.exit_code == 0, result.output
    rows = _rows(_summary(out.read_text()))
    assert len(rows) == 3  # two tcsexam models, one mira score
    assert '<th scope="rowgroup" colspan="4">tcsexam</th>' in out.read_text()


def test_a_status_short_of_complete_without_a_reason_says_so():
    out = html.Output(path=Path("x.json"), label="x.json", sha256="ab" * 32, doc={}, kind="k")
    table = html.summary_table([html.SummaryRow(out, "something", [html.Headline("m", 0.123456)], "incomplete"),
                                html.SummaryRow(out, "other", [], "PASS")])
    assert table.count("no reason recorded in the output") == 1
    assert "m <span class=\"value\">0.1235</span>" in table
    assert html.number(33.33333333333333, "%") == "33.33%" and html.number(4096) == "4096"
