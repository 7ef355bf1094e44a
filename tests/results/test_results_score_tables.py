"""Tables of per-sample scores (.parquet, .csv, .jsonl: model, sample_id, optional epoch, one numeric column per
metric) as results: recognised by their columns, compared like logs, every refusal one line, verify re-checks."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.results.reading import TABLE, kind_of_file, read

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "examples" / "results" / "logs"
ENV = {"SOURCE_DATE_EPOCH": "1767225600"}


def run(*args, expect=0):
    res = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert res.exit_code == expect, res.output
    return res


def write(path: Path, columns: dict) -> Path:
    """A table in the format its suffix names."""
    table = pa.table(columns)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    elif path.suffix == ".csv":
        pcsv.write_csv(table, path)
    else:
        path.write_text("".join(json.dumps(dict(zip(columns, row, strict=True))) + "\n"
                                for row in zip(*columns.values(), strict=True)))
    return path


def board(models=("m1", "m2", "m3"), n=30, epochs=2):
    """Three models of different skill on ``n`` samples x ``epochs``: a 0/1 metric and a continuous one."""
    cols = {"model": [], "sample_id": [], "epoch": [], "acc": [], "f1": []}
    for k, m in enumerate(models):
        for i in range(n):
            for e in range(1, epochs + 1):
                cols["model"].append(m)
                cols["sample_id"].append(f"s{i:03d}")
                cols["epoch"].append(e)
                cols["acc"].append(int((i * 7 + e * 3 + k * 11) % 10 < 3 + 3 * k))
                cols["f1"].append(round(((i * 13 + e + k * 5) % 17) / 17 + 0.05 * k, 4))
    return cols


def refused(res, *words):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# --- recognised by its columns ----------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_a_table_is_recognised_by_its_columns_and_compared(tmp_path, suffix):
    table = write(tmp_path / f"bench{suffix}", board())
    assert kind_of_file(table) == TABLE
    other = write(tmp_path / f"other{suffix}", {"name": ["a"], "sample_id": ["x"], "acc": [1]})  # no model column
    assert kind_of_file(other) is None
    out = tmp_path / "C.json"
    run("compare", table, "--output", out, "--resamples", "200")
    doc = json.loads(out.read_text())
    assert doc["results"] == ["m1", "m2", "m3"]
    assert set(doc["leaderboards"]) == {"bench/acc", "bench/f1"}
    refused(run("compare", other, expect=2), str(other), "not a table of per-sample scores",
            "its columns are 'name', 'sample_id', 'acc'")


def test_the_three_formats_give_one_comparison(tmp_path):
    docs = []
    for suffix in (".parquet", ".csv", ".jsonl"):
        folder = tmp_path / suffix[1:]
        folder.mkdir()
        table = write(folder / f"bench{suffix}", board())
        out = tmp_path / f"{suffix[1:]}.json"
        run("compare", table, "--output", out, "--resamples", "200")
        doc = json.loads(out.read_text())
        doc.pop("provenance")
        doc["same"]["tasks"]["bench"].pop("table")
        docs.append(doc)
    assert docs[0] == docs[1] == docs[2]


def test_a_folder_of_tables_is_one_board_and_other_files_in_it_are_not_read(tmp_path):
    whole = board(models=("m1", "m2", "m3", "m4"), n=10)
    half = len(whole["model"]) // 2  # m1, m2 in one shard, m3, m4 in the other: one task, one board
    for k, part in enumerate((slice(0, half), slice(half, None))):
        (tmp_path / "runs" / f"shard{k}").mkdir(parents=True)
        write(tmp_path / "runs" / f"shard{k}" / "bench.parquet", {c: v[part] for c, v in whole.items()})
    (tmp_path / "runs" / "notes.csv").write_text("who,what\nme,a note\n")
    # (bench/f1 lies in [0, 1] in one shard only: each result's bounds are its own values', as a log's are)
    run("compare", tmp_path / "runs", "--output", tmp_path / "C.json", "--resamples", "200", "--metric", "bench/acc")
    write(tmp_path / "bench.parquet", whole)
    run("compare", tmp_path / "bench.parquet", "--output", tmp_path / "one.json", "--resamples", "200", "--metric",
        "bench/acc")
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("C.json", "one.json"))
    assert a["results"] == b["results"] == ["m1", "m2", "m3", "m4"]
    assert a["leaderboards"] == b["leaderboards"] and a["comparisons"] == b["comparisons"]
    names = [f["name"] for f in a["provenance"]["arguments"]["outputs"][0]["files"]]
    assert names == ["shard0/bench.parquet", "shard1/bench.parquet"]  # the notes were not read


def test_epochs_are_reduced_by_the_mean_unless_reducer_says_otherwise(tmp_path):
    cols = board(n=20, epochs=3)
    table = write(tmp_path / "bench.parquet", cols)
    by_model: dict[str, dict[str, list[int]]] = {}
    for m, s, a in zip(cols["model"], cols["sample_id"], cols["acc"], strict=True):
        by_model.setdefault(m, {}).setdefault(s, []).append(a)
    for reducer, reduce in (("mean", lambda v: sum(v) / len(v)), ("max", max)):
        out = tmp_path / f"{reducer}.json"
        run("compare", table, "--output", out, "--resamples", "200", "--metric", "bench/acc",
            *(["--reducer", reducer] if reducer != "mean" else []))
        rows = {r["label"]: r for r in json.loads(out.read_text())["leaderboards"]["bench/acc"]}
        for m, samples in by_model.items():
            want = sum(reduce(v) for v in samples.values()) / len(samples)
            assert math.isclose(rows[m]["value"], want, abs_tol=1e-12), (reducer, m)
            assert rows[m]["counts"]["sample_epochs"] == 60 and rows[m]["counts"]["scored"] == 60


def test_a_table_without_epochs_has_one_and_a_null_score_is_unscored(tmp_path):
    cols = {"model": ["a", "a", "b", "b"], "sample_id": [1, 2, 1, 2], "acc": [1.0, None, 0.0, 1.0]}
    evaluations = read([write(tmp_path / "t.parquet", cols)])
    assert [e.model for e in evaluations] == ["a", "b"]
    assert [(s.sample_id, s.epoch, s.values) for s in evaluations[0].samples] == [
        ("1", 1, {"t/acc": 1.0}), ("2", 1, {"t/acc": None})]
    out = tmp_path / "C.json"
    run("compare", tmp_path / "t.parquet", "--output", out)
    counts = json.loads(out.read_text())["comparisons"][0]["metrics"][0]["counts"]["a"]
    assert (counts["scored"], counts["unscored"]) == (1, 1)


@pytest.mark.usefixtures("inspect_ai_installed")  # the example logs are .eval files (zstandard)
def test_a_table_of_the_logs_scores_compares_as_the_logs_do(tmp_path):
    logs = sorted(LOGS.glob("*.eval"))
    evaluations = read(logs)
    names = list(evaluations[0].metrics)
    cols: dict[str, list] = {"model": [], "sample_id": [], "epoch": [], **{n.split("/", 1)[1]: [] for n in names}}
    for e in evaluations:
        for s in e.samples:
            cols["model"].append(e.model)
            cols["sample_id"].append(s.sample_id)
            cols["epoch"].append(s.epoch)
            for n in names:  # an errored sample has no score: a null (unscored) in the table
                cols[n.split("/", 1)[1]].append(None if s.error is not None else s.values.get(n))
    table = write(tmp_path / "quiz.parquet", cols)
    run("compare", *logs, "--output", tmp_path / "logs.json")
    run("compare", table, "--output", tmp_path / "table.json")
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("logs.json", "table.json"))
    assert a["results"] == b["results"]
    assert {k: v.replace("steady.eval", "quiz.parquet") for k, v in a["not_compared"].items()} == b["not_compared"]
    assert list(a["leaderboards"]) == list(b["leaderboards"]) == ["quiz/match", "quiz/graded/right"]
    for name in a["leaderboards"]:
        for x, y in zip(a["leaderboards"][name], b["leaderboards"][name], strict=True):
            for key in ("label", "value", "ci95", "rank_range", "groups"):
                assert x[key] == y[key], (name, key)
            cx, cy = x["counts"], y["counts"]  # a log's errored sample is the table's unscored one
            assert cx["errored"] + cx["unscored"] == cy["unscored"] and cx["scored"] == cy["scored"]
    for ca, cb in zip(a["comparisons"], b["comparisons"], strict=True):
        for ma, mb in zip(ca["metrics"], cb["metrics"], strict=True):
            for key in ("a", "b", "difference", "ci95", "p_value", "p_holm", "verdict"):
                assert ma[key] == mb[key], key


@pytest.mark.usefixtures("inspect_ai_installed")
def test_the_docs_samples_df_recipe_gives_the_logs_numbers(tmp_path):
    """docs/results.md's recipe from inspect_ai's own samples_df, end to end."""
    import pandas as pd
    from inspect_ai.analysis import EvalModel, SampleSummary, samples_df

    df = samples_df(str(LOGS), columns=EvalModel + SampleSummary, quiet=True)
    value = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
    table = pd.DataFrame({"model": df["model"], "sample_id": df["id"].astype(str), "epoch": df["epoch"],
                          "match": df["score_match"].map(lambda v: value.get(v, v)).astype(float)})
    table.loc[df["error"].fillna("") != "", "match"] = None
    table.to_parquet(tmp_path / "quiz.parquet", index=False)
    run("compare", *sorted(LOGS.glob("*.eval")), "--metric", "quiz/match", "--output", tmp_path / "logs.json")
    run("compare", tmp_path / "quiz.parquet", "--output", tmp_path / "table.json")
    a, b = (json.loads((tmp_path / f).read_text())["leaderboards"]["quiz/match"] for f in ("logs.json", "table.json"))
    assert [(r["label"], r["value"], r["ci95"], r["rank_range"]) for r in a] == \
        [(r["label"], r["value"], r["ci95"], r["rank_range"]) for r in b]


# --- refusals: one line, exit 2, nothing written ----------------------------------------------------


def bad(tmp_path, suffix, change, *words, extra=()):
    cols = board(n=5)
    change(cols)
    table = write(tmp_path / f"bench{suffix}", cols)
    out = tmp_path / "C.json"
    line = refused(run("compare", table, "--output", out, *extra, expect=2), str(table), *words)
    assert not out.exists()
    return line


def _duplicate(c):
    for k in c:
        c[k].append(c[k][3])


def _nan(c):
    c["f1"][7] = float("nan")


def _drop(c, i=4):
    for k in c:
        del c[k][i]


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_a_duplicate_model_sample_epoch_is_refused(tmp_path, suffix):
    line = bad(tmp_path, suffix, _duplicate, "row 31", "'m1', sample 's001', epoch 2 is on two rows (first on row 4)")
    assert "field 'sample_id'" in line


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_non_finite_score_is_refused(tmp_path, suffix):
    bad(tmp_path, suffix, _nan, "row 8", "field 'f1'", "is not a finite number")
    cols = board(n=5)
    cols["acc"] = [float(v) for v in cols["acc"]]
    cols["acc"][2] = float("inf")
    table = write(tmp_path / f"inf{suffix}", cols)
    refused(run("compare", table, expect=2), "row 3", "field 'acc'", "inf is not a finite number")


def test_a_model_missing_a_sample_is_refused_or_left_out_with_intersection(tmp_path):
    line = bad(tmp_path, ".parquet", _drop, "model 'm1' has no row for sample 's002' epoch 1", "--intersection")
    assert "1 of the 30 model x sample x epochs" in line
    cols = board(n=5)
    _drop(cols)
    table = write(tmp_path / "cut.parquet", cols)
    out = tmp_path / "C.json"
    res = run("compare", table, "--output", out, "--intersection")
    assert "cut.parquet: 1 samples left out of every model (--intersection" in res.output and "'s002'" in res.output
    for rows in json.loads(out.read_text())["leaderboards"].values():
        assert {r["counts"]["samples"] for r in rows} == {4}
        assert {r["counts"]["sample_epochs"] for r in rows} == {8}


def test_a_missing_epoch_counts_as_a_missing_sample(tmp_path):
    cols = board(n=5)
    i = next(k for k, (m, s, e) in enumerate(zip(cols["model"], cols["sample_id"], cols["epoch"], strict=True))
             if (m, s, e) == ("m3", "s004", 2))
    _drop(cols, i)
    table = write(tmp_path / "cut.csv", cols)
    refused(run("compare", table, expect=2), "model 'm3' has no row for sample 's004' epoch 2")


@pytest.mark.parametrize(("change", "words"), [
    (lambda c: c.update(model=list(range(len(c["model"])))), ("field 'model'", "is of type int64")),
    (lambda c: c.update(acc=["yes"] * len(c["acc"])), ("field 'acc'", "is of type string", "holds numbers")),
    (lambda c: c.update(epoch=[1.5] * len(c["epoch"])), ("field 'epoch'", "is of type double")),
    (lambda c: c["epoch"].__setitem__(0, 0), ("row 1", "field 'epoch'", "epoch 0")),
    (lambda c: c["sample_id"].__setitem__(2, None), ("row 3", "field 'sample_id'", "is empty")),
    (lambda c: [c.pop("acc"), c.pop("f1")], ("no metric column",)),
    (lambda c: [v.clear() for v in c.values()], ("holds no row",)),
])
def test_bad_types_and_empty_tables_are_refused(tmp_path, change, words):
    bad(tmp_path, ".parquet", change, *words)


def test_an_unreadable_table_is_refused_in_one_line(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text('model,sample_id,acc\na,1,1\na,2,1,9\n')
    refused(run("compare", table, expect=2), str(table), "not a readable csv table")
    refused(run("compare", tmp_path / "none.parquet", expect=2), "none.parquet", "file not found")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not a parquet file")
    refused(run("compare", broken, expect=2), str(broken), "not a table of per-sample scores",
            "its columns cannot be read")


# --- leaderboard, and verify re-checks it --------------------------------------------------------------


def test_a_leaderboard_of_a_table_records_it_and_verify_recomputes_it(tmp_path):
    table = write(tmp_path / "bench.parquet", board())
    site = tmp_path / "site"
    run("leaderboard", table, "--output-dir", site, "--resamples", "200")
    doc = json.loads((site / "leaderboard.json").read_text())
    digest = hashlib.sha256(table.read_bytes()).hexdigest()
    recorded = {"name": "bench.parquet", "sha256": digest}
    assert doc["provenance"]["inputs"] == {"input1": recorded}  # read once, recorded once (not once per model)
    assert doc["provenance"]["arguments"]["outputs"] == [recorded]
    res = run("verify", site / "leaderboard.json", "--search", tmp_path)  # found by its sha256, re-read, recomputed
    assert res.output.splitlines()[-1] == "verified 1 outputs: 1 reproduced", res.output
    board_doc = doc
    cols = board()
    cols["acc"][0] = 1 - cols["acc"][0]  # another table in its place: not the input recorded
    write(table, cols)
    res = run("verify", site / "leaderboard.json", "--search", tmp_path, expect=2)
    assert f"missing input: outputs (bench.parquet, sha256 {digest})" in res.output
    assert json.loads((site / "leaderboard.json").read_text()) == board_doc
