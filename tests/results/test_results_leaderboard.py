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
        assert r["rank_range"] == [1, 3] and r["letters"] == "a"
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
        assert s["cells"]["letters"] == r["letters"]
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
    # the same statistics as compare: its leaderboard gives the same rank intervals and letters
    res = CliRunner().invoke(cli, ["compare", str(logs["main"]), "--resamples", "200", "--metric", "quiz/match",
                                   "--output", str(tmp_path / "c.json")], env=ENV)
    assert res.exit_code == 0, res.output
    standing = orjson.loads((tmp_path / "c.json").read_bytes())["leaderboards"]["quiz/match"]
    assert [(s["label"], s["rank_range"], s["letters"], s["ci95"]) for s in standing] == [
        (r["label"], r["rank_range"], r["letters"], r["ci95"]) for r in board["rows"]]
