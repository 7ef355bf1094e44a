"""The ``tcsexam`` commands (also mounted as ``benchscore tcsexam``): wiring only, no arithmetic."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import click
from rich.table import Table

from benchscore.common.atomic import atomic_write_bytes, atomic_write_json
from benchscore.common.cli import group as _group
from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance
from benchscore.common.readers import loads_json, read_bytes, validate
from benchscore.common.report import console, fmt, table

from .formats import FORMATS as _FORMATS
from .formats import Reference
from .formulas import METRIC_ID, TRACKS
from .index import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, load_cohort, read_attempts, score_cohort
from .records import gc_paused
from .reference import (
    DATA_ENV,
    LoadedReference,
    build_task_reference,
    compile_reference,
    existing_conflict,
    load_reference,
    load_suite,
    resolve,
)
from .scoring import solver_score_result

FORMATS: dict[str, type] = dict(_FORMATS)
DEMO_DATA = Path(__file__).parent / "data" / "demo"

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=DATA_ENV,
    default=None,
    help=f"Folder with suites/NAME.json and references/NAME.json (or set {DATA_ENV}).",
)


@_group("tcsexam", context_settings={"help_option_names": ["-h", "--help"]})
def group() -> None:
    """TCSExam: fixed-reference Solver scores and the composite index 30P+30S+30C+10O."""


@group.group("reference", cls=type(group))
def reference_group() -> None:
    """Build, merge and inspect fixed references."""


def _refuse_overwriting_an_input(output: Path, *inputs: Path) -> None:
    """Inputs are never modified: an --output that is one of the inputs is refused."""
    target = Path(output).resolve()
    for path in inputs:
        if Path(path).resolve() == target:
            raise BadInput(
                "--output is also an input of this command; write the output elsewhere", source=output
            )


def _write_reference(data: dict, output: Path) -> str:
    """Write unless ``output`` already holds it; refuse a changed reference under the same id."""
    verdict = existing_conflict(output, data)
    if verdict == "same":
        return "unchanged"
    if verdict is not None:
        raise BadInput(verdict, source=output, field="reference_id")
    atomic_write_json(output, data)
    return "written"


def build_reference_file(
    *,
    reference_id: str,
    suite: str,
    task: str,
    kind: str,
    direction: str,
    runs: list[Path],
    output: Path,
    relative_floor: float = 0.02,
    absolute_floor: float = 1e-9,
) -> str:
    """Freeze runs into a one-task reference file; returns a one-line summary."""
    _refuse_overwriting_an_input(output, *runs)
    raws = [(p, read_bytes(p)) for p in runs]
    instances, unscored = build_task_reference(raws, kind=kind)
    if not instances:
        raise BadInput("the runs hold no instance records", source=runs[0])
    data = {
        "reference_id": reference_id,
        "suite": suite,
        "scale_floors": {"relative": relative_floor, "absolute": absolute_floor},
        "tasks": {task: {"kind": kind, "direction": direction, "instances": instances}},
        "unscored_reference_instances": {task: unscored} if unscored else {},
    }
    ref = validate(Reference, data, source=output)
    compile_reference(ref, output)  # the same checks as loading
    data["provenance"] = provenance(
        "tcsexam-reference",
        {f"run{i}": raw for i, (_, raw) in enumerate(raws, start=1)},
        extra={"runs": [p.name for p in runs]},
    )
    verdict = _write_reference(data, output)
    return (
        f"reference {reference_id!r} task {task!r}: {len(instances) - len(unscored)} scored, "
        f"{len(unscored)} unscored instances from {len(runs)} runs -> {output} ({verdict})"
    )


def merge_reference_files(*, reference_id: str, parts: list[Path], output: Path) -> str:
    """Merge one-task (or several-task) references into one file; returns a one-line summary."""
    _refuse_overwriting_an_input(output, *parts)
    loaded = [load_reference(p) for p in parts]
    first = loaded[0].reference
    tasks: dict = {}
    unscored: dict = {}
    for part in loaded:
        ref = part.reference
        if ref.suite != first.suite:
            raise BadInput(
                f"suite {ref.suite!r} differs from {first.suite!r} ({parts[0]})",
                source=part.path,
                field="suite",
            )
        if ref.scale_floors != first.scale_floors:
            raise BadInput(
                f"scale floors differ from those of {parts[0]}", source=part.path, field="scale_floors"
            )
        for name, task in ref.tasks.items():
            if name in tasks:
                raise BadInput("task appears in two parts", source=part.path, field=f"tasks.{name}")
            tasks[name] = task.model_dump()
        unscored.update({k: list(v) for k, v in ref.unscored_reference_instances.items()})
    data = {
        "reference_id": reference_id,
        "suite": first.suite,
        "scale_floors": first.scale_floors.model_dump(),
        "tasks": tasks,
        "unscored_reference_instances": unscored,
    }
    compile_reference(validate(Reference, data, source=output), output)
    data["provenance"] = provenance(
        "tcsexam-reference",
        {f"part{i}": p for i, p in enumerate(parts, start=1)},
        extra={"parts": [{"reference_id": x.reference_id, "sha256": x.sha256} for x in loaded]},
    )
    verdict = _write_reference(data, output)
    return f"reference {reference_id!r}: {len(tasks)} tasks from {len(parts)} parts -> {output} ({verdict})"


def solver_score_file(*, task: str, records: Path, reference: Path, output: Path) -> dict:
    """Read, score and write one solver-score output; returns it without the per-instance
    ``instances`` map (that key holds None), which is only written to the file.

    The cyclic garbage collector stays paused for the whole command: the million-object
    reference and records are acyclic and freed by reference counting before it resumes (else
    each collection on the way rescans them all)."""
    with gc_paused():
        return _solver_score_file(task=task, records=records, reference=reference, output=output)


def _solver_score_file(*, task: str, records: Path, reference: Path, output: Path) -> dict:
    _refuse_overwriting_an_input(output, records, reference)
    loaded = load_reference(reference)
    return write_solver_score(loaded, task, read_bytes(records), records, output)


def write_solver_score(loaded: LoadedReference, task: str, raw: bytes, records: Path, output: Path) -> dict:
    """Score ``raw`` records against an already loaded reference and write the output (atomic,
    one write); returns the output without its ``instances`` map (the batch/benchmark entry)."""
    with gc_paused():
        result = solver_score_result(loaded, task, raw, records)
        atomic_write_bytes(output, result.to_json())
        return result.summary


def score_file(*, suite: Path, attempts: Path, cohort: Path, output: Path) -> dict:
    """Read suite, cohort and attempts, compute the index, write the output; returns it."""
    _refuse_overwriting_an_input(output, suite, attempts, cohort)
    manifest = load_suite(suite)
    plan = load_cohort(cohort)
    rows = read_attempts(attempts)
    out = score_cohort(manifest, plan, rows, attempts_path=attempts, cohort_path=cohort)
    evidence = out.pop("evidence_sha256")
    out["provenance"] = provenance(
        METRIC_ID,
        {"suite": suite, "attempts": attempts, "cohort": cohort},
        reference={"reference_id": plan.solver_reference_id},
        extra={"evidence": evidence} if evidence else None,
    )
    atomic_write_json(output, out)
    return out


@reference_group.command("build")
@click.option(
    "--id",
    "reference_id",
    required=True,
    help="Reference id, e.g. paper-k3-fixed-260925 (a new id per change).",
)
@click.option("--suite", required=True, help="Suite the reference belongs to (lite, full, demo-lite, ...).")
@click.option("--task", required=True, help="Task id.")
@click.option("--kind", type=click.Choice(["objective", "solve"]), required=True)
@click.option("--direction", type=click.Choice(["maximize", "minimize"]), required=True)
@click.option("--relative-floor", type=float, default=0.02, show_default=True, help="scale >= this * |mu|.")
@click.option("--absolute-floor", type=float, default=1e-9, show_default=True, help="scale >= this.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
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
    console.print(
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
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.argument("parts", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def reference_merge(reference_id: str, output: Path, parts: tuple[Path, ...]) -> None:
    """Merge references of distinct tasks (same suite and scale floors) into one reference."""
    console.print(merge_reference_files(reference_id=reference_id, parts=list(parts), output=output))


@reference_group.command("show")
@data_dir_option
@click.argument("reference")
def reference_show(reference: str, data_dir: Path | None) -> None:
    """Print a reference's tasks, instance counts, scored/unscored counts and sha256."""
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
    console.print(
        table(
            f"reference {ref.reference_id} (suite {ref.suite}; floors relative {ref.scale_floors.relative}, "
            f"absolute {ref.scale_floors.absolute})",
            ["task", "kind", "direction", "instances", "scored", "unscored"],
            rows,
        )
    )
    listed_absent = sum(
        len([i for i in names if i not in loaded.tasks[task].index])
        for task, names in ref.unscored_reference_instances.items()
    )
    if listed_absent:
        console.print(f"plus {listed_absent} unscored reference instance(s) listed without values")
    console.print(f"sha256 {loaded.sha256}  {loaded.path}")


