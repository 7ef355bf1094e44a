"""The ``tcsexam`` commands (also mounted as ``benchscore tcsexam``): options, wiring and printing.

Only click and light modules are imported at start-up; a command imports :mod:`.commands` (numpy,
pydantic, ...) when it runs, so ``tcsexam --help`` stays fast. ``FORMATS`` (read by ``benchscore
schema``) is computed on first access. Terminal output goes through ``print_table``/``print_line``:
plain, whole lines when piped, and every number of the JSON output is printed, rounded for reading
(4 significant digits, :func:`benchscore.common.terminal.fmt`; the JSON keeps every digit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from benchscore import __version__
from benchscore.common.cli import exit_for, refuse_overwriting_inputs
from benchscore.common.cli import group as _group
from benchscore.common.swapped import Kind, keys, list_of, swappable
from benchscore.common.terminal import fmt, interval_cell, print_line, print_table, progress

from .datafolder import DATA_ENV, resolve

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=DATA_ENV,
    default=None,
    help=f"Folder with suites/NAME.json and references/NAME.json (or set {DATA_ENV}).",
)


#: the provenance metric ids this domain's outputs carry -> what writes them (``benchscore list``)
METRIC_IDS = {
    "tcsexam-index-original-30303010-v0.1": "tcsexam score: the composite index 30P+30S+30C+10O",
    "fixed_reference_relative": "tcsexam solver-score: relative_score against a frozen reference",
    "tcsexam-reference": "tcsexam reference build / merge: a frozen reference",
}


#: the formats of the inputs, as a refusal names them when two are given to each other's options (swapped.py)
RECORDS = Kind("instance records", list_of("instance", "status"))
REFERENCE = Kind("a solver reference", keys("reference_id", "tasks"))
SUITE = Kind("a suite manifest", keys("suite", "tracks"))
COHORT = Kind("a cohort", keys("suite", "models"))


def __getattr__(name: str) -> Any:
    """``FORMATS``: format name -> pydantic model, for ``benchscore schema`` (pydantic loads on first use)."""
    if name == "FORMATS":
        from .formats import FORMATS

        return dict(FORMATS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@_group("tcsexam", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tcsexam", message="%(prog)s (benchscore %(version)s)")
def group() -> None:
    """TCSExam: fixed-reference Solver scores and the composite index 30P+30S+30C+10O."""


@group.group("reference", cls=type(group))
def reference_group() -> None:
    """Build, merge and inspect fixed references."""


def _resolve_input(value: str, what: str, data_dir: Path | None, output: Path | None) -> Path:
    """Resolve ``--suite``/``--reference`` and refuse an ``--output`` that is that file: these are
    string options, which the common pre-check does not see, and the common write guard takes a
    declared output read by the command for an output, not an input."""
    path = resolve(value, what, data_dir)
    if output is not None:
        refuse_overwriting_inputs([path], [("--output", output)])
    return path


def _num(value: Any) -> str:
    """A number for reading (4 significant digits, :func:`fmt`), ``-`` for null."""
    return fmt(value)


@reference_group.command("build")
@click.option(
    "--id",
    "reference_id",
    required=True,
    help="Reference id, e.g. paper-k3-fixed-260925 (a new id per change).",
)
@click.option("--suite", required=True, help="Suite the reference belongs to (lite, full, demo-lite, ...).")
@click.option("--task", required=True, help="Task id.")
@click.option("--kind", type=click.Choice(["objective", "solve"]), required=True,
              help="objective: instances have an objective value; solve: solved (A=1) or not (A=0).")
@click.option("--direction", type=click.Choice(["maximize", "minimize"]), required=True,
              help="Whether a larger objective value is better (maximize) or a smaller one (minimize).")
@click.option("--relative-floor", type=float, default=0.02, show_default=True, help="scale >= this * |mu|.")
@click.option("--absolute-floor", type=float, default=1e-9, show_default=True, help="scale >= this.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The reference JSON to write.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def reference_build(
    reference_id: str,
    suite: str,
    task: str,
    kind: str,
    direction: str,
    relative_floor: float,
    absolute_floor: float,
    output: Path,
    runs: tuple[Path, ...],
) -> None:
    """Freeze several runs' instance records (RUN1.json RUN2.json ...) into a one-task reference."""
    from .commands import build_reference_file

    print_line(
        build_reference_file(
            reference_id=reference_id,
            suite=suite,
            task=task,
            kind=kind,
            direction=direction,
            runs=list(runs),
            output=output,
            relative_floor=relative_floor,
            absolute_floor=absolute_floor,
        )
    )


