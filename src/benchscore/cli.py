"""The umbrella ``benchscore`` command: mounts each domain's click group, plus ``demo``, ``schema`` and ``list``.

Each domain's ``cli`` module provides:

- ``group``: its click group (mounted as ``benchscore DOMAIN``, imported only when used);
- ``FORMATS``: a mapping from format name to pydantic model (for ``benchscore schema``);
- ``demo(out_dir: pathlib.Path) -> None``: runs the domain's demo on bundled data into ``out_dir``.

The demo's summary is the index page's summary table (``figures.summary_rows`` of each domain),
printed through :func:`benchscore.common.html.summary_facts`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import click

from benchscore import __version__
from benchscore.common.cli import LazyGroup
from benchscore.common.errors import BadInput

#: domain -> the one-line help ``benchscore --help`` shows without importing the domain
DOMAINS: dict[str, str] = {
    "tcsexam": "TCSExam composite index (30P+30S+30C+10O), fixed-reference Solver scores.",
    "mira": "Mira agent benchmark: repetitions, timing credit, reliability, judge.",
    "rxn": "Reaction-condition testset V6: build question sets, score predictions.",
    "swarm": "swarm-minimal: pheromone task pool, acceptance S07-S10, L01/L02.",
}


def _domain(name: str) -> ModuleType:
    return importlib.import_module(f"benchscore.{name}.cli")


def _formats() -> dict[str, type]:
    from benchscore.stats.compare import formats as compare_formats

    out: dict[str, type] = {}
    for name in DOMAINS:
        out.update(getattr(_domain(name), "FORMATS", {}))
    out.update(compare_formats())
    from benchscore.publish.leaderboard import formats as leaderboard_formats

    out.update(leaderboard_formats())
    from benchscore.results.judged import CalibrationEntry

    out["benchscore-judge-calibration"] = CalibrationEntry
    return out


@click.group(
    "benchscore",
    cls=LazyGroup,
    lazy={name: (f"benchscore.{name}.cli", "group", help_line) for name, help_line in DOMAINS.items()},
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="benchscore")
def cli() -> None:
    """Scoring contracts implemented exactly: tcsexam, mira, rxn, swarm. Results of other tools (inspect_ai
    logs, lm-evaluation-harness output, Every Eval Ever records) are compared and ranked by compare and
    leaderboard."""


@cli.command(short_help="Run every domain's demo on bundled data into one folder (replaced whole).")
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False),
    default="demo-out",
    show_default=True,
    help="Folder for every domain's demo outputs (one sub-folder per domain): a new or empty folder, or one an "
         "earlier demo wrote (it is replaced as a whole; a folder holding anything else is refused).",
)
@click.option("--only", type=click.Choice(list(DOMAINS)), multiple=True, help="Run only these domains' demos.")
@click.option("--verbose", "-v", is_flag=True,
              help="Print every domain's full tables and every acceptance check as the demo runs (by default: a "
                   "summary of about 30 lines, a row per output with its headline numbers, status and reason).")
def demo(output_dir: str, only: tuple[str, ...], verbose: bool) -> None:
    """Run every domain's demo on bundled data, in turn, into one output folder (replaced as a whole).

    Prints a summary: per domain, each output's headline numbers, its status (complete, incomplete,
    PASS, FAIL, reduced) and, short of complete or PASS, why; then where each page is. ``--verbose``
    prints every table too. The folder must be new, empty, or one an earlier demo wrote (its
    ``.benchscore-written.json`` lists every entry): the demo never deletes what it did not write.
    The demo exits 0 when it wrote every output: its bundled inputs show incomplete and FAIL results
    on purpose.
    """
    import contextlib
    import io
    from pathlib import Path

    output_dir = Path(output_dir)
    from benchscore.common.atomic import replaced_directory
    from benchscore.common.interrupts import checkpoint
    from benchscore.common.terminal import console, print_line

    names = only or tuple(DOMAINS)
    with replaced_directory(output_dir, owner="benchscore demo"):
        for name in names:
            checkpoint(f"demo:{name}")
            if verbose:
                console.rule(f"[bold]{name}")
                _domain(name).demo(output_dir / name)
            else:
                with contextlib.redirect_stdout(io.StringIO()):  # the tables: in the pages, and with --verbose
                    _domain(name).demo(output_dir / name)
        from benchscore.publish.report import demo_report

        rows = demo_report(output_dir, names)
    if verbose:
        console.rule()
    print_line(f"benchscore demo: {len(names)} domain{'s' * (len(names) != 1)} in {output_dir} (every table: "
               f"--verbose; every output: "
               f"{output_dir / 'index.html'})")
    from benchscore.common.html import status_sentence
    from benchscore.publish.report import DEMO_ON_PURPOSE

    print_line(status_sentence(rows, DEMO_ON_PURPOSE))
    for line in demo_summary_lines(rows, output_dir, names):
        print_line(line)


demo.record_invocation = False  # each step records the command it stands for (benchscore verify re-runs those)


def demo_summary_lines(rows: list[Any], output_dir: Any, names: tuple[str, ...]) -> list[str]:
    """The demo's summary: per domain its page, then a line per row of the index's summary table
    (``STATUS  RESULT: HEADLINE; why: REASON``), from :func:`benchscore.common.html.summary_facts`."""
    from benchscore.common.cli import FINAL
    from benchscore.common.html import summary_facts

    facts = [(row.domain, summary_facts(row)) for row in rows]
    width = max((len(status) for _, (_, _, status, _) in facts), default=0)
    lines = []
    for name in names:
        lines.append(f"{name}: page {output_dir / (name + '.html')}")
        for domain, (result, headline, status, why) in facts:
            if domain != name:
                continue
            if why and status not in FINAL:
                why = f"why: {why}"
            lines.append(f"  {status.ljust(width)}  {result}: " + "; ".join(t for t in (headline, why) if t))
    return lines


def _not_a_sqlite_store(path) -> None:
    """A swarm run's SQLite store given where a JSON output belongs: say what it is and what reads it."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return  # a FIFO or a device is never opened here: the reader refuses it
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return  # the reader says what is wrong with it
    if head == b"SQLite format 3\x00":
        raise BadInput("a SQLite store of a swarm run (swarm run --store sqlite:///PATH), not a JSON output: "
                       f"benchscore swarm audit RUN_ID --store sqlite:///{path} reads it", source=path)