@group.command("solver-score")
@click.option("--task", required=True, help="Task id in the reference.")
@click.option(
    "--records",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Final instance records (JSON list).",
)
@click.option(
    "--reference",
    "reference",
    required=True,
    help="lite, full (from the data folder) or PATH to a reference file.",
)
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@data_dir_option
def solver_score_cmd(task: str, records: Path, reference: str, output: Path, data_dir: Path | None) -> None:
    """Score one task's final instance records against a fixed reference (relative_score)."""
    ref_path = resolve(reference, "reference", data_dir)
    out = solver_score_file(task=task, records=records, reference=ref_path, output=output)
    console.print(
        f"{task}: relative_score {fmt(out['relative_score'], 6)} over {out['scored_instance_count']} scored "
        f"instances ({len(out['unscored_instances'])} unscored) against {out['reference_id']} -> {output}"
    )


def _index_table(out: dict) -> Table:
    rows = []
    for model, res in out["models"].items():
        tm = res["track_means"]
        rows.append((model, res["status"], *(tm[t] for t in TRACKS), res["index"]))
    t = table(
        f"{out['metric_id']}, suite {out['suite']}, {out['solver_protocol']} solver protocol\n"
        "P theorem, S solver, C construction, O conjecture; index = 30P+30S+30C+10O",
        ["model", "status", "P", "S", "C", "O", "index"],
        rows,
        digits=3,
    )
    t.columns[0].min_width = max(len(m) for m in out["models"])
    t.columns[1].min_width = max(len(r["status"]) for r in out["models"].values())
    return t


