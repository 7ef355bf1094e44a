"""``benchscore leaderboard`` on results of other tools (docs/results.md, "A leaderboard a benchmark can publish").

A hand-computed small case (three models, six samples, Every Eval Ever instance records) is checked
against ``leaderboard.json``; the Every Eval Ever aggregate records it writes are validated against the
published schema; the page is opened in Chromium and its rows checked against the JSON; a leaderboard
of real inspect_ai logs (the mockllm runs of ``test_results_inspect``) carries the counts of each model.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from scipy import optimize
from scipy import stats as sps
from test_results_inspect import SAMPLES, as_wrong, logs  # noqa: F401 (logs: the mockllm runs, a fixture)

from benchscore.cli import cli

ENV = {"SOURCE_DATE_EPOCH": "1767225600"}
DATA = Path(__file__).resolve().parent / "data"
TEMPLATE = DATA / "every_eval_ever" / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40_samples.jsonl"

# per model, the score of samples q1..q6 (beta's q6 errored: it counts as wrong)
SCORES = {"alpha": [1, 1, 1, 1, 1, 0], "beta": [1, 1, 1, 0, 0, 0], "gamma": [0, 0, 0, 0, 0, 1]}
METRIC = "demo-source.demo_bench/score"


def write_records(folder: Path, scores: dict[str, list[int]], errored: dict[str, int] | None = None) -> Path:
    """Every Eval Ever instance records, one file per model, from the template record of the repository."""
    folder.mkdir(parents=True, exist_ok=True)
    template = json.loads(TEMPLATE.read_text().splitlines()[0])
    for model, values in scores.items():
        lines = []
        for i, v in enumerate(values, 1):
            record = dict(template, model_id=f"org/{model}", evaluation_id=f"hand/{model}", sample_id=f"q{i}",
                          sample_hash=hashlib.sha256(f"q{i}".encode()).hexdigest(),
                          evaluation={"score": float(v), "is_correct": bool(v)})
            if (errored or {}).get(model) == i:
                record["error"] = "timeout"
            lines.append(json.dumps(record))
        (folder / f"{model}_samples.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def leaderboard(*args) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["leaderboard", *map(str, args)], env=ENV)
    return res.exit_code, res.output


def mid_p(k: int, n: int) -> tuple[float, float]:
    """The mid-p interval worked out from its definition (root of each tail at 2.5 %)."""
    def upper_tail(p):  # P(X > k) + P(X = k) / 2
        return sps.binom.sf(k, n, p) + sps.binom.pmf(k, n, p) / 2 - 0.025

    def lower_tail(p):
        return sps.binom.cdf(k - 1, n, p) + sps.binom.pmf(k, n, p) / 2 - 0.025
    lo = 0.0 if k == 0 else optimize.brentq(upper_tail, 1e-12, 1 - 1e-12)
    hi = 1.0 if k == n else optimize.brentq(lower_tail, 1e-12, 1 - 1e-12)
    return lo, hi


@pytest.fixture(scope="module")
def hand(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lb-hand")
    write_records(root / "in", SCORES, errored={"beta": 6})
    code, text = leaderboard(root / "in", "--output-dir", root / "site", "--metric", METRIC)
    assert code == 0, text
    return root / "site"


def test_the_small_case_matches_the_hand_computation(hand):
    doc = orjson.loads((hand / "leaderboard.json").read_bytes())
    (board,) = doc["metrics"]
    rows = {r["label"]: r for r in board["rows"]}
    assert [r["label"] for r in board["rows"]] == ["org/alpha", "org/beta", "org/gamma"]
    for model, values in SCORES.items():
        r = rows[f"org/{model}"]
        k, n = sum(values), len(values)
        p = k / n
        assert r["value"] == pytest.approx(p)
        assert r["ci95"] == pytest.approx(list(mid_p(k, n)), abs=1e-9) and r["ci_method"] == "exact_mid_p"
        assert r["standard_error"] == pytest.approx(math.sqrt(p * (1 - p) / (n - 1)))  # s / sqrt(n)
        # six samples: no outcome separates three results (the smallest McNemar p is 2 / 2^6, x3 by Holm)
        assert r["rank_range"] == [1, 3] and r["groups"] == ["a"]
        assert r["reproduced"] is None
    assert rows["org/beta"]["counts"]["scored"] == 5 and rows["org/beta"]["counts"]["errored"] == 1
    assert rows["org/alpha"]["counts"]["scored"] == 6 and rows["org/alpha"]["counts"]["errored"] == 0
    first, second = board["adjacent_pairs"]
    # alpha vs beta: discordant q4, q5 (both alpha's): exact McNemar 2 x (1/2)^2
    assert (first["a"], first["b"]) == ("org/alpha", "org/beta")
    assert first["p_value"] == pytest.approx(0.5) and first["test"] == "mcnemar_exact"
    assert first["difference"] == pytest.approx(1 / 3)
    assert [d["item"] for d in first["items_that_differ_most"]] == ["q4", "q5"]
    # beta vs gamma: q1-q3 beta's, q6 gamma's: 2 x P(X <= 1 | 4, 1/2) = 2 x 5/16
    assert second["p_value"] == pytest.approx(0.625)
    assert {d["item"]: d["difference"] for d in second["items_that_differ_most"]} == {
        "q1": 1.0, "q2": 1.0, "q3": 1.0, "q6": -1.0}
    # Holm over 0.21875 (alpha vs gamma), 0.5, 0.625: 0.65625, 1, 1
    assert first["p_holm"] == pytest.approx(1.0) and second["p_holm"] == pytest.approx(1.0)
    assert first["verdict"] == second["verdict"] == "cannot_separate_at_this_n"
    assert (hand / first["page"]).is_file() and (hand / second["page"]).is_file()


def test_the_every_eval_ever_records_follow_the_published_schema(hand):
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / "src" / "benchscore" / "sources" / "data" /
                         "every_eval_ever" / "eval-0.3.0.schema.json").read_text())
    doc = orjson.loads((hand / "leaderboard.json").read_bytes())
    rows = {r["label"]: r for r in doc["metrics"][0]["rows"]}
    for label, row in rows.items():
        record = json.loads((hand / row["eee_record"]).read_text())
        jsonschema.Draft7Validator(schema).validate(record)
        assert record["schema_version"] == "0.3.0" and record["model_info"]["id"] == label
        (result,) = record["evaluation_results"]
        details = result["score_details"]
        assert details["score"] == row["value"]
        u = details["uncertainty"]
        assert [u["confidence_interval"]["lower"], u["confidence_interval"]["upper"]] == row["ci95"]
        assert u["confidence_interval"]["confidence_level"] == 0.95
        assert u["confidence_interval"]["method"] == "exact_mid_p"
        assert u["standard_error"]["value"] == row["standard_error"] and u["num_samples"] == 6
        assert details["details"]["errored"] == str(row["counts"]["errored"])


def test_too_few_samples_give_no_interval_and_say_why(tmp_path):
    write_records(tmp_path / "in", {"alpha": [1, 0], "beta": [0, 0]})
    code, text = leaderboard(tmp_path / "in", "--output-dir", tmp_path / "site", "--metric", METRIC)
    assert code == 0, text
    doc = orjson.loads((tmp_path / "site" / "leaderboard.json").read_bytes())
    for row in doc["metrics"][0]["rows"]:
        assert row["ci95"] is None
        assert row["ci_reason"] == "2 samples: a calibrated 95 % interval needs at least 3 samples"
        record = json.loads((tmp_path / "site" / row["eee_record"]).read_text())
        details = record["evaluation_results"][0]["score_details"]
        assert "confidence_interval" not in details["uncertainty"]
        assert details["details"]["ci_reason"] == row["ci_reason"]
    page = (tmp_path / "site" / "index.html").read_text()
    assert "none: 2 samples: a calibrated 95 % interval needs at least 3 samples" in page


def test_refusals_are_one_line_and_leave_no_folder(tmp_path):
    write_records(tmp_path / "in", SCORES)
    code, text = leaderboard(tmp_path / "in" / "alpha_samples.jsonl", "--output-dir", tmp_path / "site")
    assert code == 2 and "at least two results" in text and not (tmp_path / "site").exists()
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("not the leaderboard's")
    code, text = leaderboard(tmp_path / "in", "--output-dir", tmp_path / "taken", "--metric", METRIC)
    assert code == 2 and "holds 'mine.txt', which benchscore leaderboard did not write" in text
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["mine.txt"]
    # its own earlier output is replaced as a whole, with the same bytes
    assert leaderboard(tmp_path / "in", "--output-dir", tmp_path / "own", "--metric", METRIC)[0] == 0
    first = (tmp_path / "own" / "leaderboard.json").read_bytes()
    assert leaderboard(tmp_path / "in", "--output-dir", tmp_path / "own", "--metric", METRIC)[0] == 0
    assert (tmp_path / "own" / "leaderboard.json").read_bytes() == first
    code, text = leaderboard(tmp_path / "in", "--output-dir", tmp_path / "site2", "--metric", "nope")
    assert code == 2 and "--metric 'nope'" in text and not (tmp_path / "site2").exists()


def test_the_page_in_chromium_shows_the_rows_of_the_json(browser, hand):
    doc = orjson.loads((hand / "leaderboard.json").read_bytes())
    (board,) = doc["metrics"]
    requests: list[str] = []
    problems: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.goto((hand / "index.html").as_uri())
    shown = page.eval_on_selector_all("table.board tr[data-label]", """rows => rows.map(r => ({
        label: r.dataset.label,
        cells: Object.fromEntries([...r.querySelectorAll('td[data-key]')].map(c => [c.dataset.key, c.innerText]))
    }))""")
    assert [s["label"] for s in shown] == [r["label"] for r in board["rows"]]
    for s, r in zip(shown, board["rows"], strict=True):
        assert s["cells"]["value"] == f"{r['value']:.4g}"
        assert s["cells"]["ci95"] == f"[{r['ci95'][0]:.4g}, {r['ci95'][1]:.4g}]"
        assert s["cells"]["rank_range"] == f"{r['rank_range'][0]}-{r['rank_range'][1]}"
        assert s["cells"]["groups"] == ", ".join(r["groups"])
        assert s["cells"]["counts"].startswith(f"{r['counts']['scored']} scored, {r['counts']['errored']} errored")
    # the forest plot: one drawn row per result, at the JSON's value, with its interval
    drawn = page.eval_on_selector_all("svg.forest g.row", "gs => gs.map(g => [g.dataset.label, +g.dataset.value, "
                                                          "g.getBBox().width])")
    assert [(d[0], d[1]) for d in drawn] == [(r["label"], r["value"]) for r in board["rows"]]
    assert all(d[2] > 0 for d in drawn)
    page.click(f"a[href='{board['adjacent_pairs'][0]['page']}']")
    items = page.eval_on_selector_all("tr[data-item]", "rs => rs.map(r => r.dataset.item)")
    assert items == [d["item"] for d in board["adjacent_pairs"][0]["items_that_differ_most"]]
    page.close()
    assert all(u.startswith("file://") for u in requests) and not problems


@pytest.mark.inspect
def test_a_leaderboard_of_real_inspect_ai_logs_counts_each_model(inspect_ai_installed, logs, tmp_path):  # noqa: F811
    code, text = leaderboard(logs["main"], "--output-dir", tmp_path / "site", "--resamples", "200",
                             "--metric", "quiz/match")
    assert code == 0, text
    doc = orjson.loads((tmp_path / "site" / "leaderboard.json").read_bytes())
    (board,) = doc["metrics"]
    assert [r["label"] for r in board["rows"]] == ["mockllm/strong", "mockllm/middle", "mockllm/weak"]
    ids = [s["id"] for s in SAMPLES]
    for r in board["rows"]:
        model = r["label"].split("/")[1]
        assert r["value"] == pytest.approx(sum(as_wrong(model, i) for i in ids) / 8)
        assert r["counts"]["sample_epochs"] == 24 and r["counts"]["errors"] == "as-wrong"
        assert r["ci95"] is not None and r["ci95"][0] < r["value"] < r["ci95"][1]
    counts = {r["label"]: (r["counts"]["scored"], r["counts"]["errored"]) for r in board["rows"]}
    assert counts == {"mockllm/strong": (23, 1), "mockllm/middle": (24, 0), "mockllm/weak": (21, 3)}
    page = (tmp_path / "site" / "index.html").read_text()
    assert "23 scored, 1 errored, 0 unscored" in page
    for r in board["rows"]:
        record = json.loads((tmp_path / "site" / r["eee_record"]).read_text())
        assert record["eval_library"]["name"] == "inspect_ai"
        assert record["evaluation_results"][0]["score_details"]["details"]["scored"] == str(r["counts"]["scored"])
    # the same statistics as compare: its leaderboard gives the same rank intervals and groups
    res = CliRunner().invoke(cli, ["compare", str(logs["main"]), "--resamples", "200", "--metric", "quiz/match",
                                   "--output", str(tmp_path / "c.json")], env=ENV)
    assert res.exit_code == 0, res.output
    standing = orjson.loads((tmp_path / "c.json").read_bytes())["leaderboards"]["quiz/match"]
    assert [(s["label"], s["rank_range"], s["groups"], s["ci95"]) for s in standing] == [
        (r["label"], r["rank_range"], r["groups"], r["ci95"]) for r in board["rows"]]


# --- fifty models: group labels that cannot be misread, a page readable at any width (issue 35, points 3, 6) ---

LONG = "-a-very-long-model-name-instruct-2025-11-preview-v3"


@pytest.fixture(scope="module")
def fifty(tmp_path_factory) -> dict:
    """Fifty models on 240 samples, model k right on the first 20 + 4k (near-twins four samples apart: Holm
    separates models about five places apart, so the board has more than 26 groups); every seventh model
    has a long name. Returns the site, leaderboard.json and the terminal output."""
    root = tmp_path_factory.mktemp("lb-fifty")
    n = 240
    scores = {f"m{k:02d}" + (LONG if k % 7 == 0 else ""): [int(i < 20 + 4 * k) for i in range(n)] for k in range(50)}
    write_records(root / "in", scores)
    res = CliRunner().invoke(cli, ["leaderboard", str(root / "in"), "--output-dir", str(root / "site"),
                                   "--metric", METRIC], env=ENV)
    assert res.exit_code == 0, res.output
    return {"site": root / "site", "doc": orjson.loads((root / "site" / "leaderboard.json").read_bytes()),
            "out": res.output}


def test_fifty_models_share_a_displayed_group_label_exactly_when_not_separated(fifty):
    """In the JSON (a list per result), the page's cells, the forest plot's notes, the terminal and the
    Every Eval Ever records: past 26 groups every label has two letters, always shown separated."""
    import re

    from benchscore.stats.compare import groups_text

    (board,) = fifty["doc"]["metrics"]
    rows = board["rows"]
    labels = {x for r in rows for x in r["groups"]}
    assert len(labels) > 26 and {len(x) for x in labels} == {2}
    for r in rows:
        near = set(r["indistinguishable_from"])
        assert r["n_indistinguishable"] == len(near)
        for other in rows:
            if other is not r:
                assert bool(set(r["groups"]) & set(other["groups"])) == (other["label"] in near), (r, other)
    page = (fifty["site"] / "index.html").read_text()
    cells = re.findall(r'<tr data-label="([^"]+)">.*?<td class="groups" data-key="groups">([^<]*)</td>', page)
    assert [(label, text.split(", ")) for label, text in cells] == [(r["label"], r["groups"]) for r in rows]
    for r in rows:  # the terminal's row: rank interval, then the groups, separated, then the result
        assert re.search(rf"^{r['rank_range'][0]}-{r['rank_range'][1]}\s+{re.escape(groups_text(r['groups']))}\s+"
                         rf"{re.escape(r['label'])}\s", fifty["out"], re.M), r["label"]
        record = json.loads((fifty["site"] / r["eee_record"]).read_text())
        assert record["evaluation_results"][0]["score_details"]["details"]["groups"] == groups_text(r["groups"])
    # the misreading: read letter by letter, no two results with disjoint rank intervals share a letter
    for r in rows:
        for other in rows:
            apart = r["rank_range"][1] < other["rank_range"][0] or other["rank_range"][1] < r["rank_range"][0]
            if apart:
                assert not set(groups_text(r["groups"]).split(", ")) & set(groups_text(other["groups"]).split(", "))


def test_no_bare_rank_and_one_word_per_verdict(fifty, hand):
    """The rank interval is the rank (no position field, no '#' column, no '1.' in the terminal); each
    verdict has one word in help, terminal, page and JSON: the JSON key read aloud."""
    import re

    from benchscore.stats.compare import VERDICT_WORDS, VERDICTS

    assert {v: VERDICT_WORDS[v] for v in VERDICTS} == {v: v.replace("_", " ") for v in VERDICTS}
    for site, out in ((fifty["site"], fifty["out"]), (hand, None)):
        doc = orjson.loads((site / "leaderboard.json").read_bytes())
        page = (site / "index.html").read_text()
        assert "<th>#</th>" not in page and "<th>rank interval</th>" in page
        for board in doc["metrics"]:
            assert all("position" not in r for r in board["rows"])
            shown = re.findall(r'<td data-key="next"><a href="([^"]+)">([^<]+)</a>', page)
            assert [w for _, w in shown] == [VERDICT_WORDS[p["verdict"]] for p in board["adjacent_pairs"]]
            for p in board["adjacent_pairs"]:
                assert f"{VERDICT_WORDS[p['verdict']]} (" in (site / p["page"]).read_text()
        if out is not None:
            assert not re.search(r"^\s*\d+\.\s", out, re.M)
    helps = [CliRunner().invoke(cli, [c, "--help"]).output for c in ("compare", "leaderboard")]
    assert "cannot separate at this n" in helps[0] and "with this many units" not in " ".join(helps)


def test_with_intersection_intervals_and_standard_errors_are_those_of_the_common_items(tmp_path):
    """A model lacking two samples: --intersection compares on the 28 samples every model has, and each
    result's interval and standard error are computed on them (equal to a run on records holding only
    those samples), never dropped."""
    rng = __import__("random").Random(5)
    scores = {m: [int(rng.random() < p) for _ in range(30)] for m, p in (("alpha", 0.8), ("beta", 0.5),
                                                                         ("gamma", 0.3))}
    write_records(tmp_path / "all", scores)
    lacking = tmp_path / "all" / "gamma_samples.jsonl"
    lacking.write_text("".join(lacking.read_text().splitlines(keepends=True)[:28]))
    write_records(tmp_path / "common", {m: v[:28] for m, v in scores.items()})
    assert leaderboard(tmp_path / "all", "--output-dir", tmp_path / "s1", "--metric", METRIC)[0] == 2
    code, text = leaderboard(tmp_path / "all", "--output-dir", tmp_path / "s1", "--metric", METRIC, "--intersection")
    assert code == 0, text
    code, text = leaderboard(tmp_path / "common", "--output-dir", tmp_path / "s2", "--metric", METRIC)
    assert code == 0, text
    got, want = (orjson.loads((tmp_path / s / "leaderboard.json").read_bytes())["metrics"][0]["rows"]
                 for s in ("s1", "s2"))
    assert got[0]["ci95"] is not None and got[0]["standard_error"] is not None
    for g, w in zip(got, want, strict=True):
        assert g["label"] == w["label"] and g["value"] == pytest.approx(w["value"], abs=1e-12)
        assert g["ci95"] == pytest.approx(w["ci95"], abs=1e-12) and g["ci_method"] == w["ci_method"] == "exact_mid_p"
        assert g["standard_error"] == pytest.approx(w["standard_error"], abs=1e-12)
    # compare's own leaderboard gives the same intervals
    res = CliRunner().invoke(cli, ["compare", str(tmp_path / "all"), "--metric", METRIC, "--intersection",
                                   "--output", str(tmp_path / "c.json")], env=ENV)
    assert res.exit_code == 0, res.output
    standing = orjson.loads((tmp_path / "c.json").read_bytes())["leaderboards"][METRIC]
    assert [s["ci95"] for s in standing] == [r["ci95"] for r in got]


#: every element of the page wider than its box, and the page itself (what scrolls sideways)
WIDE = """() => {
  const wide = [...document.querySelectorAll('body *')]
    .filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
    .map((e) => `${e.tagName}.${e.className} ${e.scrollWidth} px in ${e.clientWidth} px`);
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) wide.push(`the page: ${page.scrollWidth} px in ${page.clientWidth} px`);
  return wide;
}"""

#: per forest plot: its box, each text's box (what the browser draws), the svg's attributes
FIGURE = """() => [...document.querySelectorAll('svg.forest')].map((svg) => ({
  box: svg.getBoundingClientRect().toJSON(),
  figure: svg.closest('figure').getBoundingClientRect().toJSON(),
  width: svg.getAttribute('width'), viewBox: svg.getAttribute('viewBox'),
  texts: [...svg.querySelectorAll('text')].map((t) => ({cls: t.getAttribute('class'), text: t.textContent,
                                                        box: t.getBoundingClientRect().toJSON()})),
}))"""


@pytest.mark.parametrize("width", [900, 1400])
def test_the_page_is_readable_at_any_width(browser, fifty, hand, width):
    """At 900 px (and 1,400) nothing scrolls sideways on the index or a pair page; with 50 models, some with
    long names, every label of the forest plot stays inside the figure; the plot scales to its container
    (a viewBox, no width in pixels), with round ticks inside [0, 1] and an axis title naming the metric."""
    for site in (fifty["site"], hand):
        doc = orjson.loads((site / "leaderboard.json").read_bytes())
        for name in ("index.html", doc["metrics"][0]["adjacent_pairs"][0]["page"]):
            page = browser.new_page(viewport={"width": width, "height": 900})
            try:
                page.goto((site / name).as_uri())
                assert page.evaluate(WIDE) == [], (site, name)
                if name != "index.html":
                    continue
                (fig,) = page.evaluate(FIGURE)
            finally:
                page.close()
            assert fig["width"] is None and fig["viewBox"]
            box, outer = fig["box"], fig["figure"]
            assert box["width"] <= outer["width"] and box["right"] <= width
            for t in fig["texts"]:
                b = t["box"]
                assert box["left"] - 0.5 <= b["left"] and b["right"] <= box["right"] + 0.5, (t, box)
                assert box["top"] - 0.5 <= b["top"] and b["bottom"] <= box["bottom"] + 0.5, (t, box)
            ticks = [float(t["text"]) for t in fig["texts"] if t["cls"] == "tick"]
            assert len(ticks) >= 3 and all(0.0 <= v <= 1.0 for v in ticks)
            steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
            assert len(steps) == 1 and steps.pop() in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5), ticks
            assert all(float(t["text"]) == round(float(t["text"]), 2) for t in fig["texts"] if t["cls"] == "tick")
            (title,) = [t["text"] for t in fig["texts"] if t["cls"] == "axis-title"]
            assert title.startswith(METRIC)
            labels = [t["text"] for t in fig["texts"] if t["cls"] == "label"]
            assert len(labels) == len(doc["metrics"][0]["rows"])


def test_a_site_that_cannot_be_written_whole_is_not_written_at_all(tmp_path):
    """The kernel refuses a file past RLIMIT_FSIZE (EFBIG, the path of a full disk): one line, exit 2, and
    the folder is as it was (absent, or the earlier site unchanged)."""
    import os
    import resource
    import signal
    import subprocess
    import sys

    write_records(tmp_path / "in", SCORES, errored={"beta": 6})

    def limited(limit: int, target: Path) -> subprocess.CompletedProcess:
        def apply() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        return subprocess.run([sys.executable, "-c", "from benchscore.cli import main; main()", "leaderboard",
                               str(tmp_path / "in"), "--output-dir", str(target), "--metric", METRIC],
                              capture_output=True, text=True, preexec_fn=apply, timeout=300,
                              env=dict(os.environ, **ENV))

    for target in (tmp_path / "new", tmp_path / "earlier"):
        if target.name == "earlier":
            assert limited(64 * 1024 * 1024, target).returncode == 0
            before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()}
        proc = limited(8 * 1024, target)  # index.html is larger than 8 kB
        lines = proc.stderr.splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "File too large" in lines[0], proc.stderr
        assert str(target) in lines[0] and ".tmp" not in lines[0]
        if target.name == "new":
            assert not target.exists()
        else:
            assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier", "in"]
