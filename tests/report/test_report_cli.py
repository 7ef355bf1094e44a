"""`benchscore report` and the demo's pages: kinds, refusals, completeness, FAIL reasons, provenance."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from report_helpers import EXAMPLES, invoke, scalars, visible_text

from benchscore.common import html
from benchscore.publish.report import read_outputs

TCS = EXAMPLES / "tcsexam" / "seed-example" / "expected"
MIRA = EXAMPLES / "mira" / "expected"
RXN = EXAMPLES / "rxn" / "expected"


def report(tmp_path: Path, *inputs: Path, name: str = "report.html") -> tuple[str, str]:
    out = tmp_path / name
    result = invoke("report", *map(str, inputs), "--output", str(out))
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8"), result.output


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def write_json(path: Path, doc) -> Path:
    path.write_bytes(orjson.dumps(doc))
    return path


def demo_outputs(demo_out: Path) -> list[Path]:
    """Every demo output the demo's pages draw (the others are inputs and question sets)."""

    paths = sorted(demo_out.rglob("*.json"))
    found = read_outputs([(p, str(p)) for p in paths], strict=False)
    return [o.path for outs in found.values() for o in outs]


@pytest.mark.parametrize(("path", "domain", "kind"), [
    (TCS / "index.json", "tcsexam", "index"),
    (TCS / "maxcut-relative.json", "tcsexam", "solver-score"),
    (MIRA / "score.json", "mira", "score"),
    (MIRA / "public.json", "mira", "public"),
    (RXN / "eval_mc.json", "rxn", "eval"),
    (RXN / "eval_fib.json", "rxn", "eval"),
])
def test_kinds_are_detected_from_metric_id_and_shape(tmp_path, path, domain, kind):
    _, printed = report(tmp_path, path)
    assert f"{domain} {kind}: {path}" in printed


def test_every_swarm_kind_is_detected(tmp_path, demo_out, swarm_outputs):
    acceptance = demo_out / "swarm" / "acceptance"
    inputs = [demo_out / "swarm" / "run-report.json", demo_out / "swarm" / "audit.json",
              acceptance / "acceptance-matrix.json", acceptance / "acceptance-matrix.model-io.json",
              swarm_outputs["L01"], swarm_outputs["L02"]]
    _, printed = report(tmp_path, *inputs)
    for kind, path in zip(["run", "audit", "acceptance-matrix", "model-io", "L01", "L02"], inputs, strict=True):
        assert f"swarm {kind}: {path}" in printed


@pytest.mark.parametrize("doc", [
    {"a": 1},
    [1, 2],
    {"provenance": {"metric_id": "tcsexam-reference"}, "tasks": {}},
    {"provenance": {"metric_id": "rxn-testsetV6-multiple_choice"}, "samples": []},  # a question set, not a result
])
def test_an_output_of_unknown_kind_is_refused_with_one_line(tmp_path, doc):
    good = MIRA / "score.json"
    bad = write_json(tmp_path / "other.json", doc)
    out = tmp_path / "r.html"
    line = one_line_error(invoke("report", str(good), str(bad), "--output", str(out)))
    assert str(bad) in line and "not an output the report knows" in line
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))


def test_the_demo_inputs_and_question_sets_are_refused(tmp_path, demo_out):
    for path in (demo_out / "mira" / "contract.json", next((demo_out / "rxn").rglob("multiple_choice_*.json"))):
        one_line_error(invoke("report", str(path), "--output", str(tmp_path / "r.html")))


def test_bad_json_and_missing_options_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1, "a": 2}')
    assert "duplicate key" in one_line_error(invoke("report", str(bad), "--output", str(tmp_path / "r.html")))
    assert "--output" in one_line_error(invoke("report", str(MIRA / "score.json")))
    one_line_error(invoke("report", "--output", str(tmp_path / "r.html")))


def test_the_report_is_reproducible(tmp_path, pinned_time):
    inputs = [TCS / "index.json", MIRA / "score.json", RXN / "eval_mc.json"]
    one, _ = report(tmp_path, *inputs, name="one.html")
    two, _ = report(tmp_path, *inputs, name="two.html")
    assert one == two