@cli.command(short_help="Draw the JSON outputs of benchscore commands as one HTML page.")
@click.argument("outputs", nargs=-1, required=True, type=click.Path())
@click.option("--output", required=True, type=click.Path(dir_okay=False),
              help="The HTML file to write (one self-contained file).")
@click.option("--title", default="benchscore report", show_default=True, help="The page's title.")
def report(outputs: tuple[str, ...], output: str, title: str) -> None:
    """Draw the JSON OUTPUTS of benchscore commands as one self-contained HTML page (figures and tables).
    A folder stands for every output under it that the report draws (as ``verify DIR/``: the other JSON
    files there, inputs and question sets, are left out)."""
    from pathlib import Path

    from benchscore.common.atomic import atomic_write_text
    from benchscore.common.terminal import print_line
    from benchscore.common.verify import outputs_under
    from benchscore.publish.report import read_outputs, report_page

    paths: list[tuple[Path, str]] = []
    folders: dict[Path, list[Path]] = {}
    for given in outputs:
        p = Path(given)
        if p.is_dir():
            folders[p] = outputs_under(p)
            paths.extend((f, str(f)) for f in folders[p])
        else:
            _not_a_sqlite_store(p)
            paths.append((p, given))
    found = read_outputs(paths, strict=True, lenient=frozenset(f for under in folders.values() for f in under))
    drawn = {o.path for outs in found.values() for o in outs}
    for folder, under in folders.items():
        if not drawn.intersection(under):
            raise BadInput("a folder without an output the report draws (docs/report.md lists the kinds)",
                           source=folder)
    atomic_write_text(output, report_page(found, title))
    for name, outs in found.items():
        for o in outs:
            print_line(f"{name if o.kind == name else f'{name} {o.kind}'}: {o.label}")  # never "compare compare"
    print_line(f"report: {output}")


#: the domains whose outputs ``benchscore compare`` knows (each has a ``comparison.entries`` hook)
COMPARED = ("rxn", "mira", "tcsexam")
COMPARED_KINDS = "rxn eval-mc / eval-fib, mira score / public projection, tcsexam score / solver-score"


