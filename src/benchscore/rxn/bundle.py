"""Writing a build folder: datasets, prompts, example predictions, evaluators, README, report.md."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from benchscore.common.atomic import MANIFEST, atomic_directory, changed_since_written, dumps_json
from benchscore.common.errors import BadInput
from benchscore.common.provenance import created_at, provenance, sha256_bytes

from .build import FIB_TYPES, MC_TYPES, Build
from .conventions import conventions_markdown
from .prompts import TEMPLATES
from .tables import LoadedTables

FORMAT = {"multiple_choice": "rxn-multiple-choice", "fill_in_blank": "rxn-fill-in-blank"}
EVALUATOR = {"multiple_choice": "evaluate_multiple_choice.py", "fill_in_blank": "evaluate_fill_in_blank.py"}
CLI_EVAL = {"multiple_choice": "eval-mc", "fill_in_blank": "eval-fib"}
#: the command whose build folder each kind is: the ``written_by`` of the folder's manifest
OWNER = {"multiple_choice": "benchscore rxn build-mc", "fill_in_blank": "benchscore rxn build-fib"}


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


def check_name(name: str) -> str | None:
    """Why ``name`` cannot be a build folder's name (``--name``), or None: one plain folder name."""
    if not name or name in (".", "..") or "/" in name or os.sep in name or "\0" in name:
        return "expected one folder name (no '/', not '.' or '..')"
    if name.startswith("."):
        return "expected a name that does not start with '.' (hidden names are the command's temporary folders)"
    return None


def manifest(kind: str, files: list[tuple[str, bytes]]) -> bytes:
    """The build folder's list of what it wrote: ``written_by`` and each file with its sha256."""
    written = {name: sha256_bytes(data) for name, data in sorted(files)}
    return dumps_json({"written_by": OWNER[kind], "entries": sorted(written), "sha256": written})


def _listed(folder: Path) -> dict[str, Any]:
    """The folder's manifest as written (an unreadable or foreign one is empty)."""
    path = folder / MANIFEST
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def refuse_unless_own(target: Path, kind: str) -> None:
    """Refuse (one :class:`BadInput` line) to replace ``target`` unless it is a build folder this
    command wrote and nobody changed since: every entry listed in its manifest with the sha256 it was
    written with. Nothing is deleted that the command did not write."""
    owner = OWNER[kind]
    why, remedy = None, "choose another --name"
    cwd, real = os.path.realpath(os.getcwd()), os.path.realpath(target)
    if target.is_symlink() or not target.is_dir():
        why = "is not a folder"
    elif cwd == real or cwd.startswith(real.rstrip(os.sep) + os.sep):
        why = "is the current folder" if cwd == real else "holds the current folder"
    else:
        listed = _listed(target)
        other = listed.get("written_by")
        if other != owner and other in OWNER.values():
            why = f"is the build folder of {other}"
        else:
            sums = listed.get("sha256") if other == owner else None
            sums = sums if isinstance(sums, dict) else {}
            foreign, own = [], {}
            for entry in sorted(os.listdir(target)):
                if entry == MANIFEST:
                    continue
                path = target / entry
                if entry not in sums or path.is_symlink() or not path.is_file():
                    foreign.append(entry)
                else:
                    own[entry] = sums[entry]
            changed = changed_since_written(target, own)  # the same check as benchscore demo's folder
            if foreign:
                more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
                why = f"holds {foreign[0]!r}{more}, which {owner} did not write"
                remedy += ", or move " + ("it" if len(foreign) == 1 else "them") + " out of the folder"
            elif changed:
                more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
                why = f"holds {changed[0]!r}{more}, changed since {owner} wrote it"
                remedy += ", or delete the folder yourself if the change may go"
    if why is not None:
        raise BadInput(f"{owner} --name replaces only a build folder it wrote, unchanged, and this one {why}; "
                       f"{remedy}", source=target)


@contextmanager
def _replacing(target: Path, kind: str) -> Iterator[Path]:
    """Build a folder under a temporary name beside ``target``, then swap it in for ``target`` (an
    earlier build of this command, checked again just before the swap). On any error the temporary
    folder is removed and ``target`` is left as it was; a message names ``target``, never the
    temporary name."""
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise BadInput(f"cannot write the output: {exc.strerror or exc}", source=target) from None
    try:
        yield tmp
        refuse_unless_own(target, kind)
        aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        try:
            os.rename(target, aside / "content")
        except OSError:
            aside.rmdir()
            raise
        try:
            os.rename(tmp, target)
        except OSError:
            os.rename(aside / "content", target)
            aside.rmdir()
            raise
        shutil.rmtree(aside, ignore_errors=True)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            where = exc.filename if isinstance(exc.filename, str) else ""
            shown = target / os.path.relpath(where, tmp) if where.startswith(f"{tmp}{os.sep}") else target
            raise BadInput(f"cannot write the output: {exc.strerror or exc}", source=shown) from None
        raise


def write_build(kind: str, output_dir: Path, build: Build, inputs: list[LoadedTables], *, seed: int,
                command: str, prov_extra: dict[str, Any], metadata: tuple[str, bytes] | None = None,
                replace: bool = False, name: str | None = None) -> Path:
    """Write the self-contained build folder atomically; returns its path.

    The folder is ``output_dir/NAME`` with ``name``, else ``output_dir/YYYYMMDD_HHMMSS_KIND``. A new
    folder is claimed first (of two commands building it, one wins); an existing one is refused,
    except with ``name`` when it is this command's own earlier build, unchanged (see
    :func:`refuse_unless_own`), which is then replaced all or nothing. The folder's manifest
    (``.benchscore-written.json``) lists every file it holds with its sha256."""
    target = output_dir / (name or folder_name(kind))
    replacing = False
    if target.exists() or target.is_symlink():
        if name is not None:
            refuse_unless_own(target, kind)
            replacing = True
        elif not replace:
            raise BadInput("already exists; choose another --output-dir, give the build a --name, or wait a second",
                           source=target)
        else:
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
    names = [file_name for file_name, _ in files] + ["report.md"]
    files.append(("report.md", report_markdown(kind, build, inputs, command, names).encode()))
    with _replacing(target, kind) if replacing else atomic_directory(target) as tmp:
        tmp.chmod(0o755)
        for file_name, data in files:
            (tmp / file_name).write_bytes(data)
        (tmp / MANIFEST).write_bytes(manifest(kind, files))
    return target
