"""CLI: builds on every bundled dataset, byte-identical output, stand-alone evaluators agree, bad input exits 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.rxn.build import FIB_TYPES, MC_TYPES
from benchscore.rxn.cli import demo

EPOCH = "1767225600"
REPO = Path(__file__).resolve().parents[2]


def run(*args, expect=0):
    result = CliRunner().invoke(cli, ["rxn", *map(str, args)], env={"SOURCE_DATE_EPOCH": EPOCH})
    assert result.exit_code == expect, (result.output, result.stderr if result.stderr_bytes else "")
    return result


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    out = {}
    for name in ("a", "b"):
        root = tmp_path_factory.mktemp(name)
        run("build-mc", "--output-dir", root)
        run("build-fib", "--output-dir", root)
        out[name] = root
    return out


def _folder(root: Path, kind: str) -> Path:
    (folder,) = root.glob(f"*_{kind}")
    return folder


def test_build_folders_are_complete(builds):
    mc = _folder(builds["a"], "multiple_choice")
    assert mc.name == "20260101_000000_multiple_choice"
    for q in MC_TYPES:
        for name in (f"multiple_choice_{q}.json", f"prompt_{q}.txt", f"example_prediction_{q}.json"):
            assert (mc / name).is_file(), name
    fib = _folder(builds["a"], "fill_in_blank")
    for q in FIB_TYPES:
        assert (fib / f"fill_in_blank_{q}.json").is_file()
    for folder, script in ((mc, "evaluate_multiple_choice.py"), (fib, "evaluate_fill_in_blank.py")):
        for name in (script, "rxn_metrics.py", "rxn_standalone.py", "README.md", "report.md"):
            assert (folder / name).is_file(), name
        report = (folder / "report.md").read_text()
        for needed in ("## Sub-datasets", "## Sources", "## Conventions", "## Commands", "`trace`", ">20:1",
                       "10.1126/science.aar5169", "skipped"):
            assert needed in report, needed
        doc = json.loads((folder / f"{folder.name.split('_', 2)[2]}_{(MC_TYPES if 'multiple' in folder.name else FIB_TYPES)[0]}.json").read_text())
        assert doc["provenance"]["seed"] == 20260424 and doc["provenance"]["created_at"] == "2026-01-01T00:00:00Z"
        assert len(doc["provenance"]["inputs"]) == 5


def test_readme_snapshot_is_the_readme_section(builds):
    section = (REPO / "src" / "benchscore" / "rxn" / "README.md").read_text()
    assert section.startswith("# rxn: reaction-condition testset V6")
    assert section == (REPO / "docs" / "rxn.md").read_text()
    assert (_folder(builds["a"], "multiple_choice") / "README.md").read_text() == section


def test_same_inputs_and_seed_give_byte_identical_builds(builds):
    for kind in ("multiple_choice", "fill_in_blank"):
        a, b = _folder(builds["a"], kind), _folder(builds["b"], kind)
        names = sorted(p.name for p in a.iterdir())
        assert names == sorted(p.name for p in b.iterdir())
        for name in names:
            assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_datasets_validate_against_their_formats(builds):
    from benchscore.rxn.formats import FibDataset, McDataset

    for q in MC_TYPES:
        McDataset.model_validate_json((_folder(builds["a"], "multiple_choice") / f"multiple_choice_{q}.json").read_bytes())
    for q in FIB_TYPES:
        FibDataset.model_validate_json((_folder(builds["a"], "fill_in_blank") / f"fill_in_blank_{q}.json").read_bytes())


def _standalone(folder: Path, script: str, *args) -> subprocess.CompletedProcess:
    # -I -S: isolated, no site-packages: only the standard library is importable
    return subprocess.run([sys.executable, "-I", "-S", script, *map(str, args)], cwd=folder, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(("kind", "types", "script", "command"), [
    ("multiple_choice", MC_TYPES, "evaluate_multiple_choice.py", "eval-mc"),
    ("fill_in_blank", FIB_TYPES, "evaluate_fill_in_blank.py", "eval-fib"),
])
def test_standalone_evaluators_match_benchscore(builds, tmp_path, kind, types, script, command):
    folder = _folder(builds["a"], kind)
    for q in types:
        dataset, pred = folder / f"{kind}_{q}.json", folder / f"example_prediction_{q}.json"
        proc = _standalone(folder, script, "--dataset", dataset.name, "--prediction", pred.name)
        assert proc.returncode == 0, proc.stderr
        mine = json.loads(proc.stdout)
        out = tmp_path / f"{q}.json"
        run(command, "--dataset", dataset, "--prediction", pred, "--output", out)
        theirs = json.loads(out.read_text())
        assert mine["per_dataset"] == theirs["per_dataset"]
        assert mine["overall"] == theirs["overall"]
        assert theirs["per_dataset"][q]["num_samples"] > 0
        assert "provenance" in theirs
    # several datasets at once, one prediction file covering them all
    merged = {}
    for q in types:
        merged.update(json.loads((folder / f"example_prediction_{q}.json").read_text()))
    (tmp_path / "all.json").write_text(json.dumps(merged))
    args = [a for q in types for a in ("--dataset", folder / f"{kind}_{q}.json")] + ["--prediction", tmp_path / "all.json"]
    proc = _standalone(folder, script, *args)
    run(command, *args, "--output", tmp_path / "all_out.json")
    theirs = json.loads((tmp_path / "all_out.json").read_text())
    assert json.loads(proc.stdout)["overall"] == theirs["overall"]
    assert theirs["overall"]["num_samples"] == sum(v["num_samples"] for v in theirs["per_dataset"].values())


def _one_line_exit_2(result):
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_bad_table_files_exit_2_and_write_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"tables": [}')
    out = tmp_path / "out"
    _one_line_exit_2(CliRunner().invoke(cli, ["rxn", "build-mc", "--tables", str(bad), "--output-dir", str(out)]))
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"tables": [{
        "table_id": "t", "source": {"dataset": "d"}, "reaction": {"s": "C"}, "condition_keys": ["solvent"],
        "yield_measure": "yield", "rows": [{"conditions": {"solvent": "A", "base": "B"}, "yield": 5}]}]}))
    r = CliRunner().invoke(cli, ["rxn", "build-fib", "--tables", str(unknown), "--output-dir", str(out)])
    _one_line_exit_2(r)
    assert "unknown condition key 'base'" in r.stderr
    assert not out.exists()


def test_same_folder_twice_is_refused(tmp_path):
    run("build-fib", "--bundled", "deoxyfluorination", "--output-dir", tmp_path)
    r = CliRunner().invoke(cli, ["rxn", "build-fib", "--bundled", "deoxyfluorination", "--output-dir", str(tmp_path)],
                           env={"SOURCE_DATE_EPOCH": EPOCH})
    _one_line_exit_2(r)


def test_metadata_csv_sets_dois(tmp_path):
    meta = tmp_path / "metadata.csv"
    meta.write_text("file_name,doi\nCernak_cleaned.csv,10.9999/cernak\n")
    run("build-fib", "--bundled", "cernak", "--metadata", meta, "--output-dir", tmp_path)
    doc = json.loads((_folder(tmp_path, "fill_in_blank") / "fill_in_blank_all_blank.json").read_text())
    assert {s["meta"]["source"]["doi"] for s in doc["samples"]} == {"10.9999/cernak"}
    assert "metadata/metadata.csv" in doc["provenance"]["inputs"]


@pytest.mark.parametrize(("kind", "command", "body", "needle"), [
    ("multiple_choice", "eval-mc", '{"%s": 1, "%s": 2}', "duplicate key"),
    ("multiple_choice", "eval-mc", '{"nope": 1}', "not a sample id"),
    ("multiple_choice", "eval-mc", "[1, 2]", "expected a JSON object"),
    ("multiple_choice", "eval-mc", '{"%s": 1', "JSON"),
    ("fill_in_blank", "eval-fib", '{"nope": {"base": 0}}', "not a sample id"),
    ("fill_in_blank", "eval-fib", '{"%s": {"base": 0}', "JSON"),
])
def test_bad_predictions_exit_2_and_write_nothing(builds, tmp_path, kind, command, body, needle):
    folder = _folder(builds["a"], kind)
    q = (MC_TYPES if kind == "multiple_choice" else FIB_TYPES)[0]
    dataset = folder / f"{kind}_{q}.json"
    sid = json.loads(dataset.read_text())["samples"][0]["id"]
    pred = tmp_path / "pred.json"
    pred.write_text(body.replace("%s", sid))
    out = tmp_path / "result.json"
    r = CliRunner().invoke(cli, ["rxn", command, "--dataset", str(dataset), "--prediction", str(pred),
                                 "--output", str(out)])
    _one_line_exit_2(r)
    assert needle in r.stderr
    assert not out.exists()
    script = "evaluate_multiple_choice.py" if kind == "multiple_choice" else "evaluate_fill_in_blank.py"
    proc = _standalone(folder, script, "--dataset", dataset.name, "--prediction", pred, "--output", out)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and needle in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(("kind", "command", "answer"), [
    ("multiple_choice", "eval-mc", "2"),
    ("multiple_choice", "eval-mc", "the second option"),
    ("multiple_choice", "eval-mc", 1.0),
    ("multiple_choice", "eval-mc", {"ligand": 1}),
    ("fill_in_blank", "eval-fib", "XPhos"),
    ("fill_in_blank", "eval-fib", 1),
    ("fill_in_blank", "eval-fib", "ligand"),
])
def test_a_free_text_answer_is_invalid_and_the_file_is_scored(builds, tmp_path, kind, command, answer):
    """issue 9 item 12: a non-integer answer counts in num_invalid; the rest of the file is still scored,
    by benchscore and by the build folder's stand-alone evaluator alike."""
    folder = _folder(builds["a"], kind)
    q = (MC_TYPES if kind == "multiple_choice" else FIB_TYPES)[0]
    dataset = folder / f"{kind}_{q}.json"
    preds = json.loads((folder / f"example_prediction_{q}.json").read_text())
    first = next(iter(preds))
    if kind == "fill_in_blank" and answer == "XPhos":
        answer = {k: "XPhos" for k in preds[first]}  # the issue's {"ligand": "XPhos"}: text instead of an index
    baseline = tmp_path / "baseline.json"
    run(command, "--dataset", dataset, "--prediction", folder / f"example_prediction_{q}.json", "--output", baseline)
    before = json.loads(baseline.read_text())["overall"]
    preds[first] = answer
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(preds))
    out = tmp_path / "result.json"
    r = run(command, "--dataset", dataset, "--prediction", pred, "--output", out)
    after = json.loads(out.read_text())["overall"]
    assert after["num_invalid"] == before["num_invalid"] + 1
    assert after["num_samples"] == before["num_samples"] and after["num_missing"] == before["num_missing"]
    assert "num_invalid" in r.output
    script = "evaluate_multiple_choice.py" if kind == "multiple_choice" else "evaluate_fill_in_blank.py"
    proc = _standalone(folder, script, "--dataset", dataset.name, "--prediction", pred)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["overall"] == after