@group.command("score")
@click.option("--suite", required=True, help="lite, full (from the data folder) or PATH to a suite manifest.")
@click.option(
    "--attempts", type=click.Path(dir_okay=False, path_type=Path), required=True, help="attempts.csv"
)
@click.option("--cohort", type=click.Path(dir_okay=False, path_type=Path), required=True, help="cohort.json")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@data_dir_option
def score_cmd(suite: str, attempts: Path, cohort: Path, output: Path, data_dir: Path | None) -> None:
    """Compute the composite index 30P+30S+30C+10O for each model of a cohort."""
    out = score_file(suite=resolve(suite, "suite", data_dir), attempts=attempts, cohort=cohort, output=output)
    _print_index(out)
    console.print(f"status {out['status']} -> {output}")


def _print_index(out: dict) -> None:
    console.print(_index_table(out))
    for model, res in out["models"].items():
        for problem in res["problems"]:
            console.print(f"  {model}: {problem}")


# ---- demo -----------------------------------------------------------------------------------

ATTEMPT_FIELDS = [*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS]


def run_demo(out_dir: Path, data: Path = DEMO_DATA, *, quiet: bool = False) -> dict:
    """reference build -> reference merge -> solver-score -> score, on the bundled SYNTHETIC demo.

    ``data/demo/demo.json`` (written by ``data/generate_demo.py``) says which files to use.
    Returns the index output.
    """
    spec = loads_json(read_bytes(data / "demo.json"), data / "demo.json")
    out_dir = Path(out_dir)
    say = (lambda _msg: None) if quiet else console.print
    parts = []
    for task in spec["solver_tasks"]:
        part = out_dir / "reference-parts" / f"{task['task']}.json"
        say(
            build_reference_file(
                reference_id=f"{spec['reference_id']}-{task['task']}",
                suite=spec["suite"],
                task=task["task"],
                kind=task["kind"],
                direction=task["direction"],
                runs=[data / r for r in task["runs"]],
                output=part,
            )
        )
        parts.append(part)
    reference = out_dir / f"{spec['reference_id']}.json"
    say(merge_reference_files(reference_id=spec["reference_id"], parts=parts, output=reference))
    cohort = load_cohort(data / "cohort.json")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=ATTEMPT_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in csv.DictReader(io.StringIO((data / "attempts-other-tracks.csv").read_text(encoding="utf-8"))):
        writer.writerow({k: row.get(k) or "" for k in ATTEMPT_FIELDS})
    for rec in spec["solver_records"]:
        evidence = f"solver-scores/{rec['model']}/{rec['task']}/attempt-{rec['attempt']}.json"
        out = solver_score_file(
            task=rec["task"], records=data / rec["records"], reference=reference, output=out_dir / evidence
        )
        say(
            f"solver-score {rec['model']} {rec['task']} attempt {rec['attempt']}: relative_score {fmt(out['relative_score'], 6)}"
        )
        writer.writerow(
            {
                "model": rec["model"],
                "track": "solver",
                "item": rec["task"],
                "attempt": rec["attempt"],
                "score": repr(out["relative_score"]),
                "adoption_status": rec["adoption_status"],
                "score_status": "valid",
                "score_type": "fixed_reference_relative",
                "solver_protocol": cohort.solver_protocol,
                "reference_id": out["reference_id"],
                "evidence": evidence,
                "reason": rec.get("reason", ""),
            }
        )
    attempts = out_dir / "attempts.csv"
    atomic_write_bytes(attempts, buf.getvalue().encode("utf-8"))
    atomic_write_bytes(out_dir / "cohort.json", read_bytes(data / "cohort.json"))
    out = score_file(
        suite=data / "suites" / f"{spec['suite']}.json",
        attempts=attempts,
        cohort=out_dir / "cohort.json",
        output=out_dir / "index.json",
    )
    if not quiet:
        _print_index(out)
    return out


def demo(out_dir: Path) -> None:
    """The TCSExam part of ``benchscore demo`` (SYNTHETIC data, not TCSExam results)."""
    console.print(
        "[bold yellow]SYNTHETIC demo[/]: suite demo-lite and reference demo-k3-synthetic-v1 are made up by "
        "src/benchscore/tcsexam/data/generate_demo.py (fixed seed); these are not TCSExam results."
    )
    run_demo(out_dir)
    console.print(f"tcsexam demo outputs (synthetic) in {out_dir}")


@group.command("demo")
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tcsexam-demo"),
    show_default=True,
)
def demo_cmd(output_dir: Path) -> None:
    """Run reference build -> solver-score -> score on the bundled SYNTHETIC demo suite demo-lite."""
    demo(output_dir)


def main() -> None:
    group()
