"""issue 35, point 1: ``benchscore verify`` tells an output's kind by validation, never by a vote of field names.

An output is of a kind when it validates exactly against that kind's model (strict types, no unknown key);
one that validates as no kind, or as several, "cannot be verified" (exit 1) and says why. No edit of an output
(a key added, removed, renamed or changed anywhere) exits 0 unless verify re-ran it and got every value back,
or it is a live-model output that validates as that kind only and whose command and metric id say so. The
property test draws such edits on every kind of output ``benchscore demo`` and a ``benchscore leaderboard``
over the README's example logs write.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchscore.cli import _verify_kinds, cli
from benchscore.common import verify as V

ENV = {"SOURCE_DATE_EPOCH": "1767225600"}
REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "examples" / "results" / "logs"
#: the five top-level keys of an rxn predict audit the issue added to other outputs
AUDIT_KEYS = {"format": "benchscore-rxn-predict-audit", "prediction_file": "p.json", "summary": {}, "runs": [],
              "calls": []}


def run(*args: Any, expect: int = 0) -> Any:
    result = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert result.exit_code == expect, (result.output, result.stderr_bytes)
    return result


@pytest.fixture(scope="module")
def written(tmp_path_factory, inspect_ai_installed) -> Path:
    """Everything the demo (every domain) and a leaderboard of the example logs write."""
    root = tmp_path_factory.mktemp("kinds")
    run("demo", "--output-dir", root / "demo-out")
    shutil.copytree(LOGS, root / "logs")
    run("leaderboard", root / "logs", "--output-dir", root / "site")
    return root


@pytest.fixture(scope="module")
def verifier(written):
    with V.Verifier(cli, _verify_kinds(), [written]) as v:
        yield v


@pytest.fixture(scope="module")
def outputs(written, verifier) -> list[Path]:
    """Every output under the demo and the site, each verified untouched first (reproduced, or not recomputable)."""
    found = []
    for p in V.outputs_under(written):
        outcome = verifier.verify(p, explicit=False)
        if outcome.status != V.SKIPPED:
            assert outcome.status in (V.REPRODUCED, V.NOT_RECOMPUTABLE), (p, outcome)
            found.append(p)
    return found


@pytest.fixture(scope="module")
def by_kind(outputs) -> dict[str, list[Path]]:
    """The outputs by kind: the property draws a kind, then one of its outputs (every kind as likely as any
    other, however many outputs of it the demo writes)."""
    kinds = _verify_kinds()
    found: dict[str, list[Path]] = {}
    for p in outputs:
        found.setdefault(V.kinds_of(orjson.loads(p.read_bytes()), kinds)[0][0].name, []).append(p)
    return found


def test_every_output_validates_as_exactly_one_kind(outputs):
    kinds = _verify_kinds()
    names = set()
    for path in outputs:
        doc = orjson.loads(path.read_bytes())
        held, why = V.kinds_of(doc, kinds)
        assert len(held) == 1, (path, [k.name for k in held], why)
        names.add(held[0].name)
    # the demo and the leaderboard write these kinds (the others: live calls the demo does not make)
    assert names >= {"mira score", "mira public projection", "mira calibrated contract", "rxn evaluation",
                     "rxn question set", "tcsexam index", "tcsexam solver score", "tcsexam reference",
                     "swarm run report", "swarm audit", "swarm L01 stress report", "swarm L02 budget report",
                     "swarm acceptance matrix", "swarm model IO record", "leaderboard",
                     "leaderboard's Every Eval Ever record"}, names


@pytest.mark.parametrize("output", ["demo-out/rxn/eval_mc_all_varying.json", "demo-out/tcsexam/index.json",
                                    "site/leaderboard.json"])
def test_the_audit_keys_added_to_an_edited_output_do_not_turn_verification_off(written, tmp_path, output):
    """The issue's forgery: a headline edited, then the five top-level keys of an rxn predict audit added.
    On the code before issue 35 verify said 'not recomputable: rxn predict asks a live model' and exited 0."""
    doc = orjson.loads((written / output).read_bytes())
    if "overall" in doc:
        doc["overall"]["avg_relative_score"] = 0.95
    elif "models" in doc:
        next(iter(doc["models"].values()))["index"] = 99.0
    else:
        doc["metrics"][0]["rows"][0]["value"] = 0.99
    doc.update(AUDIT_KEYS)
    forged = written / Path(output).parent / "forged.json"
    forged.write_bytes(orjson.dumps(doc))
    try:
        r = CliRunner().invoke(cli, ["verify", str(forged), "--search", str(written)])
    finally:
        forged.unlink()
    assert r.exit_code == 1, r.output
    line = r.output.splitlines()[0]
    assert line.startswith(f"{forged}: cannot be verified: it validates as no kind of output benchscore writes "
                           "(closest: a "), line
    assert "not recomputable" not in r.output


def test_an_output_that_validates_as_two_kinds_cannot_be_verified(written, tmp_path):
    doc = orjson.loads((written / "demo-out" / "rxn" / "eval_mc_all_varying.json").read_bytes())
    twin = V.Kind("rxn evaluation (twin)", tuple(k.models for k in _verify_kinds() if k.name == "rxn evaluation")[0],
                  lambda m: True, "any", ("benchscore rxn eval-mc",))
    (tmp_path / "x.json").write_bytes(orjson.dumps(doc))
    with V.Verifier(cli, [*_verify_kinds(), twin], [written]) as verifier:
        outcome = verifier.verify(tmp_path / "x.json")
    assert outcome.status == V.UNVERIFIABLE
    assert outcome.message == ("it validates as 2 kinds of output (rxn evaluation, rxn evaluation (twin)): an output "
                               "is of one kind")


def test_a_value_of_another_type_makes_an_output_no_kind(written, tmp_path):
    """Validation is strict: a number written as text is not the number (pydantic's lax mode would take it)."""
    doc = orjson.loads((written / "demo-out" / "tcsexam" / "index.json").read_bytes())
    model = next(iter(doc["models"]))
    doc["models"][model]["index"] = str(doc["models"][model]["index"])
    (tmp_path / "x.json").write_bytes(orjson.dumps(doc))
    r = run("verify", tmp_path / "x.json", "--search", written, expect=1)
    assert f"(closest: a tcsexam index, but models.{model}.index: Input should be a valid number" in r.output


def test_a_live_output_needs_its_command_and_metric_id(written, tmp_path):
    doc = orjson.loads((written / "demo-out" / "swarm" / "l02.json").read_bytes())
    assert doc["provenance"]["command"] == "benchscore swarm budget"
    for change, said in ((lambda d: d["provenance"].pop("command"), "provenance.command is missing"),
                         (lambda d: d["provenance"].update(metric_id="swarm.L01"), "provenance.metric_id is 'swarm.L01'"),
                         (lambda d: d.update(extra=1), "it validates as no kind")):
        edited = copy.deepcopy(doc)
        change(edited)
        (tmp_path / "x.json").write_bytes(orjson.dumps(edited))
        r = run("verify", tmp_path / "x.json", expect=1)
        assert f"cannot be verified: {said}" in r.output, r.output


def test_an_output_without_its_provenance_in_a_folder_is_not_skipped(written, tmp_path):
    folder = tmp_path / "rxn"
    shutil.copytree(written / "demo-out" / "rxn", folder)
    out = folder / "eval_mc_all_varying.json"
    doc = orjson.loads(out.read_bytes())
    del doc["provenance"]
    out.write_bytes(orjson.dumps(doc))
    r = run("verify", folder, expect=1)
    assert (f"{out}: cannot be verified: it is a rxn evaluation without its provenance block: nothing records what "
            "made it") in r.output
    assert run("verify", out, expect=2).output.endswith("has no provenance block: not an output of benchscore\n")


# ---- the property: no edit exits 0 unless every value came back ------------------------------------------------


def _places(node: Any, path: tuple = ()) -> list[tuple]:
    """Every place in a JSON document: a key of an object, an element of a list (as its path)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*path, k))
            out.extend(_places(v, (*path, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*path, i))
            out.extend(_places(v, (*path, i)))
    return out


def _containers(node: Any, path: tuple = ()) -> list[tuple]:
    out = [path] if isinstance(node, dict) else []
    if isinstance(node, dict | list):
        for k, v in (node.items() if isinstance(node, dict) else enumerate(node)):
            out.extend(_containers(v, (*path, k)))
    return out


def _at(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                   st.floats(allow_nan=False, allow_infinity=False, width=64), st.text(max_size=12),
                   st.just([]), st.just({}))


@st.composite
def edits(draw, doc: dict, under: tuple = ()) -> tuple[str, tuple, dict]:
    """One key edit of ``doc`` (at or below ``under``): a key added to an object, a key or list element removed,
    a key renamed, or a value changed (to a value of any JSON type that is not the same JSON value)."""
    edited = copy.deepcopy(doc)
    op = draw(st.sampled_from(["add", "remove", "rename", "change"]))
    if op == "add":
        where = draw(st.sampled_from([c for c in _containers(edited) if c[:len(under)] == under]))
        node = _at(edited, where)
        key = draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in node))
        node[key] = draw(LEAVES)
        return op, (*where, key), edited
    places = [p for p in _places(edited) if p[:len(under)] == under]
    if op == "rename":
        places = [p for p in places if isinstance(p[-1], str)]
    where = draw(st.sampled_from(places))
    parent = _at(edited, where[:-1])
    if op == "remove":
        del parent[where[-1]]
    elif op == "rename":
        new = draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in parent))
        parent[new] = parent.pop(where[-1])
    else:
        old = parent[where[-1]]
        value = draw(LEAVES.filter(lambda v: orjson.dumps(v) != orjson.dumps(old)))
        parent[where[-1]] = value
    return op, where, edited


def _written_by_benchscore(path: tuple) -> bool:
    """The values an edit may change and still be given back by a re-run that takes them as its recipe: the
    recorded time, the version that wrote the output (compared apart, and named), and the arguments."""
    return len(path) >= 2 and path[0] == "provenance" and path[1] in ("created_at", "benchscore_version", "arguments")


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_key_edit_of_any_output_exits_0_unless_every_value_came_back(verifier, by_kind, data):
    _edit_and_verify(verifier, by_kind, data, ())


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_edit_of_a_provenance_exits_0_unless_the_rerun_gives_it_back(verifier, by_kind, data):
    """The same property, every edit in the provenance block: the recipe verify re-runs (where an edit of a
    recorded time or argument may be given back by the re-run it asks for, and then only)."""
    _edit_and_verify(verifier, {k: v for k, v in by_kind.items() if "Every Eval Ever" not in k}, data, ("provenance",))


def _edit_and_verify(verifier: V.Verifier, by_kind: dict[str, list[Path]], data: Any, under: tuple) -> None:
    from benchscore.common.errors import BadInput

    kind = data.draw(st.sampled_from(sorted(by_kind)), label="kind")
    path = data.draw(st.sampled_from(by_kind[kind]), label="output")
    original = path.read_bytes()
    doc = orjson.loads(original)
    op, where, edited = data.draw(edits(doc, under), label="edit")
    path.write_bytes(orjson.dumps(edited))  # in place: where its inputs, its leaderboard and its run's folder are
    try:
        outcome = verifier.verify(path)
    except BadInput:  # refused at the door (exit 2): no exit 0
        event(f"{op}: refused at the door")
        return
    finally:
        path.write_bytes(original)
    event(f"{op}: {outcome.status}")
    if V.EXIT[outcome.status] != 0:
        return
    if outcome.status == V.NOT_RECOMPUTABLE:  # a live output: of that kind only, saying so by command and metric
        held, _ = V.kinds_of(edited, _verify_kinds())
        assert len(held) == 1 and held[0].live is not None, (op, where, outcome.message)
        assert edited["provenance"]["command"] in held[0].commands
        assert held[0].metric(edited["provenance"]["metric_id"])
        return
    assert outcome.status == V.REPRODUCED, (op, where, outcome)
    assert op == "change" and _written_by_benchscore(where), (op, where, outcome.message)
    again = outcome.recomputed
    if where[:2] == ("provenance", "benchscore_version"):
        assert "written by benchscore" in outcome.message  # said, and every other value compared
        again = {**again, "provenance": {**again["provenance"], "benchscore_version": edited["provenance"][
            "benchscore_version"]}}
    assert json.dumps(again, sort_keys=True) == json.dumps(edited, sort_keys=True), (op, where)


def test_an_edit_the_rerun_gives_back_is_reproduced_and_said(verifier, written):
    """What the property allows, shown: an edited created_at is re-run at that time and comes back (the output
    is what the command writes at that time); an edited benchscore_version is named in the line."""
    path = written / "demo-out" / "rxn" / "eval_mc_all_varying.json"
    original = path.read_bytes()
    try:
        for key, value, said in (("created_at", "2030-06-01T12:00:00Z", "reproduced: "),
                                 ("benchscore_version", "0.0.9", "written by benchscore 0.0.9, recomputed with ")):
            doc = orjson.loads(original)
            doc["provenance"][key] = value
            path.write_bytes(orjson.dumps(doc))
            outcome = verifier.verify(path)
            assert outcome.status == V.REPRODUCED and said in outcome.message, outcome
            assert outcome.recomputed["provenance"]["created_at"] == doc["provenance"]["created_at"]
    finally:
        path.write_bytes(original)
