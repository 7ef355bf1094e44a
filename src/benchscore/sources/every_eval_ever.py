"""Reading Every Eval Ever records at the door: an aggregate record and its instance-level samples.

Every Eval Ever (evaleval/every_eval_ever) stores one evaluation of one model as an aggregate JSON
record (``eval.schema.json``: model, eval library, ``evaluation_results`` with each metric's
config and score, ``detailed_evaluation_results`` pointing at the samples file with its sha256)
and, beside it, ``<uuid>_samples.jsonl``: one instance-level record per sample
(``instance_level_eval.schema.json``: ``sample_id``, ``sample_hash``, ``evaluation.score`` and
``is_correct``, ``error``, ``metadata``). Both are validated against the published JSON Schemas,
bundled in ``sources/data/every_eval_ever`` with their licence, with ``jsonschema`` (imported when a
record is read). Aggregate records of schema 0.2.2 and 0.3.0 are read; instance records of 0.2.1
to 0.3.0 (one schema body, only its version string changed). A record that breaks its schema is
one line naming file, line and the field's JSON path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from benchscore.common.errors import BadInput

_DATA = Path(__file__).resolve().parent / "data" / "every_eval_ever"
AGGREGATE_SCHEMAS = {"0.2.2": "eval-0.2.2.schema.json", "0.3.0": "eval-0.3.0.schema.json"}
INSTANCE_SCHEMA = "instance_level_eval.schema.json"
#: the instance schema versions whose body is the bundled one (``instance_level_eval_`` prefix optional)
INSTANCE_VERSIONS = ("0.2.1", "0.2.2", "0.2.3", "0.3.0")
SAMPLES_SUFFIX = "_samples.jsonl"


@cache
def _validator(name: str) -> Any:
    import jsonschema

    from benchscore.common.readers import read_json

    schema = read_json(_DATA / name)
    return jsonschema.Draft7Validator(schema)


def _path_of(error: Any) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(root)"


def _check(validator: Any, doc: Any, source: Path, record: str | None) -> None:
    error = next(iter(sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))), None)
    if error is not None:
        message = " ".join(error.message.split())
        if len(message) > 200:
            message = message[:197] + "..."
        raise BadInput(f"does not follow the Every Eval Ever schema: {message}", source=source, record=record,
                       field=_path_of(error))


def instance_version(text: Any) -> str | None:
    """``"instance_level_eval_0.2.2"`` or ``"0.2.2"`` -> ``"0.2.2"``; None for another version."""
    if not isinstance(text, str):
        return None
    m = re.fullmatch(r"(?:instance_level_eval_)?(\d+\.\d+\.\d+)", text)
    return m.group(1) if m and m.group(1) in INSTANCE_VERSIONS else None


def is_aggregate(doc: Any) -> bool:
    return isinstance(doc, dict) and "evaluation_results" in doc and "schema_version" in doc and "model_info" in doc


def read_aggregate(path: Path) -> dict[str, Any]:
    """An aggregate record, validated against the schema of its ``schema_version``."""
    from benchscore.common.readers import read_json

    doc = read_json(path)
    if not is_aggregate(doc):
        raise BadInput("not an Every Eval Ever aggregate record (it needs schema_version, model_info and "
                       "evaluation_results)", source=path)
    version = doc["schema_version"]
    if version not in AGGREGATE_SCHEMAS:
        raise BadInput(f"schema_version {version!r}; benchscore reads Every Eval Ever aggregate records of "
                       f"{' and '.join(AGGREGATE_SCHEMAS)}", source=path, field="schema_version")
    _check(_validator(AGGREGATE_SCHEMAS[version]), doc, path, None)
    return doc


def validate_aggregate(doc: dict[str, Any], source: Path) -> None:
    """Check a record benchscore writes against the aggregate schema of its ``schema_version``."""
    _check(_validator(AGGREGATE_SCHEMAS[doc["schema_version"]]), doc, source, None)


def aggregate_problem(doc: Any, version: str) -> str | None:
    """Why ``doc`` is not an aggregate record of schema ``version`` (its ``schema_version`` and the first
    error against that schema, with its JSON path), None when it is one."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    if doc.get("schema_version") != version:
        return f"schema_version: {doc.get('schema_version')!r}, not {version!r}"
    try:
        _check(_validator(AGGREGATE_SCHEMAS[version]), doc, Path("record"), None)
    except BadInput as exc:
        return f"{exc.field}: {exc.detail}"
    return None