def test_every_value_of_every_demo_output_is_on_its_page(demo_out):
    """Results are for people: every number (and every other value) an output holds is visible."""
    pages: dict[str, str] = {}
    for path in demo_outputs(demo_out):
        domain = path.relative_to(demo_out).parts[0]
        if domain not in pages:
            pages[domain] = visible_text((demo_out / f"{domain}.html").read_text(encoding="utf-8"))
        doc = orjson.loads(path.read_bytes())
        for value in scalars(doc, skip=frozenset({"credentials"})):
            shown = " ".join(html.fmt(value).split())
            assert shown in pages[domain], (path, value)


def test_every_figure_names_its_sources_with_sha256(demo_out):
    from hashlib import sha256

    for page in demo_out.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        for figure in re.findall(r"<figure>.*?</figure>", text, re.S):
            assert "<svg" in figure and "Drawn from" in figure
            hashes = re.findall(r"sha256 <code>([0-9a-f]{64})</code>", figure)
            assert hashes, page
    mira = (demo_out / "mira.html").read_text(encoding="utf-8")
    assert sha256((demo_out / "mira" / "score.json").read_bytes()).hexdigest() in mira
    assert "mira:mira-core-demo@0.1/score" in mira


def test_the_demo_writes_an_index_and_one_page_per_domain(demo_out):
    index = (demo_out / "index.html").read_text(encoding="utf-8")
    for domain in ("tcsexam", "mira", "rxn", "swarm"):
        assert f'href="{domain}.html"' in index
        page = (demo_out / f"{domain}.html").read_text(encoding="utf-8")
        assert page.count("<figure>") >= 2 and 'href="index.html"' in page
        assert "<script" not in page


def test_tcsexam_marks_incomplete_models_and_lists_missing_tasks(demo_out):
    page = (demo_out / "tcsexam.html").read_text(encoding="utf-8")
    text = visible_text(page)
    assert "cohort status: incomplete" in text
    assert "construction/demo-cons-2" in text and "conjecture/demo-conj-5" in text  # the missing tasks
    assert "judge crashed; re-run as attempt 3" in text  # an excluded attempt's reason
    assert "excluded without a recorded reason" in text
    assert "Per-instance z against the fixed reference" in text


def test_mira_shows_deviations_first_and_never_copies_credentials(demo_out):
    page = (demo_out / "mira.html").read_text(encoding="utf-8")
    score = orjson.loads((demo_out / "mira" / "score.json").read_bytes())
    article = page.split("mira/score.json: score", 1)[1]
    deviation = score["deviations"][0]["text"]
    assert html.esc(deviation) in article.split("<figure>", 1)[0]  # before the first figure
    contract = orjson.loads((demo_out / "mira" / "contract.json").read_bytes())
    secrets = [s for case in contract["cases"] for s in case.get("credentials", {}).values()]
    assert secrets
    for secret in secrets:
        assert secret not in page
    incomplete = page.split("mira/score_incomplete.json: score", 1)[1]
    assert "case ADV-03 incomplete" in incomplete
    assert "Each repetition&#x27;s time against T_soft and T_hard." in page


def test_swarm_shows_the_reason_next_to_every_fail(demo_out):
    page = (demo_out / "swarm.html").read_text(encoding="utf-8")
    matrix = orjson.loads((demo_out / "swarm" / "acceptance" / "acceptance-matrix.json").read_bytes())
    checks_table = page.split("with the reason for every FAIL</h4>", 1)[1].split("</table>", 1)[0]
    rows = {re.sub(r"<[^>]+>", "", m.group(1)): m.group(0)
            for m in re.finditer(r"<tr><th scope=\"row\">(.*?)</th>.*?</tr>", checks_table, re.S)}
    fails = [c for c in matrix["checks"] if c["verdict"] == "FAIL"]
    assert fails
    for check in fails:
        row = rows[check["id"]]
        assert "fail" in row
        reason = check.get("reason") or check["evidence"].get("reason")
        assert (html.prose(reason) in row) if reason else ("no reason recorded in the output" in row)
    # the demo's swarm outputs carry what the figures need: P_t from the ledger, L01, L02 windows
    for title in ("Pheromone P_t over time, from the ledger.", "L01: throughput",
                  "L02: tokens per minute window against the target.", "Consensus: leader share and margin"):
        assert title in page, title
    assert "threshold / min_margin lines for" not in page
    # a replayed S08 passed its checks but counts 0: marked as a fail where its reason is the row's
    # only verdict (compliance inputs), said once where the row already says FAIL (closed loop)
    text = re.sub(r"<[^>]+>", "", page)
    why = ("replay (local OpenAI-compatible test server with a deterministic responder): its checks passed, but "
           "only a live run against a real gateway counts")
    assert f"FAIL {why}" in text
    assert f"FAIL {why}" in text.split("S08_model_io_report_audit", 1)[1].split("\n\n")[0]
    assert "FAIL FAIL" not in " ".join(text.split())