def test_duplicate_sample_ids_in_datasets_exit_2(builds, tmp_path):
    folder = _folder(builds["a"], "multiple_choice")
    doc = json.loads((folder / "multiple_choice_all_varying.json").read_text())
    doc["samples"].append(doc["samples"][0])
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(doc))
    pred = tmp_path / "p.json"
    pred.write_text("{}")
    r = CliRunner().invoke(cli, ["rxn", "eval-mc", "--dataset", str(dup), "--prediction", str(pred)])
    _one_line_exit_2(r)
    assert "duplicate sample id" in r.stderr


def test_tampered_dataset_exits_2(builds, tmp_path):
    folder = _folder(builds["a"], "multiple_choice")
    doc = json.loads((folder / "multiple_choice_all_varying.json").read_text())
    doc["samples"][0]["meta"]["option_relative_scores"].append(0.5)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    pred = tmp_path / "p.json"
    pred.write_text("{}")
    _one_line_exit_2(CliRunner().invoke(cli, ["rxn", "eval-mc", "--dataset", str(bad), "--prediction", str(pred)]))


def test_console_script_subprocess(tmp_path):
    exe = Path(sys.executable).parent / "benchscore"
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    p = subprocess.run([str(exe), "rxn", "build-fib", "--bundled", "borylation", "--output-dir", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    folder = _folder(tmp_path, "fill_in_blank")
    p = subprocess.run([str(exe), "rxn", "eval-fib", "--dataset", str(folder / "fill_in_blank_all_blank.json"),
                        "--prediction", str(folder / "example_prediction_all_blank.json")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "hit_rate" in p.stdout
    p = subprocess.run([str(exe), "rxn", "eval-fib", "--dataset", str(tmp_path / "missing.json"),
                        "--prediction", str(folder / "example_prediction_all_blank.json")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "file not found" in p.stderr


def test_demo_runs_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    demo(tmp_path)
    demo(tmp_path)
    result = json.loads((tmp_path / "eval_fib_all_blank.json").read_text())
    assert result["overall"]["num_samples"] > 0
    assert (tmp_path / "eval_mc_all_varying.json").is_file()


def test_schemas_and_datasets_command():
    for name in ("rxn-condition-tables", "rxn-multiple-choice", "rxn-fill-in-blank", "rxn-mc-prediction",
                 "rxn-fib-prediction", "rxn-evaluation"):
        r = CliRunner().invoke(cli, ["schema", name])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)
    r = run("datasets")
    assert "denmark_cpa" in r.output


def test_readme_conventions_table_is_the_conventions_module():
    from benchscore.rxn.conventions import conventions_markdown

    readme = (REPO / "docs" / "rxn.md").read_text()
    assert conventions_markdown() in readme


def test_literature_csv_conversion(tmp_path):
    out = tmp_path / "t.json"
    run("convert-csv", "--csv", REPO / "examples" / "rxn" / "literature_tables.csv", "--output", out)
    doc = json.loads(out.read_text())
    rows = doc["tables"][0]["rows"]
    got = {(r["yield_raw"], r["yield"], r["ee_raw"], r["ee"], r["dr_raw"], r["dr"]) for r in rows}
    assert (">99%", 99.5, "\u221285", -85.0, "92:8", 11.5) in got
    assert ("trace", 0.0, "rac", 0.0, "1:1", 1.0) in got
    assert ("n.d.", None, "90", 90.0, "5:1", 5.0) in got
    temps = {r["conditions"]["temperature"] for r in rows}
    assert temps == {"25 °C", "-78 °C", "reflux", "80 °C"}
    assert {r["conditions"]["time"] for r in rows} == {"12 h", "48 h", "16 h", "0.5 h"}


def test_literature_csv_bad_value_names_line_and_field(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("table_id,solvent,yield\nt,THF,85%\nt,DMF,lots\n")
    r = CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(bad), "--output", str(tmp_path / "o.json")])
    _one_line_exit_2(r)
    assert "line 3" in r.stderr and "field 'yield'" in r.stderr
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize(("text", "needle"), [
    ("table_id,reaction.s,solvent,yield\nt,CCO,THF,5\nt,CCN,DMF,6\n", "differs from the first row"),
    ("table_id,solvent,yield\nt,THF,5\nt,THF,6\n", "repeats the condition combination"),
    ("solvent,yield\nTHF,5\n", "table_id"),
    ("table_id,solvent,yield,\nt,THF,5,\nt,DMF,6,\n", "empty column name"),  # a trailing comma
])
def test_literature_csv_inconsistent_tables(tmp_path, text, needle):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    r = CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(bad), "--output", str(tmp_path / "o.json")])
    _one_line_exit_2(r)
    assert needle in r.stderr


def test_literature_csv_not_utf8(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"table_id,solvent,yield\nt,\xff,5\n")
    _one_line_exit_2(CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(bad), "--output",
                                              str(tmp_path / "o.json")]))


