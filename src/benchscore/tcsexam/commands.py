"""What each ``tcsexam`` command does, as functions: read the inputs, compute, write the outputs.

:mod:`.cli` parses options, calls these and prints; it imports this module only inside a command,
so ``tcsexam --help`` never loads numpy, scipy or pydantic. No arithmetic here either: the
formulas live in :mod:`.formulas`, the checks in :mod:`.index`, :mod:`.records` and :mod:`.reference`.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from benchscore.common.atomic import atomic_write_bytes, atomic_write_json
from benchscore.common.cli import refuse_overwriting_inputs
from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance
from benchscore.common.readers import loads_json, read_bytes, read_json_bytes, validate
from benchscore.common.terminal import fmt
from benchscore.stats.intervals import LEVEL

from .formats import Reference
from .formulas import METRIC_ID
from .index import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, load_cohort, read_attempts, score_cohort
from .records import gc_paused
from .reference import (
    LoadedReference,
    build_task_reference,
    compile_reference,
    existing_conflict,
    load_reference,
    load_suite,
)
from .scoring import SolverScore, solver_score_result

DEMO_DATA = Path(__file__).parent / "data" / "demo"
ATTEMPT_FIELDS = [*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS]


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
    raws = [(p, read_json_bytes(p)) for p in runs]
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
        loaded = load_reference(reference)
        return write_solver_score(loaded, task, read_json_bytes(records), records, output)


def write_solver_score(loaded: LoadedReference, task: str, raw: bytes, records: Path, output: Path) -> dict:
    """Score ``raw`` records against an already loaded reference and write the output (atomic,
    one write); returns the output without its ``instances`` map."""
    with gc_paused():
        result = solver_score_result(loaded, task, raw, records)
        atomic_write_bytes(output, result.to_json())
        return result.summary


def batch_outputs(records: Sequence[Path], output_dir: Path) -> list[Path]:
    """The output of each records file: its path below the records files' deepest common folder,
    under ``output_dir`` (``runs/m1/t/attempt-1.json`` and ``runs/m2/t/attempt-1.json`` give
    ``DIR/m1/t/attempt-1.json`` and ``DIR/m2/t/attempt-1.json``; one file gives ``DIR/NAME``).

    The same records file given twice is refused."""
    absolute = [Path(os.path.abspath(p)) for p in records]
    seen: dict[Path, Path] = {}
    for given, path in zip(records, absolute, strict=True):
        key = Path(os.path.realpath(path))
        if key in seen:
            raise BadInput(f"the same records file is given twice (also {seen[key]})", source=given)
        seen[key] = given
    common = Path(os.path.commonpath([p.parent for p in absolute]))
    return [output_dir / p.relative_to(common) for p in absolute]


def solver_score_files(
    *,
    task: str,
    records: Sequence[Path],
    reference: Path,
    output_dir: Path,
    advance: Callable[[], None] | None = None,
) -> list[tuple[Path, Path, dict]]:
    """Score many records files of one task against one reference (loaded once); all or nothing.

    Every file is read, checked and scored before anything is written, so a bad records file
    refuses the whole call (one line) and writes nothing. The outputs (see :func:`batch_outputs`)
    are then written into a temporary folder inside ``output_dir`` and moved into place together.
    Returns ``(records, output, summary)`` per file, in the given order; ``advance`` is called
    after each file is scored (a progress bar)."""
    outputs = batch_outputs(records, output_dir)
    _refuse_replacing_inputs([*records, reference], outputs)
    results: list[SolverScore] = []
    with gc_paused():
        loaded = load_reference(reference)
        for path in records:
            results.append(solver_score_result(loaded, task, read_json_bytes(path), path))
            if advance is not None:
                advance()
        _write_together(output_dir, outputs, results)
    return [(r, o, res.summary) for r, o, res in zip(records, outputs, results, strict=True)]


def _refuse_replacing_inputs(inputs: Sequence[Path], outputs: Sequence[Path]) -> None:
    """Refuse a batch output that is one of the inputs, or a folder. The common pre-check sees
    ``--output-dir``, not the files inside it, nor a reference given by name."""
    refuse_overwriting_inputs(list(inputs), [("--output-dir", out) for out in outputs])
    for out in outputs:
        if out.is_dir():
            raise BadInput("is a folder; the output of a records file must be a file", source=out)


def _write_together(output_dir: Path, outputs: list[Path], results: list[SolverScore]) -> None:
    """Write every output into a temporary folder in ``output_dir``, then move each into place:
    an error (or Ctrl-C) while writing leaves ``output_dir`` as it was."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".solver-score-", suffix=".tmp", dir=output_dir))
    except OSError as exc:
        raise BadInput(f"cannot write the output: {exc.strerror or exc}", source=output_dir) from None
    try:
        staged = []
        for k, result in enumerate(results):
            staged.append(atomic_write_bytes(staging / f"{k}.json", result.to_json()))
        for out in outputs:
            out.parent.mkdir(parents=True, exist_ok=True)
        for tmp, out in zip(staged, outputs, strict=True):
            os.replace(tmp, out)
    except OSError as exc:
        raise BadInput(f"cannot write the outputs: {exc.strerror or exc}", source=output_dir) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def score_file(*, suite: Path, attempts: Path, cohort: Path, output: Path) -> dict:
    """Read suite, cohort and attempts, compute the index (and its 95 % intervals), write the output;
    returns it."""
    manifest = load_suite(suite)
    plan = load_cohort(cohort)
    rows = read_attempts(attempts)
    out = score_cohort(manifest, plan, rows, attempts_path=attempts, cohort_path=cohort)
    evidence = out.pop("evidence_sha256")
    extra: dict = {"evidence": evidence} if evidence else {}
    extra["intervals"] = {"level": LEVEL}
    out["provenance"] = provenance(
        METRIC_ID,
        {"suite": suite, "attempts": attempts, "cohort": cohort},
        reference={"reference_id": plan.solver_reference_id},
        extra=extra,
    )
    atomic_write_json(output, out)
    return out


