"""Issue 39 point 4: a literature CSV whose outcome column is not named as one is refused, and a set scored
on the fallback measure (no yield column: selectivity) says so in the terminal and in the output."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.rxn.literature import measure_like

REPO = Path(__file__).resolve().parents[2]
CSV = REPO / "examples" / "rxn" / "literature_tables.csv"


def _renamed(tmp_path: Path, old: str, new: str | None) -> Path:
    """The example CSV with column ``old`` renamed (None: left out)."""
    lines = CSV.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    at = header.index(old)
    rows = [line.split(",") for line in lines]
    for row in rows:
        if new is None:
            del row[at]
        elif row is rows[0]:
            row[at] = new
    out = tmp_path / "tables.csv"
    out.write_text("\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize(("old", "heading"), [
    ("yield", "Yield (%)"), ("yield", "yield_%"), ("yield", "Yield"), ("yield", "YIELD [%]"), ("yield", "isolated yield"),
    ("yield", "Yield%"), ("yield", "% yield"), ("yield", "conversion (%)"), ("ee", "EE"), ("ee", "e.e."),
    ("ee", "ee (%)"), ("ee", "er"), ("ee", "E.R."), ("dr", "d.r."), ("dr", "DR"), ("dr", "dr (syn:anti)"),
])
def test_a_column_that_looks_like_an_outcome_is_refused_naming_the_accepted_names(tmp_path, old, heading):
    """Today ``Yield (%)`` became a condition key (measure none): build-mc put the yields among the options."""
    csv = _renamed(tmp_path, old, heading)
    out = tmp_path / "t.json"
    r = CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(csv), "--output", str(out)])
    assert r.exit_code == 2, r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert f"field {heading!r}" in lines[0] and "line 1" in lines[0] and str(csv) in lines[0]
    assert "accepted names: outcomes yield, ee, dr" in lines[0] and "table_id" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("heading", ["catalyst", "solvent", "temperature", "time", "base", "ligand", "additive",
                                     "Cat. loading (mol%)", "concentration (M)", "equiv", "pressure", "light",
                                     "electrode", "reagent", "oxidant", "total time", "ee_ligand", "yielder"])
def test_condition_keys_do_not_look_like_outcomes(heading):
    assert measure_like(heading) is None


def test_the_outcome_words_read_as_the_column_they_mean():
    assert measure_like("Yield (%)") == measure_like("yield_%") == measure_like("NMR yield") == "yield"
    assert measure_like("EE") == measure_like("e.e. (%)") == measure_like("er") == "ee"
    assert measure_like("d.r.") == measure_like("dr (syn/anti)") == "dr"


def test_a_set_without_a_yield_column_says_it_is_scored_on_selectivity(tmp_path):
    csv = _renamed(tmp_path, "yield", None)
    out = tmp_path / "t.json"
    r = CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(csv), "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert "no yield column" in r.output and "scored on selectivity" in r.output
    doc = orjson.loads(out.read_bytes())
    assert doc["fallback_measure"] == "selectivity"
    assert all(t["yield_measure"] is None for t in doc["tables"])
    built = CliRunner().invoke(cli, ["rxn", "build-mc", "--tables", str(out), "--max-options", "4", "--output-dir",
                                     str(tmp_path / "b")])
    assert built.exit_code == 0, built.output
    assert "scored on selectivity" in built.output and "aldol_demo" in built.output
    verified = CliRunner().invoke(cli, ["verify", str(out)])
    assert verified.exit_code == 0, verified.output


def test_a_set_with_a_yield_column_has_no_fallback_measure(tmp_path):
    out = tmp_path / "t.json"
    r = CliRunner().invoke(cli, ["rxn", "convert-csv", "--csv", str(CSV), "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert "fallback_measure" not in orjson.loads(out.read_bytes()) and "scored on selectivity" not in r.output