def read_instances(path: Path) -> list[dict[str, Any]]:
    """Every instance-level record of a samples file, each validated (one line per failure)."""
    from benchscore.common.readers import loads_json, read_json_bytes

    data = read_json_bytes(path, lines=True)
    validator = _validator(INSTANCE_SCHEMA)
    out = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        doc = loads_json(raw, path, line=number)
        record = f"line {number}"
        if not isinstance(doc, dict):
            raise BadInput("expected a JSON object (an Every Eval Ever instance-level record)", source=path,
                           record=record)
        if instance_version(doc.get("schema_version")) is None:
            raise BadInput(f"schema_version {doc.get('schema_version')!r}; benchscore reads Every Eval Ever "
                           f"instance-level records of {', '.join(INSTANCE_VERSIONS)}", source=path, record=record,
                           field="schema_version")
        _check(validator, doc, path, record)
        doc["__line__"] = number
        out.append(doc)
    if not out:
        raise BadInput("holds no instance-level record", source=path)
    return out


@dataclass
class EeeEvaluation:
    """An aggregate record (None when the samples file was given without one beside it) and its samples."""

    aggregate_path: Path | None
    aggregate: dict[str, Any] | None
    samples_path: Path
    records: list[dict[str, Any]]


def samples_beside(aggregate_path: Path, aggregate: dict[str, Any]) -> Path:
    detail = aggregate.get("detailed_evaluation_results")
    if not isinstance(detail, dict) or not detail.get("file_path"):
        raise BadInput("has no instance-level records (no detailed_evaluation_results.file_path); comparing needs "
                       "per-sample results", source=aggregate_path, field="detailed_evaluation_results")
    return aggregate_path.parent / Path(str(detail["file_path"])).name


def read_evaluation(path: Path) -> EeeEvaluation:
    """An aggregate record (``X.json``) with its samples (``X_samples.jsonl`` beside it, as its
    ``detailed_evaluation_results`` names it), or a samples file with the aggregate beside it if there
    is one. The samples file's sha256 and row count must be what the aggregate record says, and every
    record's ``evaluation_id`` the aggregate's."""
    from benchscore.common.provenance import sha256_file

    if path.name.endswith(SAMPLES_SUFFIX):
        samples_path = path
        beside = path.with_name(path.name[: -len(SAMPLES_SUFFIX)] + ".json")
        aggregate_path = beside if beside.is_file() else None
    else:
        aggregate_path, samples_path = path, None
    aggregate = read_aggregate(aggregate_path) if aggregate_path is not None else None
    if aggregate is not None and samples_path is None:
        samples_path = samples_beside(aggregate_path, aggregate)  # type: ignore[arg-type]
        if not (samples_path.is_symlink() or samples_path.exists()):  # a FIFO, a loop: refused as such below
            raise BadInput(f"its instance-level records {samples_path.name} are not beside it", source=aggregate_path,
                           field="detailed_evaluation_results.file_path")
    records = read_instances(samples_path)  # type: ignore[arg-type]
    if aggregate is not None:
        detail = aggregate.get("detailed_evaluation_results") or {}
        checksum = detail.get("checksum")
        if checksum and detail.get("hash_algorithm", "sha256") == "sha256":
            got = sha256_file(samples_path)  # type: ignore[arg-type]
            if got != checksum:
                raise BadInput(f"{samples_path.name} has sha256 {got}, but its aggregate record says {checksum}: "  # type: ignore[union-attr]
                               "the samples were changed after the record was written", source=aggregate_path,
                               field="detailed_evaluation_results.checksum")
        rows = detail.get("total_rows")
        if isinstance(rows, int) and rows != len(records):
            raise BadInput(f"{samples_path.name} holds {len(records)} records, but its aggregate record says "  # type: ignore[union-attr]
                           f"{rows}", source=aggregate_path, field="detailed_evaluation_results.total_rows")
        for r in records:
            if r["evaluation_id"] != aggregate["evaluation_id"]:
                raise BadInput(f"evaluation_id {r['evaluation_id']!r} is not its aggregate record's "
                               f"{aggregate['evaluation_id']!r}", source=samples_path, record=f"line {r['__line__']}",
                               field="evaluation_id")
    return EeeEvaluation(aggregate_path, aggregate, samples_path, records)  # type: ignore[arg-type]


__all__ = ["AGGREGATE_SCHEMAS", "aggregate_problem", "INSTANCE_VERSIONS", "SAMPLES_SUFFIX", "EeeEvaluation", "instance_version",
           "is_aggregate", "read_aggregate", "read_evaluation", "read_instances", "samples_beside"]
