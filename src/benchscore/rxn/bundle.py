"""Writing a build folder: datasets, prompts, example predictions, evaluators, README, report.md."""

from __future__ import annotations

import random
from importlib import resources
from pathlib import Path
from typing import Any

from benchscore.common.atomic import atomic_directory, dumps_json
from benchscore.common.errors import BadInput
from benchscore.common.provenance import created_at, provenance, sha256_bytes

from .build import FIB_TYPES, MC_TYPES, Build
from .conventions import conventions_markdown
from .prompts import TEMPLATES
from .tables import LoadedTables

FORMAT = {"multiple_choice": "rxn-multiple-choice", "fill_in_blank": "rxn-fill-in-blank"}
EVALUATOR = {"multiple_choice": "evaluate_multiple_choice.py", "fill_in_blank": "evaluate_fill_in_blank.py"}
CLI_EVAL = {"multiple_choice": "eval-mc", "fill_in_blank": "eval-fib"}


def _package_text(*parts: str) -> bytes:
    return (resources.files("benchscore.rxn").joinpath(*parts)).read_bytes()


def readme_snapshot() -> bytes:
    """The rxn README section as shipped with the package (a copy of the repository's docs/rxn.md)."""
    return _package_text("README.md")


def folder_name(kind: str) -> str:
    stamp = created_at()  # honours SOURCE_DATE_EPOCH
    return f"{stamp[0:4]}{stamp[5:7]}{stamp[8:10]}_{stamp[11:13]}{stamp[14:16]}{stamp[17:19]}_{kind}"


