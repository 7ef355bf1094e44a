"""The demo's first screen answers (issue 39, point 5): the index opens with one sentence that counts the
results by status and names the rows short of complete or PASS as refusals shown on purpose; the demo's
terminal summary prints the same sentence first."""

from __future__ import annotations

import re
from collections import Counter

from report_helpers import invoke

from benchscore.common import html


def _statuses(page: str) -> Counter:
    return Counter(re.findall(r'<td class="[^"]*\bstatus"><span class="mark">([^<]+)</span>', page))


def test_the_index_opens_with_a_sentence_counting_results_by_status(demo_out):
    page = (demo_out / "index.html").read_text()
    header = page.split("<header>", 1)[1].split("</header>", 1)[0]
    first = re.search(r"<h1>.*?</h1><p([^>]*)>(.*?)</p>", header, re.S)
    assert first and 'class="answer"' in first.group(1), header[:400]
    sentence = re.sub(r"<[^>]+>", "", first.group(2))
    statuses = _statuses(page)
    assert {"complete", "incomplete", "FAIL", "PASS"} <= set(statuses), statuses
    assert sentence.startswith(f"{sum(statuses.values())} results: ")
    for status, n in statuses.items():
        assert f"{n} {status}" in sentence, (status, sentence)
    assert "on purpose" in sentence
    for label in ("tcsexam/index.json", "mira/score_incomplete.json", "swarm/acceptance/acceptance-matrix.json"):
        assert label in sentence, label


def test_the_demo_prints_the_same_sentence_first(demo_out, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    result = invoke("demo", "--only", "mira", "--output-dir", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == "3 results: 2 complete, 1 incomplete. Refusals shown on purpose (the bundled inputs leave a " \
        "gap or a check unmet: a judge failure, a missing repetition, a replay instead of a live gateway, a run " \
        "below the seed's size): mira/score_incomplete.json (incomplete, score).", lines[:3]


def test_a_sentence_with_every_result_final_names_none():
    out = html.Output(path=None, label="a.json", sha256="0" * 64, doc={}, kind="k")
    rows = [html.SummaryRow(out, "x", [], "PASS"), html.SummaryRow(out, "x", [], "PASS")]
    assert html.status_sentence(rows, "on purpose") == "2 results: 2 PASS."


def test_the_swarm_fail_reason_is_a_short_list(demo_out):
    """The closed loop's FAIL says which items failed and how, one short item each; the conditions and their
    evidence (``store_pheromones={...}``) stay in the swarm page's checks table."""
    page = (demo_out / "index.html").read_text().replace("<wbr>", "")
    row = next(r for r in page.split("<tr>") if "MINIMAL_CLOSED_LOOP_PASS = false" in r)
    items = [re.sub(r"<[^>]+>", "", i).split(") ", 1)[1].strip() for i in re.findall(r"<li>(.*?)</li>", row)]
    assert [i.split(":")[0] for i in items] == ["S07_live_external_github_code_reasoning", "S08_model_io_report_audit"]
    assert items[0].endswith("checks not met: pheromone_scores_pg_and_redis, redis_stream_event_volume"), items
    assert all(len(i) < 200 and "evidence" not in i for i in items), items
    assert "store_pheromones" in (demo_out / "swarm.html").read_text()  # the whole reason, on the domain's page