def _comparison_options(top_help: str) -> Any:
    """The options ``compare`` and ``leaderboard`` share (one inference, the same inputs): declared once."""
    options = [
        click.option("--intersection", is_flag=True,
                     help="Compare on the items every output has (and list the items dropped) instead of refusing "
                          "outputs whose items differ."),
        click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True,
                     help="Random sign patterns of the permutation test and its interval (all of them when "
                          "2^units is fewer)."),
        click.option("--seed", type=int, default=16, show_default=True,
                     help="Seed of the random sign patterns (recorded)."),
        click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05,
                     show_default=True, help="Level at which two results count as distinguishable (Holm-corrected)."),
        click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help=top_help),
        click.option("--rank-sets", type=click.Choice(["auto", "holm", "max-t"]), default="auto", show_default=True,
                     help="How rank sets are made: every pair's exact test with Holm (holm), or the max-t bootstrap "
                          "over all pairs with stepdown (max-t); auto: holm up to 100 results, max-t past them "
                          "(docs/statistics.md)."),
        click.option("--draws", type=click.IntRange(min=100), default=1000, show_default=True,
                     help="Multiplier draws of the max-t rank sets (seeded by --seed)."),
        click.option("--metric", "metrics", multiple=True,
                     help="Results of other tools: a metric to compare (repeatable; default: every numeric one)."),
        click.option("--cluster", metavar="KEY",
                     help="Results of other tools: the sample metadata field that is the independent unit (a topic, "
                          "a passage, a repository; default: each sample)."),
        click.option("--errors", type=click.Choice(["as-wrong", "exclude-pair", "refuse"]),
                     help="Results of other tools: an errored, unscored or missing sample counts as wrong (as-wrong, "
                          "the default), leaves every result (exclude-pair), or is refused (refuse)."),
        click.option("--reducer", metavar="NAME",
                     help="Results of other tools: the epoch reducer of every task in place of each task's own, one "
                          "inspect_ai ships (mean, median, mode, majority, max, at_least_K, pass_at_K, pass_k_K); a "
                          "task declaring a custom reducer is refused without it."),
        click.option("--retries", type=click.Choice(["last-attempt", "first-attempt"]),
                     help="Results of other tools: a sample epoch inspect_ai retried after an error counts as its "
                          "last attempt ended (last-attempt, inspect_ai's rule, the default) or as its first did: "
                          "errored, under --errors (first-attempt)."),
        click.option("--accept-score-edits", is_flag=True,
                     help="Results of other tools: take scores edited after the run (inspect_ai's edit_score) and "
                          "list each edit (sample, epoch, scorer, who, why) beside the numbers; without it an edited "
                          "score is refused."),
        click.option("--scheduler", metavar="ADDRESS",
                     help="Results of other tools: read them on the Dask distributed cluster whose scheduler is at "
                          "ADDRESS (tcp://HOST:8786; files on storage the workers share, or fsspec URLs); the "
                          "statistics stay here and the output is the local run's. Needs the dask extra."),
        click.option("--judge-calibration", "judge_calibration", type=click.Path(dir_okay=False),
                     help="Results of other tools graded by a model: known values of some samples (JSON Lines: "
                          "result, metric, sample_id, known_value); each result's value corrected for the grader's "
                          "errors, the grader's agreement, and the pairs on corrected values (docs/results.md)."),
        click.option("--jobs", type=click.IntRange(min=1),
                     help="Results of other tools: processes reading the inspect_ai logs side by side (default: one "
                          "per core); the output is the same for any."),
    ]

    def apply(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


@cli.command(short_help="Compare contract outputs, or inspect_ai / lm-eval / Every Eval Ever results, item by item.")
@click.argument("outputs", nargs=-1, required=True, type=click.Path())
@click.option("--output", type=click.Path(dir_okay=False), help="The comparison JSON to write.")
@_comparison_options("Items that differ most, listed per metric and pair.")
def compare(outputs: tuple[str, ...], output: str | None, intersection: bool, resamples: int, seed: int,
            alpha: float, top: int, rank_sets: str, draws: int, metrics: tuple[str, ...], cluster: str | None,
            errors: str | None, reducer: str | None, retries: str | None, accept_score_edits: bool,
            scheduler: str | None, judge_calibration: str | None, jobs: int | None) -> None:
    """Compare OUTPUTS of one contract, or results of one evaluation, item by item: one verdict per difference.

    Pairs the items (rxn: question, mira: case, tcsexam: task or instance) and writes per metric a, b,
    a - b and its verdict (differs, not separated, or cannot separate at this n) with,
    from the same paired permutation (or exact McNemar) test, its interval, p-value, smallest attainable
    p-value and minimum detectable effect; with three or more results, Holm-adjusted verdicts, rank
    intervals and group labels. Outputs of different contracts or items are refused in one line (exit 2). OUTPUTS
    may also be inspect_ai logs (files, folders, eval-set folders, fsspec URLs such as s3://), lm-evaluation-harness
    --log_samples output or
    Every Eval Ever records: items are samples, with scored / errored / unscored / retried counts beside every
    number (docs/results.md). A score edited after the run is refused unless --accept-score-edits; a log whose
    run did not end success is compared on what it holds and marked NOT FINAL (exit 1, after writing).
    """
    from benchscore.common.atomic import atomic_write_json
    from benchscore.common.provenance import provenance
    from benchscore.common.terminal import print_line
    from benchscore.stats import compare as C

    entries, skipped, inputs, files = _compared(outputs, metrics, cluster, errors, intersection, reducer, retries,
                                                accept_score_edits, scheduler, jobs)
    doc = C.compare(entries, intersection=intersection, resamples=resamples, seed=seed, alpha=alpha, top=top,
                    rank_sets=rank_sets, draws=draws)
    doc["not_compared"].update(skipped)
    _judged(doc, entries, files, inputs, judge_calibration, alpha)
    doc["provenance"] = provenance("benchscore-compare", inputs, seed=seed, extra={"resamples": resamples})
    C.formats()["benchscore-compare"].model_validate(doc)  # the output is what its schema says
    if output is not None:
        atomic_write_json(output, doc)
    C.print_comparison(doc)
    if doc.get("judge"):
        from benchscore.results.judged import print_judge

        print_judge(doc["judge"])
    if output is not None:
        print_line(f"wrote {output}")
    _not_final(entries)


def _not_final(entries: list) -> None:
    """Say which results of other tools come from a run that did not finish and exit 1 (after the output is
    written), as every command does with a result that is not final."""
    from benchscore.common.cli import exit_for
    from benchscore.common.terminal import print_line
    from benchscore.results.comparison import unfinished

    lines = unfinished(entries)
    for line in lines:
        print_line(f"{line}: its numbers stand on what its log holds")
    exit_for(not lines)


def _judged(doc: dict[str, Any], entries: list, files: dict[str, Any], inputs: dict[str, Any],
            judge_calibration: str | None, alpha: float) -> None:
    """``--judge-calibration``: the comparison's ``judge`` block (results of other tools only)."""
    if judge_calibration is None:
        return
    from pathlib import Path

    if files:
        raise BadInput("--judge-calibration applies to model-graded results of other tools (inspect_ai logs, ...); a mira "
                       "score measures its judge itself: benchscore mira score --judge-calibration")
    from benchscore.results.judged import judge_block

    doc["judge"] = judge_block(entries, doc, Path(judge_calibration), alpha=alpha)
    inputs["judge_calibration"] = Path(judge_calibration)


def _compared(outputs: tuple[str, ...], metrics: tuple[str, ...], cluster: str | None, errors: str | None,
              intersection: bool, reducer: str | None = None, retries: str | None = None,
              accept_score_edits: bool = False, scheduler: str | None = None, jobs: int | None = None
              ) -> tuple[list, dict[str, str], dict[str, Any], dict[str, Any]]:
    """compare's entries of OUTPUTS (contract outputs, or results of other tools), the metrics left
    out, the inputs for provenance, and, for contract outputs, each file's label and path."""
    from pathlib import Path

    from benchscore.results import reading as R
    from benchscore.stats import compare as C

    paths = [p if R.is_url(p) else Path(p) for p in outputs]  # an fsspec URL stays a URL (inspect_ai logs)
    theirs = [R.recognises(p) for p in paths]
    skipped: dict[str, str] = {}
    if any(theirs):
        from benchscore.results.comparison import Options, compare_inputs

        if not all(theirs):
            ours = paths[theirs.index(False)]
            from benchscore.common.readers import check_file

            check_file(ours)  # a FIFO, a link loop, a missing file: said as such, not taken for an output
            raise BadInput(f"{ours} is a benchscore output and {paths[theirs.index(True)]} results of another tool: "
                           "compare needs results of one evaluation")
        entries, skipped, files = compare_inputs(paths, Options(metrics, cluster, errors or "as-wrong", intersection,
                                                                reducer, retries or "last-attempt",
                                                                accept_score_edits, scheduler, jobs))
        return entries, skipped, {f"input{i}": f for i, f in enumerate(files, 1)}, {}
    if metrics or cluster or errors or reducer or retries or accept_score_edits or scheduler:
        raise BadInput("--metric, --cluster, --errors, --reducer, --retries, --accept-score-edits and --scheduler apply "
                       "to results "
                       "of other tools (inspect_ai logs, lm-evaluation-harness output, Every Eval Ever records), not "
                       "to benchscore outputs")
    for p in paths:
        _not_a_sqlite_store(p)
    read = C.read_outputs(paths)
    from benchscore.publish.report import outputs as known_outputs

    for (_, doc, _), path in zip(read, paths, strict=True):  # every field typed before any is used
        known_outputs().check(doc, source=path)
    hooks = [importlib.import_module(f"benchscore.{name}.comparison").entries for name in COMPARED]
    entries = C.collect([(label, doc) for label, doc, _ in read], hooks, COMPARED_KINDS)
    files = {label: (path, doc) for (label, doc, _), path in zip(read, paths, strict=True)}
    return entries, skipped, {f"output{i}": Path(p) for i, p in enumerate(outputs, 1)}, files


@cli.command(short_help="Publish a leaderboard site of contract outputs or inspect_ai / lm-eval / Every Eval Ever "
                        "results.")
@click.argument("outputs", nargs=-1, required=True, type=click.Path())
@click.option("--output-dir", required=True, type=click.Path(file_okay=False),
              help="The site folder to write (new, empty, or one an earlier leaderboard wrote: it is replaced as a "
                   "whole): index.html, a page per adjacent pair (per result past 100 results), leaderboard.json and "
                   "every_eval_ever/ records.")
@_comparison_options("Items that separate two adjacent rows, listed on their pair's page.")
def leaderboard(outputs: tuple[str, ...], output_dir: str, intersection: bool, resamples: int, seed: int,
                alpha: float, top: int, rank_sets: str, draws: int, metrics: tuple[str, ...], cluster: str | None,
                errors: str | None, reducer: str | None, retries: str | None, accept_score_edits: bool,
                scheduler: str | None, judge_calibration: str | None, jobs: int | None) -> None:
    """Publish OUTPUTS of one benchmark (contract outputs, or logs of many models) as a static leaderboard.

    Writes into --output-dir one self-contained page (no script, no network) with, per result, the score
    and its 95 % interval (a forest plot of the first 50), its rank interval and groups (compare's
    leaderboard), its scored / errored / unscored counts and, for contract outputs, a reproduced mark
    only when `benchscore verify` reproduced the output; a page per adjacent pair with the items that
    separate them (past 100 results, a page per result with its verdicts against its neighbours);
    leaderboard.json (the same table) and one Every Eval Ever aggregate record per result. Mira
    scores are refused: a leaderboard publishes their public projection only. Exit codes as compare's.
    """
    from pathlib import Path

    from benchscore.common.atomic import dumps_json
    from benchscore.common.provenance import provenance, sha256_bytes
    from benchscore.common.terminal import print_line
    from benchscore.publish import leaderboard as L
    from benchscore.sources.every_eval_ever import validate_aggregate
    from benchscore.stats import compare as C

    entries, skipped, inputs, files = _compared(outputs, metrics, cluster, errors, intersection, reducer, retries,
                                                accept_score_edits, scheduler, jobs)
    for path, doc in files.values():
        metric_id = str((doc.get("provenance") or {}).get("metric_id", "")) if isinstance(doc, dict) else ""
        if metric_id.startswith("mira:") and metric_id.endswith("/score"):
            raise BadInput("a mira score holds what must not be published; a leaderboard takes its public "
                           f"projection: benchscore mira project --score {path} --output PUBLIC.json", source=path)
    doc = C.compare(entries, intersection=intersection, resamples=resamples, seed=seed, alpha=alpha, top=top,
                    standings=True, detectable_effects=False, rank_sets=rank_sets, draws=draws)
    doc["not_compared"].update(skipped)
    _judged(doc, entries, files, inputs, judge_calibration, alpha)
    reproduced = _reproduced(entries, files)
    board = L.build(doc, entries, reproduced)
    board["provenance"] = provenance(L.FORMAT, inputs, seed=seed, extra={"resamples": resamples})
    L.formats()[L.FORMAT].model_validate(board)  # the output is what its schema says
    about = {}
    for e in entries:
        facts = e.about or L.output_about(*next(files[f] for f in files if e.label == f or e.label.startswith(f + ":")))
        about[e.label] = {**facts, "sources": L.sources_of(facts.get("files") or [], board["provenance"])}
    written = dumps_json(board)
    records = L.eee_records(board, about, sha256_bytes(written))
    pages = L.render(board)
    target = Path(output_dir)
    L.write_site(target, board, records, pages, validate_aggregate)  # all or nothing; each record as its schema says
    L.print_board(board)
    for name, why in board["not_compared"].items():
        print_line(f"not compared: {name} ({why})")
    if doc.get("judge"):
        from benchscore.results.judged import print_judge

        print_judge(doc["judge"])
    print_line(f"leaderboard: {target / 'index.html'}")
    _not_final(entries)


def _reproduced(entries: list, files: dict[str, Any]) -> dict[str, tuple[bool | None, str]]:
    """Per entry label, whether `benchscore verify` reproduced the output it comes from (in-process)."""
    if not files:
        return {e.label: (None, "results of another tool: no benchscore output to re-run (leaderboard.json records the "
                                     "sha256 of each file read: benchscore verify recomputes every row from them)")
                for e in entries}
    from benchscore.common import verify as V

    by_file: dict[str, tuple[bool, str]] = {}
    with V.Verifier(cli, _verify_kinds(), V.searched()) as verifier:  # a verify re-running this: its folders too
        for label, (path, _) in files.items():
            try:
                outcome = verifier.verify(path)
            except BadInput as exc:
                by_file[label] = (False, f"not verified: {exc}")
                continue
            by_file[label] = (outcome.status == V.REPRODUCED, outcome.message if outcome.status == V.REPRODUCED
                              else f"{outcome.status}: {outcome.message}")
    out = {}
    for e in entries:
        file = next(f for f in files if e.label == f or e.label.startswith(f + ":"))
        out[e.label] = by_file[file]
    return out


@cli.command(short_help="Recompute outputs from their recorded command and inputs; say which reproduce.")
@click.argument("outputs", nargs=-1, required=True, type=click.Path())
@click.option("--search", "search", multiple=True, type=click.Path(file_okay=False, exists=True),
              help="A folder to look for inputs in, by sha256 (repeatable).")
def verify(outputs: tuple[str, ...], search: tuple[str, ...]) -> None:
    """Recompute OUTPUTS (JSON files, or every output under a folder) from their recorded command and inputs.

    Each input is found by its sha256 (at its recorded path, beside the output, under --search and the
    folders given, in benchscore's bundled data); the recorded command is re-run with the recorded
    options and created_at, and its result compared value by value. Whether an output can be recomputed
    follows from its kind (its fields), never from what it records. One line per output. Exit 0 when
    every output is reproduced (or is of a kind that cannot be recomputed, and says why), 1 when a value
    differs (each differing JSON path is printed with both values) or an output cannot be verified (its
    recorded command or metric id is missing or not its kind's), 2 when an input is missing (its role,
    name and sha256 are named) or the re-run refuses its inputs.
    """
    from pathlib import Path

    from benchscore.common import verify as V
    from benchscore.common.terminal import print_line, progress

    files: list[tuple[Path, bool]] = []
    folders: list[Path] = []
    for given in outputs:
        p = Path(given)
        if p.is_dir():
            folders.append(p)
            files.extend((f, False) for f in V.outputs_under(p))
        else:
            files.append((p, True))
    outcomes = []
    with V.Verifier(cli, _verify_kinds(), [*map(Path, search), *folders]) as verifier, progress() as bar:
        task = bar.add_task("verifying", total=len(files))
        for path, explicit in files:
            outcomes.append(verifier.verify(path, explicit=explicit))
            bar.advance(task)
    shown = [o for o in outcomes if o.status != V.SKIPPED]
    if not shown:
        raise BadInput("no benchscore output (a JSON file with a provenance block) in " + ", ".join(outputs))
    for o in shown:
        print_line(f"{o.path}: {o.message if o.status == V.REPRODUCED else f'{o.status}: {o.message}'}")
        for where, mine, theirs in o.differences:
            digits = _telling_digits(mine, theirs)
            print_line(f"  {where}: {_shown(mine, digits)} in the file, {_shown(theirs, digits)} recomputed")
    counts = {s: sum(o.status == s for o in shown) for s in (V.REPRODUCED, V.DIFFERS, V.UNVERIFIABLE, V.MISSING,
                                                               V.FAILED, V.NOT_RECOMPUTABLE)}
    print_line(f"verified {len(shown)} outputs: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    code = max((V.EXIT[o.status] for o in shown), default=0)
    if code:
        raise SystemExit(code)


def _verify_kinds() -> list[Any]:
    """Every kind of output benchscore writes (compare's, the leaderboard's, each domain's), for verify."""
    from benchscore.publish.leaderboard import verify_kinds as leaderboard_kinds
    from benchscore.stats.compare import verify_kind

    return [verify_kind(), *leaderboard_kinds(), *(k for name in DOMAINS for k in _domain(name).verify_kinds())]


def _telling_digits(mine, theirs) -> int:
    """The fewest significant digits (4 at least, as every terminal number) at which two differing values
    still print differently: 0.66666 against 0.66667 needs 5, so a difference is never rounded away."""
    from benchscore.common.terminal import DIGITS, rounded

    for digits in range(DIGITS, 18):
        if rounded(mine, digits) != rounded(theirs, digits):
            return digits
    return 17


def _shown(value, digits: int) -> str:
    import orjson

    from benchscore.common.terminal import rounded

    text = value if value == "<absent>" else orjson.dumps(rounded(value, digits)).decode()
    return text if len(text) <= 200 else text[:197] + "..."


@cli.command("list", short_help="Print every domain, command, metric id and file format.")
def list_() -> None:
    """Print every domain, command, metric id and file format, one per line (each with its whole first
    paragraph of help: never cut mid-sentence)."""
    from benchscore.common.terminal import print_line

    for name, summary in DOMAINS.items():
        module = _domain(name)
        print_line(f"{name}: {summary}")
        for path, command in _leaves(module.group, (name,)):
            print_line(f"  command    benchscore {path}  {_summary(command.help)}")
        for metric, what in getattr(module, "METRIC_IDS", {}).items():
            print_line(f"  metric id  {metric}  {what}")
        for key, model in sorted(getattr(module, "FORMATS", {}).items()):
            print_line(f"  format     {key}  {_summary(model.__doc__)}")
    print_line("benchscore: shared commands")
    for path, command in _leaves(cli, ()):
        if path.split()[0] not in DOMAINS:
            print_line(f"  command    benchscore {path}  {_summary(command.help)}")


def _summary(text: str | None) -> str:
    """The first paragraph of a help text or docstring on one line, whole, without docstring markup
    (RST double backquotes as single, no ``:func:`` roles)."""
    import inspect

    from benchscore.common.models import plain_text

    paragraph = inspect.cleandoc(text or "").split("\n\n", 1)[0]
    return plain_text(" ".join(paragraph.split()))


def _leaves(group: click.Group, path: tuple[str, ...]):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _leaves(command, (*path, name))
        elif not command.hidden:
            yield " ".join((*path, name)), command


@cli.command(short_help="Print the JSON Schema of a file format (without NAME: list the formats).")
@click.argument("name", required=False)
@click.option("--mode", type=click.Choice(["validation", "serialization"]), default="validation", show_default=True,
              help="validation: what benchscore accepts when it reads the format; serialization: what it writes "
                   "(every field it always writes is required, computed fields such as a FAIL's reason included)")
def schema(name: str | None, mode: str) -> None:
    """Print the JSON Schema of a file format (without NAME: list the formats)."""
    import orjson

    from benchscore.common.models import plain_schema, plain_text

    formats = _formats()
    if name is None:
        for key in sorted(formats):
            doc = (formats[key].__doc__ or "").strip().splitlines()
            click.echo(f"{key}\t{plain_text(doc[0]) if doc else ''}")
        return
    if name not in formats:
        raise BadInput(f"unknown format {name!r}; known formats: {', '.join(sorted(formats))}")
    schema = plain_schema(formats[name].model_json_schema(mode=mode), name)
    click.echo(orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode())


def main() -> None:
    # the program's name is benchscore however it was started (console script, python -m benchscore, python -m
    # benchscore.cli): provenance records `benchscore ...`, the command verify re-runs
    cli(prog_name="benchscore")


if __name__ == "__main__":  # python -m benchscore.cli (as the console script)
    main()