def run_demo(out_dir: Path, data: Path = DEMO_DATA, *, say: Callable[[str], None] | None = None) -> dict:
    """reference build -> reference merge -> solver-score -> score, on the bundled SYNTHETIC demo.

    ``data/demo/demo.json`` (written by ``data/generate_demo.py``) says which files to use.
    ``say`` receives one line per step. Returns the index output.
    """
    from benchscore.common.provenance import recording

    from . import cli

    spec = loads_json(read_json_bytes(data / "demo.json"), data / "demo.json")
    out_dir = Path(out_dir)
    say = say or (lambda _line: None)
    parts = []
    for task in spec["solver_tasks"]:
        part = out_dir / "reference-parts" / f"{task['task']}.json"
        args = {"reference_id": f"{spec['reference_id']}-{task['task']}", "suite": spec["suite"], "task": task["task"],
                "kind": task["kind"], "direction": task["direction"], "runs": [data / r for r in task["runs"]],
                "output": part}
        with recording("benchscore tcsexam reference build", cli.reference_build, **args):
            say(build_reference_file(**args))
        parts.append(part)
    reference = out_dir / f"{spec['reference_id']}.json"
    with recording("benchscore tcsexam reference merge", cli.reference_merge, reference_id=spec["reference_id"],
                   parts=parts, output=reference):
        say(merge_reference_files(reference_id=spec["reference_id"], parts=parts, output=reference))
    cohort = load_cohort(data / "cohort.json")
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=ATTEMPT_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in csv.DictReader(io.StringIO((data / "attempts-other-tracks.csv").read_text(encoding="utf-8"))):
        writer.writerow({k: row.get(k) or "" for k in ATTEMPT_FIELDS})
    for rec in spec["solver_records"]:
        evidence = f"solver-scores/{rec['model']}/{rec['task']}/attempt-{rec['attempt']}.json"
        with recording("benchscore tcsexam solver-score", cli.solver_score_cmd, task=rec["task"],
                       records=(data / rec["records"],), reference=str(reference), output=out_dir / evidence):
            out = solver_score_file(
                task=rec["task"], records=data / rec["records"], reference=reference, output=out_dir / evidence
            )
        say(
            f"solver-score {rec['model']} {rec['task']} attempt {rec['attempt']}: "
            f"relative_score {fmt(out['relative_score'])}, {out['scored_instance_count']} scored instances, "
            f"unscored_instances {' '.join(out['unscored_instances']) or '-'}"
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
    args = {"suite": data / "suites" / f"{spec['suite']}.json", "attempts": attempts, "cohort": out_dir / "cohort.json",
            "output": out_dir / "index.json"}
    with recording("benchscore tcsexam score", cli.score_cmd, **{**args, "suite": str(args["suite"])}):
        return score_file(**args)