@pytest.mark.parametrize(("text", "needle"), [
    ('table_id,solvent,yield\nt,"THF,5\n', "line 2: malformed CSV: unexpected end of data"),  # unterminated quote
    ("table_id,solvent,yield\nt," + "x" * 131_073 + ",5\n", "malformed CSV: field larger than field limit (131072)"),
])
def test_literature_csv_uses_the_shared_reader(tmp_path, text, needle):
    """Issue 15, point 7: both were `_csv.Error` tracebacks with exit 1 (convert-csv had a reader of its own)."""
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    out = tmp_path / "new" / "o.json"
    r = CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(bad), "--output", str(out)])
    _one_line_exit_2(r)
    assert r.stderr.startswith(f"error: {bad}: ") and needle in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_condition_key_with_a_space_builds_and_evaluates(tmp_path):
    # a literature column such as "catalyst loading" is a valid condition key; the sample ids made from it
    # ("single_varying:t1:catalyst loading") must be accepted by eval-mc/eval-fib and the stand-alone scripts
    csv_path = tmp_path / "lit.csv"
    csv_path.write_text("table_id,reaction.substrate,catalyst loading,solvent,yield\n"
                        "t1,CCO,1 mol%,THF,50\nt1,CCO,2 mol%,THF,60\nt1,CCO,1 mol%,DMF,30\nt1,CCO,2 mol%,DMF,20\n")
    tables = tmp_path / "t.json"
    run("convert-csv", "--csv", csv_path, "--output", tables)
    run("build-mc", "--tables", tables, "--output-dir", tmp_path)
    run("build-fib", "--tables", tables, "--output-dir", tmp_path)
    for kind, command, q, script in (("multiple_choice", "eval-mc", "single_varying", "evaluate_multiple_choice.py"),
                                     ("fill_in_blank", "eval-fib", "all_blank", "evaluate_fill_in_blank.py")):
        folder = _folder(tmp_path, kind)
        dataset, pred = folder / f"{kind}_{q}.json", folder / f"example_prediction_{q}.json"
        ids = json.loads(pred.read_text())
        assert ids
        if kind == "multiple_choice":
            assert "single_varying:t1:catalyst loading" in ids
        out = tmp_path / f"{kind}.json"
        run(command, "--dataset", dataset, "--prediction", pred, "--output", out)
        proc = _standalone(folder, script, "--dataset", dataset.name, "--prediction", pred)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["overall"] == json.loads(out.read_text())["overall"]