def test_what_an_output_does_not_carry_is_said_not_drawn(tmp_path):
    doc = orjson.loads((RXN / "eval_mc.json").read_bytes())
    del doc["per_sample"]  # an eval output written before the per-sample records
    page, _ = report(tmp_path, write_json(tmp_path / "eval.json", doc))
    assert "NOT DRAWN" in page and "distribution of per-sample relative scores" in page


def test_rxn_draws_the_distribution_of_the_per_sample_records(tmp_path, demo_out):
    page, _ = report(tmp_path, RXN / "eval_mc.json")
    assert "Distribution of per-sample relative scores." in page
    assert "distribution of per-sample relative scores:" not in page  # no NOT DRAWN line
    demo_page = (demo_out / "rxn.html").read_text(encoding="utf-8")
    assert "Distribution of per-sample relative scores." in demo_page and "NOT DRAWN" not in demo_page
    doc = orjson.loads((RXN / "eval_fib.json").read_bytes())
    doc["per_sample"] = {"all_blank": [{"id": f"s{i}", "relative_score": i / 10, "status": "scored"}
                                       for i in range(11)] + [{"id": "u", "relative_score": None, "status": "unhit"}]}
    page, _ = report(tmp_path, write_json(tmp_path / "eval.json", doc))  # an unhit record has no score to draw
    assert "Distribution of per-sample relative scores." in page and "unhit" in page


def test_swarm_draws_threshold_lines_windows_throughput_and_points_when_carried(tmp_path, demo_out, swarm_outputs):
    matrix = orjson.loads((demo_out / "swarm" / "acceptance" / "acceptance-matrix.json").read_bytes())
    plain = copy.deepcopy(matrix)  # an older matrix: consensus rounds without threshold / min_margin
    for run in plain.get("consensus", {}).values():
        run.pop("threshold", None)
        run.pop("min_margin", None)
    # the report validates every output against its format first (issue 15, point 8): the consensus
    # format requires threshold, so such a matrix is refused in one line naming the field
    line = one_line_error(invoke("report", str(write_json(tmp_path / "m0.json", plain)), "--output",
                                 str(tmp_path / "plain.html")))
    assert "field 'consensus.S07.threshold': Field required" in line
    richer = copy.deepcopy(matrix)  # the rounds come from the consensus block, not from the checks' evidence
    for check in richer["checks"]:
        check["evidence"].pop("rounds", None)
    page, _ = report(tmp_path, write_json(tmp_path / "m1.json", richer), name="rich.html")
    assert "threshold / min_margin lines for" not in page and "Consensus: leader share and margin" in page
    # the matrix's L02 evidence carries every minute window, so the demo page draws each of them
    l02_evidence = next(c["evidence"] for c in matrix["checks"] if c["id"] == "L02.L02_PASS")
    assert l02_evidence["tokens_by_minute"] and "every minute window:" not in (demo_out / "swarm.html").read_text()

    l01 = orjson.loads(swarm_outputs["L01"].read_bytes())
    l01["completions_per_second"] = [50, 80, 70]
    l02 = orjson.loads(swarm_outputs["L02"].read_bytes())
    l02["windows"] = [{"minute": 0, "reserved_tokens": 3000, "actual_tokens": 2900, "target_tpm": 3000}]
    audit = orjson.loads(swarm_outputs["audit"].read_bytes())
    audit["pheromone_points"] = {"1": [{"seq": 1, "P_t": 0.0, "event": "create"},
                                       {"seq": 9, "P_t": 0.5, "event": "complete"}]}
    page, _ = report(tmp_path, *(write_json(tmp_path / f"{n}.json", d) for n, d in
                                 (("l01", l01), ("l02", l02), ("audit", audit))), name="scale.html")
    assert "L01: throughput over the run." in page and "throughput over time:" not in page
    assert "reserved_tokens" in page and "every minute window:" not in page
    assert "x is the ledger seq" in page and "P_t against ledger time:" not in page