@reference_group.command("merge")
@click.option("--id", "reference_id", required=True, help="Id of the merged reference.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The merged reference JSON to write.")
@click.argument("parts", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def reference_merge(reference_id: str, output: Path, parts: tuple[Path, ...]) -> None:
    """Merge references of distinct tasks (same suite and scale floors) into one reference."""
    from .commands import merge_reference_files

    print_line(merge_reference_files(reference_id=reference_id, parts=list(parts), output=output))


@reference_group.command("show")
@data_dir_option
@click.argument("reference")
def reference_show(reference: str, data_dir: Path | None) -> None:
    """Print a reference's tasks, instance counts, scored/unscored counts and sha256."""
    from .reference import load_reference

    loaded = load_reference(resolve(reference, "reference", data_dir))
    ref = loaded.reference
    rows = [
        (
            name,
            t.kind,
            t.direction,
            len(t.instances),
            int(t.scored.sum()),
            len(t.instances) - int(t.scored.sum()),
        )
        for name, t in loaded.tasks.items()
    ]
    print_table(
        f"reference {ref.reference_id} (suite {ref.suite}; floors relative {fmt(ref.scale_floors.relative)}, "
        f"absolute {fmt(ref.scale_floors.absolute)})",
        ["task", "kind", "direction", "instances", "scored", "unscored"],
        rows,
    )
    listed_absent = sum(
        len([i for i in names if i not in loaded.tasks[task].index])
        for task, names in ref.unscored_reference_instances.items()
    )
    if listed_absent:
        print_line(f"plus {listed_absent} unscored reference instance(s) listed without values")
    print_line(f"sha256 {loaded.sha256}  {loaded.path}")


@swappable(records=RECORDS, reference=REFERENCE)
@group.command("solver-score")
@click.option("--task", required=True, help="Task id in the reference.")
@click.option(
    "--records",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    multiple=True,
    help="Final instance records (JSON list). Repeat it to score many files of the task in one call "
    "(with --output-dir).",
)
@click.option(
    "--reference",
    "reference",
    required=True,
    help="lite, full (from the data folder) or PATH to a reference file (loaded once per call).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Output file of a single --records.",
)
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for one output per --records file, named after it (its path below the records "
    "files' deepest common folder), written into it, unlike --output-dir elsewhere (a folder the command owns, replaced as a whole). All or nothing: "
    "a bad records file writes nothing.",
)
@data_dir_option
def solver_score_cmd(
    task: str,
    records: tuple[Path, ...],
    reference: str,
    output: Path | None,
    output_dir: Path | None,
    data_dir: Path | None,
) -> None:
    """Score one task's final instance records against a fixed reference (relative_score)."""
    if (output is None) == (output_dir is None):
        raise click.UsageError("give either --output (one --records) or --output-dir (one output per --records)")
    if output is not None and len(records) > 1:
        raise click.UsageError(f"{len(records)} --records files need --output-dir (one output each)")
    from .commands import solver_score_file, solver_score_files

    ref_path = _resolve_input(reference, "reference", data_dir, output)
    if output is not None:
        done = [(records[0], output, solver_score_file(task=task, records=records[0], reference=ref_path,
                                                        output=output))]
    else:
        with progress() as bar:
            job = bar.add_task(f"solver-score {task}", total=len(records))
            done = solver_score_files(
                task=task,
                records=records,
                reference=ref_path,
                output_dir=output_dir,  # type: ignore[arg-type]
                advance=lambda: bar.advance(job),
            )
    _print_solver_scores(task, done)


def _print_solver_scores(task: str, done: list[tuple[Path, Path, dict]]) -> None:
    first = done[0][2]
    print_line(
        f"solver-score task {task} against reference {first['reference_id']} "
        f"(sha256 {first['reference_sha256']})"
    )
    print_table(
        None,
        ["records", "relative_score", "scored_instance_count", "unscored_instance_count", "output",
         "relative_score ci95"],
        [
            (str(rec), _num(s["relative_score"]), s["scored_instance_count"], len(s["unscored_instances"]), str(out),
             interval_cell(s["intervals"]["relative_score"]))
            for rec, out, s in done
        ],
    )
    for rec, _, s in done:
        if s["unscored_instances"]:
            print_line(f"{rec}: unscored_instances {' '.join(s['unscored_instances'])}")


@swappable(suite=SUITE, cohort=COHORT)
@group.command("score")
@click.option("--suite", required=True, help="lite, full (from the data folder) or PATH to a suite manifest.")
@click.option(
    "--attempts", type=click.Path(dir_okay=False, path_type=Path), required=True, help="attempts.csv"
)
@click.option(
    "--cohort",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="cohort.json (suite, solver protocol and reference, planned repeats, adoption_rule)",
)
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The index JSON to write (also when the result is incomplete: the exit code is then 1).")
@data_dir_option
def score_cmd(suite: str, attempts: Path, cohort: Path, output: Path, data_dir: Path | None) -> None:
    """Compute the composite index 30P+30S+30C+10O for each model of a cohort, with 95 % intervals."""
    from .commands import score_file

    out = score_file(suite=_resolve_input(suite, "suite", data_dir, output), attempts=attempts, cohort=cohort,
                     output=output)
    _print_index(out)
    print_line(f"status {out['status']} -> {output}")
    exit_for(out["status"])  # 0 complete; 1 provisional or incomplete (the output is written)


def _print_index(out: dict) -> None:
    """Every number and count of a ``tcsexam score`` output, as plain tables when piped."""
    from .formulas import TRACK_LETTERS, TRACKS

    models = out["models"]
    print_line(
        f"{out['metric_id']}: suite {out['suite']}, {out['solver_protocol']} solver protocol, "
        f"reference {out['solver_reference_id']}"
    )
    print_line(f"adoption_rule: {out['adoption_rule']}")
    print_table(
        "index = 30P + 30S + 30C + 10O ("
        + ", ".join(f"{TRACK_LETTERS[t]} {t}" for t in TRACKS)
        + "); null unless complete or provisional",
        ["model", "status", *(TRACK_LETTERS[t] for t in TRACKS), "index"],
        [
            (model, res["status"], *(_num(res["track_means"][t]) for t in TRACKS), _num(res["index"]))
            for model, res in models.items()
        ],
    )
    print_table(
        "95 % intervals (stratified bootstrap over tasks within tracks, attempts within tasks)",
        ["model", "number", "value", "ci95"],
        [
            (model, name, _num(value), interval_cell(record))
            for model, res in models.items()
            for name, value, record in [
                ("index", res["index"], res["intervals"]["index"]),
                *((t, res["track_means"][t], res["intervals"]["track_means"][t]) for t in TRACKS),
            ]
        ],
    )
    coverage_columns = list(next(iter(models.values()))["coverage"]["total"])
    print_table(
        "coverage",
        ["model", "track", *coverage_columns],
        [
            (model, track, *(cov[k] for k in coverage_columns))
            for model, res in models.items()
            for track, cov in res["coverage"].items()
        ],
    )
    print_table(
        "task means (mean of each task's adopted attempts)",
        ["model", "track", "item", "task_mean"],
        [
            (model, track, item, _num(mean))
            for model, res in models.items()
            for track, means in res["task_means"].items()
            for item, mean in means.items()
        ],
    )
    attempts = [
        (model, a["line"], a["track"], a["item"], a["attempt"], a["adoption_status"], a["score"], a["raw_reward"],
         a["score_status"], None)
        for model, res in models.items()
        for a in res["adopted_attempts"]
    ] + [
        (model, e["line"], e["track"], e["item"], e["attempt"], "excluded", e["score"], e["raw_reward"],
         e["score_status"], e["reason"])
        for model, res in models.items()
        for e in res["excluded_attempts"]
    ]
    order = {model: k for k, model in enumerate(models)}
    attempts.sort(key=lambda a: (order[a[0]], a[1]))
    print_table(
        "attempts (score is aggregated; raw_reward is the judge's raw reward, kept beside it)",
        ["model", "track", "item", "attempt", "adoption_status", "score", "raw_reward", "score_status", "line",
         "reason"],
        [
            (model, track, item, attempt, adoption, _num(score), _num(raw), status, line, reason or "-")
            for model, line, track, item, attempt, adoption, score, raw, status, reason in attempts
        ],
    )
    problems = [(model, p) for model, res in models.items() for p in res["problems"]]
    print_line(f"problems: {len(problems)}")
    for model, problem in problems:
        print_line(f"  {model}: {problem}")


@group.command("demo")
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tcsexam-demo"),
    show_default=True,
    help="Folder for the demo's reference, solver scores and index, written into it (created when missing), "
         "unlike --output-dir elsewhere (a folder the command owns, replaced as a whole).",
)
def demo_cmd(output_dir: Path) -> None:
    """Run reference build -> solver-score -> score on the bundled SYNTHETIC demo suite demo-lite."""
    demo(output_dir)