def example_predictions(samples: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """A minimal, valid prediction file: a seeded random index per sample (per key for FIB)."""
    out: dict[str, Any] = {}
    for s in samples:
        rng = random.Random(f"{seed}:example:{s['id']}")
        if "options" in s:
            out[s["id"]] = rng.randrange(len(s["options"]))
        else:
            out[s["id"]] = {k: rng.randrange(len(v)) for k, v in s["input"]["candidate_values"].items()}
    return out


def dataset_document(kind: str, qtype: str, samples: list, inputs: list[LoadedTables], prov_extra: dict,
                     seed: int, metadata: tuple[str, bytes] | None) -> dict[str, Any]:
    roles: dict[str, bytes] = {f"tables/{t.name}": t.raw for t in inputs}
    if metadata is not None:
        roles[f"metadata/{metadata[0]}"] = metadata[1]
    return {
        "format": FORMAT[kind],
        "question_type": qtype,
        "samples": samples,
        "provenance": provenance(f"rxn-testsetV6-{kind}", roles, seed=seed, extra=prov_extra),
    }


def _sources(inputs: list[LoadedTables]) -> list[str]:
    lines = ["| file | sha256 | tables | rows | dataset | DOI | licence |", "| --- | --- | --- | --- | --- | --- | --- |"]
    cites: dict[str, str] = {}
    for f in inputs:
        datasets = sorted({t.source.dataset for t in f.tables})
        dois = sorted({t.source.doi for t in f.tables if t.source.doi})
        lic = sorted({t.source.license for t in f.tables if t.source.license})
        lines.append(
            f"| {f.name} | {sha256_bytes(f.raw)[:16]}… | {len(f.tables)} | {sum(len(t.rows) for t in f.tables)} | "
            f"{'; '.join(datasets)} | {', '.join(dois) or '-'} | {', '.join(lic) or '-'} |"
        )
        for t in f.tables:
            if t.source.citation:
                cites[t.source.dataset] = t.source.citation
    lines.append("")
    lines += [f"- **{name}**: {text}" for name, text in sorted(cites.items())]
    return lines


def report_markdown(kind: str, build: Build, inputs: list[LoadedTables], command: str, files: list[str]) -> str:
    types = MC_TYPES if kind == "multiple_choice" else FIB_TYPES
    lines = [f"# testsetV6 {kind.replace('_', ' ')} build", "", f"Built {created_at()} by `{command}`.", ""]
    lines += ["## Sub-datasets", "", "| question_type | file | samples | skipped | why skipped |", "| --- | --- | --- | --- | --- |"]
    for q in types:
        skipped = build.skipped.get(q, {})
        why = "; ".join(f"{reason}: {n}" for reason, n in sorted(skipped.items())) or "-"
        lines.append(f"| `{q}` | `{kind}_{q}.json` | {len(build.samples[q])} | {sum(skipped.values())} | {why} |")
    lines += ["", "Rows left out because they have no measured outcome (no yield in a yield table, neither ee nor dr "
              f"in a table without yields): {build.dropped_rows}.", ""]
    lines += ["## Sources", ""] + _sources(inputs) + [""]
    lines += ["## Conventions", "", conventions_markdown()]
    lines += ["## Files", ""] + [f"- `{f}`" for f in files] + [""]
    lines += [
        "## Prompts",
        "",
        "`prompt_<question_type>.txt` are templates: the names in braces are filled from a sample's `input` "
        "(`reaction`, `constant_conditions`, `yield_measure`, `target_key`, `fixed_conditions`, `options`, "
        "`reference_conditions`, `query_keys`, `candidate_values`; `{{` and `}}` are literal braces). "
        "`benchscore.rxn.prompts.render(sample)` fills one. The model never sees `meta` or `answer`.",
        "",
    ]
    ev = EVALUATOR[kind]
    example_q = types[0]
    lines += [
        "## Commands",
        "",
        "Evaluate inside this folder with the Python standard library alone:",
        "",
        "```bash",
        f"python {ev} --dataset {kind}_{example_q}.json --prediction example_prediction_{example_q}.json",
        "```",
        "",
        "or with benchscore (same numbers, plus provenance and a table):",
        "",
        "```bash",
        f"benchscore rxn {CLI_EVAL[kind]} --dataset {kind}_{example_q}.json "
        f"--prediction example_prediction_{example_q}.json --output result.json",
        "```",
        "",
        "Predictions: " + (
            "`{sample_id: option_index}` (0-based integer, or null for no answer)."
            if kind == "multiple_choice"
            else "`{sample_id: {condition_key: candidate_index}}` (0-based integers, or null for no answer)."
        ),
        "The example prediction files carry no provenance block on purpose: every key of a prediction file is a "
        "sample id.",
        "",
        "Key fields: " + (
            "`options`, `answer` (every tied best index), `meta.option_relative_scores` (main scoring basis), "
            "`meta.best_yield`, `meta.best_effective_score`, `meta.selection_info`, `meta.reference_info`."
            if kind == "multiple_choice"
            else "`query_keys`, `input.candidate_values`, `input.constant_conditions`, `input.reference_conditions` "
            "(all_blank_reference only), `meta.legal_combinations` (every real combination with its relative score)."
        ),
        "",
    ]
    return "\n".join(lines)


def write_build(kind: str, output_dir: Path, build: Build, inputs: list[LoadedTables], *, seed: int,
                command: str, prov_extra: dict[str, Any], metadata: tuple[str, bytes] | None = None,
                replace: bool = False) -> Path:
    """Write the self-contained build folder atomically; returns its path."""
    target = output_dir / folder_name(kind)
    if target.exists():
        if not replace:
            raise BadInput("already exists; choose another --output-dir or wait a second", source=target)
        import shutil

        shutil.rmtree(target)
    types = MC_TYPES if kind == "multiple_choice" else FIB_TYPES
    files: list[tuple[str, bytes]] = []
    for q in types:
        doc = dataset_document(kind, q, build.samples[q], inputs, prov_extra, seed, metadata)
        files.append((f"{kind}_{q}.json", dumps_json(doc)))
        files.append((f"prompt_{q}.txt", TEMPLATES[q].encode()))
        files.append((f"example_prediction_{q}.json", dumps_json(example_predictions(build.samples[q], seed))))
    files.append((EVALUATOR[kind], _package_text("standalone", EVALUATOR[kind])))
    files.append(("rxn_metrics.py", _package_text("metrics.py")))
    files.append(("rxn_standalone.py", _package_text("standalone", "_common.py")))
    files.append(("README.md", readme_snapshot()))
    names = [name for name, _ in files] + ["report.md"]
    files.append(("report.md", report_markdown(kind, build, inputs, command, names).encode()))
    with atomic_directory(target) as tmp:
        tmp.chmod(0o755)
        for name, data in files:
            (tmp / name).write_bytes(data)
    return target