def test_the_real_swarm_outputs_draw_l01_l02_and_pt(tmp_path, swarm_outputs):
    page, _ = report(tmp_path, swarm_outputs["L01"], swarm_outputs["L02"], swarm_outputs["audit"])
    for title in ("L01: throughput", "L02: tokens per minute window against the target.",
                  "Pheromone P_t over time, from the ledger."):
        assert title in page


def test_help_does_not_load_matplotlib():
    code = ("import sys\nfrom benchscore.cli import main\nsys.argv = ['benchscore', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nassert 'matplotlib' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_ids_are_unique_on_every_page_and_a_file_given_twice_is_one_output(tmp_path, demo_out):
    page, printed = report(tmp_path, MIRA / "score.json", MIRA / "score.json", TCS / "index.json")
    assert printed.count("mira score:") == 1
    for text in [page, *(p.read_text(encoding="utf-8") for p in demo_out.glob("*.html"))]:
        ids = re.findall(r'\bid="([^"]+)"', text)
        assert len(ids) == len(set(ids))


def _spoiled(path: Path, change) -> dict:
    doc = orjson.loads(path.read_bytes())
    change(doc)
    return doc


@pytest.mark.parametrize(("source", "change", "field"), [
    (TCS / "maxcut-relative.json", lambda d: d["instances"].update({"example-1": "x"}), "instances.example-1"),
    (TCS / "index.json", lambda d: d["models"].update({"my-model": 5}), "models.my-model"),
    (MIRA / "score.json", lambda d: d["cases"].__setitem__(0, 5), "cases[0]"),
    (MIRA / "public.json", lambda d: d["cases"].__setitem__(0, 5), "cases[0]"),
    (RXN / "eval_mc.json", lambda d: d.update(overall=3), "overall"),
    (RXN / "eval_fib.json", lambda d: d["per_dataset"].update({"x": [1]}), "per_dataset.x"),
])
def test_an_output_of_the_wrong_structure_is_one_line_naming_file_and_field(tmp_path, source, change, field):
    """Issue 15, point 8: each was an AttributeError/TypeError traceback from the drawing code."""
    bad = write_json(tmp_path / source.name, _spoiled(source, change))
    out = tmp_path / "r.html"
    line = one_line_error(invoke("report", str(bad), "--output", str(out)))
    assert line.startswith(f"error: {bad}: field '{field}'"), line
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [source.name]


def test_every_swarm_kind_is_validated_before_it_is_drawn(tmp_path, demo_out, swarm_outputs):
    acceptance = demo_out / "swarm" / "acceptance"
    cases = [
        (swarm_outputs["L02"], lambda d: d["windows"].__setitem__(0, {"minute": {}}), "windows[0]"),
        (swarm_outputs["L01"], lambda d: d.update(agent_count="many"), "agent_count"),
        (demo_out / "swarm" / "run-report.json", lambda d: d.update(converged=[1]), "converged"),
        (demo_out / "swarm" / "audit.json", lambda d: d.update(violations=7), "violations"),
        (acceptance / "acceptance-matrix.json", lambda d: d["scenarios"].update({next(iter(d["scenarios"])): 5}),
         "scenarios."),
        (acceptance / "acceptance-matrix.model-io.json", lambda d: d["records"].__setitem__(0, "x"), "records[0]"),
    ]
    for source, change, field in cases:
        bad = write_json(tmp_path / source.name, _spoiled(source, change))
        line = one_line_error(invoke("report", str(bad), "--output", str(tmp_path / "r.html")))
        assert line.startswith(f"error: {bad}: field '{field}"), line
    assert not (tmp_path / "r.html").exists()


def test_consensus_rounds_in_free_form_evidence_that_are_not_numbers_are_not_drawn(tmp_path, demo_out):
    """Found by the fuzz test: a check's evidence is free-form (no format checks it), and a round whose
    leader_share was a string made the consensus figure a TypeError traceback; such rounds are not drawn."""
    matrix = orjson.loads((demo_out / "swarm" / "acceptance" / "acceptance-matrix.json").read_bytes())
    matrix.pop("consensus", None)
    spoiled = 0
    for check in matrix["checks"]:
        for r in check["evidence"].get("rounds") or []:
            r["leader_share"] = "x" * 300
            spoiled += 1
    assert spoiled
    page, _ = report(tmp_path, write_json(tmp_path / "m.json", matrix))
    assert "Consensus: leader share and margin" not in page
