"""Loading condition tables: bundled data, user files, the optional DOI metadata CSV, SMILES canonicalisation."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from benchscore.common.errors import BadInput
from benchscore.common.readers import loads_json, read_csv, read_json_bytes, validate

from .conventions import BUNDLED
from .formats import ConditionTable, ConditionTableFile


def data_dir() -> Path:
    """The folder of bundled condition tables (with LICENSE and CITATION.md)."""
    return Path(str(resources.files("benchscore.rxn") / "data"))


def bundled_path(name: str) -> Path:
    if name not in BUNDLED:
        raise BadInput(f"unknown bundled dataset {name!r}; bundled: {', '.join(BUNDLED)}")
    return data_dir() / f"{name}.json"


@dataclass(frozen=True)
class LoadedTables:
    """Tables read from one file, with the file's name and raw bytes (for provenance)."""

    name: str
    raw: bytes
    tables: list[ConditionTable]


def load_table_file(path: Path) -> LoadedTables:
    """Read and validate a condition-table file (one BadInput line on any problem)."""
    raw = read_json_bytes(path)
    data = loads_json(raw, path)
    parsed = validate(ConditionTableFile, data, source=path)
    return LoadedTables(name=path.name, raw=raw, tables=list(parsed.tables))


def read_metadata(path: Path) -> dict[str, str]:
    """The optional metadata CSV (seed section 3): columns ``file_name`` and ``doi``."""
    rows = read_csv(path, required=("file_name", "doi"), optional=("title", "notes"))
    out: dict[str, str] = {}
    for row in rows:
        name, doi = row["file_name"], row["doi"]
        where = f"line {row['__line__']}"
        if not name:
            raise BadInput("empty file name", source=path, record=where, field="file_name")
        if name in out:
            raise BadInput("file name appears twice", source=path, record=where, field="file_name")
        if not doi.startswith("10."):
            raise BadInput(f"expected a DOI starting with '10.', got {doi!r}", source=path, record=where, field="doi")
        out[name] = doi
    return out


def apply_metadata(tables: list[ConditionTable], dois: dict[str, str]) -> list[ConditionTable]:
    """Set ``source.doi`` from the metadata CSV wherever ``source.file`` is listed there."""
    out = []
    for t in tables:
        doi = dois.get(t.source.file or "")
        if doi is not None and doi != t.source.doi:
            t = t.model_copy(update={"source": t.source.model_copy(update={"doi": doi})})
        out.append(t)
    return out


@lru_cache(maxsize=65536)
def canonical_smiles(smiles: str) -> str:
    """RDKit canonical SMILES per component: each dot-separated fragment canonicalised, sorted, joined.

    Raises ``ValueError`` when RDKit cannot parse a fragment. Applying it twice changes nothing.
    """
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    parts = []
    for frag in smiles.split("."):
        mol = Chem.MolFromSmiles(frag)
        if mol is None:
            raise ValueError(f"RDKit cannot parse SMILES {frag!r}")
        parts.append(Chem.MolToSmiles(mol))
    return ".".join(sorted(parts))
