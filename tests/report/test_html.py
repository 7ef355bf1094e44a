"""The page machinery (benchscore.common.html) and the figure renderer (benchscore.common.plot)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from report_helpers import scalars, visible_text

from benchscore.common import html, plot


def output(doc, label="out.json", kind="k") -> html.Output:
    return html.Output(path=Path(label), label=label, sha256="ab" * 32, doc=doc, kind=kind)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**9, 10**9) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=6), children,
                                                                      max_size=4),
    max_leaves=25,
)


@given(st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=5))
def test_numbers_shows_every_scalar_of_any_output(doc):
    """Every value of an output is visible in the tables, whatever its shape (no format knowledge)."""
    text = visible_text(html.numbers(output(doc)))
    for value in scalars(doc):
        shown = " ".join(html.fmt(value).split())
        assert shown in text, (value, shown)


def test_numbers_escapes_markup_and_omits_what_it_is_told_to():
    doc = {"note": "<script>alert(1)</script>", "case": {"credentials": {"token": "s3cret"}, "x": 1}}
    block = html.numbers(output(doc), omit=("credentials",), note="credentials are not copied")
    assert "<script>" not in block and "&lt;script&gt;" in block
    assert "s3cret" not in block and "credentials are not copied" in block


def test_records_become_one_table_with_a_row_each():
    doc = {"models": {"a": {"status": "complete", "index": 55.5}, "b": {"status": "incomplete", "index": None}}}
    block = html.numbers(output(doc))
    assert block.count("<table") == 1
    assert re.search(r"<th[^>]*>a</th>.*complete.*55\.5", block, re.S)
    assert 'class="warn"' in block  # incomplete is marked


def test_a_fail_always_shows_its_reason_or_says_none_was_recorded():
    with_reason = html.fail_reason("FAIL", "no Redis mirror attached")
    assert "FAIL" in with_reason and "no Redis mirror attached" in with_reason and "fail" in with_reason
    assert "no reason recorded in the output" in html.fail_reason("FAIL", None)
    assert "no reason recorded" not in html.fail_reason("PASS", None)


def test_state_classes():
    assert html.state_class("FAIL") == "fail"
    assert html.state_class(False, "L01_PASS") == "fail"
    assert html.state_class(True, "MINIMAL_CLOSED_LOOP_PASS") == "pass"
    assert html.state_class("provisional") == "warn"
    assert html.state_class(False, "soft_timeout") == ""


def test_a_figure_carries_its_provenance():
    doc = {"reference_id": "ref-1", "provenance": {"metric_id": "m-1", "inputs": {"records": {"name": "r.json",
                                                                                            "sha256": "cd" * 32}},
                                                  "created_at": "2026-01-01T00:00:00Z"}}
    fig = plot.new_figure(3, 2)
    fig.add_subplot().plot([0, 1], [1, 0])
    block = html.figure(plot.to_svg(fig), "A title.", "What it shows.", [output(doc)])
    assert block.startswith("<figure>") and "<svg" in block and 'aria-label="A title."' in block
    for fragment in ("ab" * 32, "m-1", "ref-1", "cd" * 32, "r.json", "What it shows."):
        assert fragment in block


def test_svg_is_inline_ready_reproducible_and_figures_never_share_ids():
    def draw(label):
        fig = plot.new_figure(3, 2)
        ax = fig.add_subplot()
        ax.bar([label, "b"], [1, 2])
        ax.set_title(label)
        return plot.to_svg(fig)

    one, same = draw("cost$2 --> <x>"), draw("cost$2 --> <x>")
    assert one == same  # no date, fixed hash salt
    assert one.startswith("<svg") and "<?xml" not in one and "<!--" not in one and "<script" not in one
    a = html.figure(one, "T", "E", [output({}, "a.json")])
    b = html.figure(same, "T", "E", [output({}, "b.json")])  # the same drawing from another file
    assert a == html.figure(one, "T", "E", [output({}, "a.json")])
    ids_a = set(re.findall(r'\bid="([^"]+)"', a))
    assert ids_a and not ids_a & set(re.findall(r'\bid="([^"]+)"', b))
    svg_a = a[a.index("<svg"):a.index("</svg>")]
    for ref in re.findall(r'href="#([^"]+)"', svg_a) + re.findall(r"url\(#([^)]+)\)", svg_a):
        assert ref in ids_a


def test_a_page_loads_nothing_and_runs_nothing():
    page = html.page("t <b>", [html.Section("d", "D", [html.paragraph("x")])], [])
    assert "<script" not in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<title>t &lt;b&gt;</title>" in page


def test_a_reason_that_opens_with_its_verdict_does_not_repeat_it():
    for verdict, reason, shown in [("FAIL", "FAIL in live mode", "FAIL in live mode"),
                                   ("FAIL", "FAIL (replay): its checks passed", "FAIL (replay): its checks passed"),
                                   ("FAIL", "FAILED twice", "FAIL FAILED twice")]:
        text = " ".join(visible_text(str(html.fail_reason(verdict, reason))).split())
        assert text == shown, (reason, text)


# ---- layout: reasons wrap, options stay whole, no empty rows (issue 32) ---------------------------
def test_an_option_is_one_unbreakable_piece_and_a_long_identifier_breaks_at_its_parts():
    shown = html.prose("skipped by --quick (run S07_live_external.github); 0.53 stays")
    assert '<span class="opt">--quick</span>' in shown
    assert "S07_<wbr>live_<wbr>external.<wbr>github" in shown and "0.53 stays" in shown
    assert ".opt" in html.CSS and "white-space: nowrap" in html.CSS


def test_a_long_text_column_sits_on_a_line_of_its_own_under_its_row():
    page = html.table(["id", "n", "derivation", "note"], [["a", 1, "why a", "-"], ["b", 2, "why b", "x"]],
                      below=["derivation", "note"])
    heads = re.findall(r'<th scope="col">([^<]*)</th>', page)
    assert heads == ["id", "n"]
    rows = re.findall(r"<tr( class=\"below\")?>(.*?)</tr>", page.split("<tbody>", 1)[1])
    kinds = [bool(cls) for cls, _ in rows]
    assert kinds == [False, True, False, True, True]  # 'note' of a is '-': left out
    assert 'colspan="2"' in page and "why a" in page and "why b" in page


def test_a_record_of_nested_values_only_has_no_empty_row_and_an_output_argument_is_said_in_words():
    doc = {"intervals": {"per_dataset": {"d": {"ci95": [0.1, 0.2]}}, "overall": {"ci95": [0.3, 0.4], "m": "w"}},
           "provenance": {"arguments": {"--output": {"output": "file"}, "--seed": 3}}, "empty": [], "blank": ""}
    page = html.numbers(output(doc))
    for row in re.findall(r"<tr>(.*?)</tr>", page):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)
        assert any(c.strip() for c in cells[1:]), row
    text = visible_text(page)
    assert "--output.output" not in text and "an output file (where it was written is no part of the recipe)" in text
    assert "(none)" in text and "(empty string)" not in text  # an empty string reads as a missing value: -


def test_collisions_finds_a_legend_over_an_axis_label():
    fig = plot.new_figure(4, 2)
    ax = fig.add_subplot()
    ax.bar([0, 1], [1, 2], label="a metric")
    ax.set_xlabel("the axis label")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02))  # just below the axes: over the label
    assert any("the axis label" in c for c in plot.collisions(fig))
    fig = plot.new_figure(4, 2)
    ax = fig.add_subplot()
    ax.bar([0, 1], [1, 2], label="a metric")
    ax.set_xlabel("the axis label")
    fig.legend(loc="outside lower center")
    assert plot.collisions(fig) == []


def test_a_metric_has_one_colour_and_a_count_axis_whole_ticks():
    assert plot.metric_colour("avg_relative_score") == plot.METRIC_COLOURS["avg_relative_score"]
    assert plot.metric_colour("some_new_metric") == plot.metric_colour("some_new_metric") in plot.PALETTE
    fig = plot.new_figure(4, 2)
    ax = fig.add_subplot()
    ax.hist([0.1, 0.2, 0.2, 0.9], bins=[0, 0.5, 1])
    plot.count_axis(ax, "y")
    fig.draw_without_rendering()
    assert all(float(t).is_integer() for t in ax.get_yticks())