@pytest.mark.parametrize(("kind", "types", "command"), [
    ("multiple_choice", MC_TYPES, "eval-mc"),
    ("fill_in_blank", FIB_TYPES, "eval-fib"),
])
def test_eval_tables_show_every_number_of_the_json(builds, tmp_path, kind, types, command):
    """issue 10 item 2: every count and metric of the output JSON, per question type and overall, is a row
    of the (piped: plain, untruncated) table."""
    from benchscore.common.terminal import fmt

    folder = _folder(builds["a"], kind)
    merged = {}
    for q in types:
        merged.update(json.loads((folder / f"example_prediction_{q}.json").read_text()))
    (tmp_path / "p.json").write_text(json.dumps(merged))
    out = tmp_path / "o.json"
    args = [a for q in types for a in ("--dataset", folder / f"{kind}_{q}.json")]
    r = run(command, *args, "--prediction", tmp_path / "p.json", "--output", out)
    result = json.loads(out.read_text())
    lines = r.output.splitlines()
    assert lines[1].split() == ["metric", *types, "overall"]
    hist_at = next(i for i, line in enumerate(lines) if line.startswith("per-sample relative scores"))
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:hist_at]}
    # the per-sample records, binned: every sample once, invalid and missing as the metrics count them
    assert lines[hist_at + 1].split() == ["relative", "score", *types]
    # after the histogram: the invalid, unhit and missing answers named by sample id, then where the output went
    named = [i for i, line in enumerate(lines) if line.startswith(("invalid answers", "unhit answers",
                                                                   "missing answers"))]
    hist = [line.rsplit(None, len(types)) for line in lines[hist_at + 2:named[0] if named else -1]]
    for status in ("invalid", "unhit", "missing"):
        ids = [x["id"] for q in types for x in result["per_sample"][q] if x["status"] == status]
        shown = [line for line in lines if line.startswith(f"{status} answers ({len(ids)}, ")]
        assert (len(shown) == 1 and ", ".join(ids[:5]) in shown[0]) if ids else not shown
    assert ([h[0] == "unhit (no score)" for h in hist][-1]) == (kind == "fill_in_blank")
    for k, q in enumerate(types):
        cells = {h[0]: int(h[1 + k]) for h in hist}
        assert sum(cells.values()) == result["per_dataset"][q]["num_samples"] == len(result["per_sample"][q])
        assert cells["invalid (0)"] == result["per_dataset"][q]["num_invalid"]
        assert cells["missing (0)"] == result["per_dataset"][q]["num_missing"]
    columns = [*(result["per_dataset"][q] for q in types), result["overall"]]
    # issue 16: each interval is a row METRIC_ci95 beside the metrics
    cis = [*(result["intervals"]["per_dataset"][q] for q in types), result["intervals"]["overall"]]
    for metric in result["intervals"]["overall"]:
        printed = [line for line in lines if line.startswith(f"{metric}_ci95 ")]
        assert len(printed) == 1
        for c in cis:
            rec = c[metric]
            assert (f"[{fmt(rec['ci95'][0])}, {fmt(rec['ci95'][1])}] {rec['ci_method']}" if rec["ci95"]
                    else f"- ({rec['ci_reason']})") in printed[0]
        del rows[f"{metric}_ci95"]
    chance = [*(result["chance"]["per_dataset"][q] for q in types), result["chance"]["overall"]]
    for metric in ("avg_relative_score", "exact_match_accuracy" if kind == "multiple_choice" else "hit_rate"):
        assert rows.pop(f"{metric}_chance") == [fmt(c[metric]) for c in chance]  # the chance level below it
    assert set(rows) == set(result["overall"])
    for metric in ("num_missing", "num_invalid", "num_samples"):
        assert metric in rows
    assert ("num_without_yield" in rows) == (kind == "multiple_choice")
    assert ("num_unhit" in rows and "num_scored" in rows) == (kind == "fill_in_blank")
    for metric, cells in rows.items():
        assert cells == [fmt(c[metric]) for c in columns], metric
    assert lines[-1] == f"wrote {out}"