demo_cmd.record_invocation = False  # type: ignore[attr-defined] - each step records its own command


def demo(out_dir: Path) -> None:
    """The TCSExam part of ``benchscore demo`` (SYNTHETIC data, not TCSExam results)."""
    from .commands import run_demo

    print_line(
        "SYNTHETIC demo: suite demo-lite and reference demo-k3-synthetic-v1 are made up by "
        "src/benchscore/tcsexam/data/generate_demo.py (fixed seed); these are not TCSExam results."
    )
    out = run_demo(out_dir, say=print_line)
    _print_index(out)
    print_line(f"status {out['status']}; tcsexam demo outputs (synthetic) in {out_dir}")


def verify_kinds() -> list[Any]:
    """The kinds of tcsexam output, each told apart by validation against its model (``benchscore verify``);
    every one is a function of its files."""
    from benchscore.common.verify import Kind

    from . import formats as F
    from .formulas import METRIC_ID, SOLVER_METRIC_ID

    return [
        Kind("tcsexam index", (F.IndexOutput,), lambda m: m == METRIC_ID, METRIC_ID, ("benchscore tcsexam score",)),
        Kind("tcsexam solver score", (F.SolverScoreOutput,), lambda m: m == SOLVER_METRIC_ID, SOLVER_METRIC_ID,
             ("benchscore tcsexam solver-score",)),
        Kind("tcsexam reference", (F.Reference,), lambda m: m == "tcsexam-reference", "tcsexam-reference",
             ("benchscore tcsexam reference build", "benchscore tcsexam reference merge")),
    ]


def main() -> None:
    group()