def test_build_prints_every_file_it_wrote(tmp_path):
    r = run("build-fib", "--bundled", "cernak", "--output-dir", tmp_path)
    folder = _folder(tmp_path, "fill_in_blank")
    for p in folder.iterdir():
        assert p.name in r.output, p.name
    assert r.output.splitlines()[0] == f"wrote {folder}"
    doc = json.loads((folder / "fill_in_blank_all_blank.json").read_text())
    assert r.output.splitlines()[2].split()[:2] == ["fill_in_blank_all_blank.json", str(len(doc["samples"]))]
    assert "rows left out (no measured outcome): " in r.output


def test_currybo_csvs_are_read_by_the_shared_reader(tmp_path):
    """Found by the fuzz test: a CSV with only its header was a pydantic ValidationError traceback; an
    unterminated quote and a non-finite yield are one line too."""
    from benchscore.rxn.convert_currybo import SPECS

    def folder(doyle: str) -> Path:
        src = tmp_path / f"src{len(list(tmp_path.iterdir()))}"
        src.mkdir()
        for spec in SPECS:
            cols = [c for c, _ in spec.substrates] + [c for c, _ in spec.keys] + [spec.outcome]
            row = ["c1ccccc1"] * len(spec.substrates) + ["CCO"] * len(spec.keys) + ["0.5"]
            text = ",".join(cols) + "\n" + ",".join(row) + "\n"
            (src / spec.file).write_text(doyle.format(header=",".join(cols)) if spec.file == "Doyle_cleaned.csv"
                                         else text)
        return src

    for doyle, needle in (("{header}\n", "Doyle_cleaned.csv: line 2: no rows below the header"),
                          ('{header}\n"c1ccccc1,CCO,CCO,CCO,CCO,0.5\n', "malformed CSV: unexpected end of data"),
                          ("{header}\nc1ccccc1,CCO,CCO,CCO,nan\n", "expected a finite number, got 'nan'")):
        out = tmp_path / "out"
        r = CliRunner().invoke(cli, ["rxn", "convert-currybo", "--source", str(folder(doyle)), "--output-dir", str(out)])
        _one_line_exit_2(r)
        assert needle in r.stderr, r.stderr
        assert not out.exists()
