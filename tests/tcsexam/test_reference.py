"""Reference files: validation on load, build, merge, show, named references."""

from __future__ import annotations

import copy
import hashlib
import json
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tcsexam_helpers import ISSUE_REFERENCE, assert_one_line_error, run, write_json

from benchscore.common.errors import BadInput
from benchscore.tcsexam import reference as reference_mod
from benchscore.tcsexam.reference import load_reference, parse_reference


def test_issue_example_reference_loads(tmp_path):
    loaded = load_reference(write_json(tmp_path / "ref.json", ISSUE_REFERENCE))
    task = loaded.tasks["maxcut-mqlib"]
    assert task.instances == ["g1", "g2"]
    assert task.scored.tolist() == [True, True]
    assert task.mu.tolist() == [12.0, 5.75]
    assert task.scale[0] == 2.0
    # g2: s = sqrt(0.125) = 0.354 > 0.02 * 5.75 = 0.115
    assert task.scale[1] == pytest.approx(0.125**0.5)
    assert loaded.sha256 == hashlib.sha256((tmp_path / "ref.json").read_bytes()).hexdigest()


def mutate(fn):
    ref = copy.deepcopy(ISSUE_REFERENCE)
    fn(ref)
    return ref


BAD_REFERENCES = [
    (
        "unlisted instance with one usable value",
        lambda r: r["tasks"]["maxcut-mqlib"]["instances"].update({"g3": [1, None, None]}),
        "field 'tasks.maxcut-mqlib.instances.g3'",
    ),
    (
        "listed instance with two usable values",
        lambda r: r["unscored_reference_instances"]["maxcut-mqlib"].append("g2"),
        "field 'unscored_reference_instances.maxcut-mqlib'",
    ),
    (
        "listed under an unknown task",
        lambda r: r["unscored_reference_instances"].update({"tsp": ["x"]}),
        "field 'unscored_reference_instances.tsp'",
    ),
    (
        "listed twice",
        lambda r: r["unscored_reference_instances"]["maxcut-mqlib"].append("g9"),
        "listed twice",
    ),
    ("missing relative floor", lambda r: r["scale_floors"].pop("relative"), "field 'scale_floors.relative'"),
    ("missing absolute floor", lambda r: r["scale_floors"].pop("absolute"), "field 'scale_floors.absolute'"),
    (
        "zero absolute floor",
        lambda r: r["scale_floors"].update({"absolute": 0}),
        "field 'scale_floors.absolute'",
    ),
    (
        "negative relative floor",
        lambda r: r["scale_floors"].update({"relative": -0.1}),
        "field 'scale_floors.relative'",
    ),
    (
        "bad kind",
        lambda r: r["tasks"]["maxcut-mqlib"].update({"kind": "score"}),
        "field 'tasks.maxcut-mqlib.kind'",
    ),
    ("bad direction", lambda r: r["tasks"]["maxcut-mqlib"].update({"direction": "up"}), "direction"),
    ("string value", lambda r: r["tasks"]["maxcut-mqlib"]["instances"]["g1"].__setitem__(0, "10"), "g1"),
    ("boolean value", lambda r: r["tasks"]["maxcut-mqlib"]["instances"]["g1"].__setitem__(0, True), "g1"),
    ("extra key", lambda r: r.update({"notes": "x"}), "field 'notes'"),
    ("no reference id", lambda r: r.pop("reference_id"), "field 'reference_id'"),
    ("no tasks", lambda r: r.update({"tasks": {}}), "field 'tasks'"),
    (
        "solve value 2",
        lambda r: r["tasks"]["maxcut-mqlib"].update(
            {"kind": "solve", "instances": {"g1": [1, 2], "g2": [0, 1]}}
        ),
        "solve task's reference values",
    ),
]


@pytest.mark.parametrize("label,fn,fragment", BAD_REFERENCES, ids=[b[0] for b in BAD_REFERENCES])
def test_bad_references_are_refused(tmp_path, label, fn, fragment):
    path = write_json(tmp_path / "ref.json", mutate(fn))
    with pytest.raises(BadInput) as exc:
        load_reference(path)
    assert fragment in str(exc.value)
    assert str(exc.value).startswith(str(path))


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_non_finite_reference_value_is_refused(tmp_path, token):
    text = json.dumps(ISSUE_REFERENCE).replace("14", token.decode())
    path = tmp_path / "ref.json"
    path.write_text(text)
    result = run("reference", "show", path)
    assert_one_line_error(result, str(path))


def test_duplicate_key_in_reference_is_refused(tmp_path):
    text = json.dumps(ISSUE_REFERENCE).replace('"g1": [10, 12, 14]', '"g1": [10, 12, 14], "g1": [1, 2, 3]')
    path = tmp_path / "ref.json"
    path.write_text(text)
    assert_one_line_error(run("reference", "show", path), "duplicate key", "g1")


def test_show_prints_counts_and_sha256(tmp_path):
    path = write_json(tmp_path / "ref.json", ISSUE_REFERENCE)
    result = run("reference", "show", path)
    assert result.exit_code == 0, result.output
    assert "maxcut-mqlib" in result.output
    assert hashlib.sha256(path.read_bytes()).hexdigest() in result.output.replace("\n", "")
    assert "1 unscored reference instance(s) listed without values" in result.output


def runs_for(tmp_path):
    r1 = write_json(
        tmp_path / "run1.json",
        [
            {"instance": "g1", "status": "ok", "A": 10},
            {"instance": "g2", "status": "ok", "A": 5.5},
            {"instance": "g9", "status": "timeout"},
        ],
    )
    r2 = write_json(
        tmp_path / "run2.json",
        [
            {"instance": "g1", "status": "ok", "A": 12},
            {"instance": "g2", "status": "infra_error"},
            {"instance": "g9", "status": "ok", "A": 3},
        ],
    )
    r3 = write_json(
        tmp_path / "run3.json",
        [{"instance": "g1", "status": "ok", "A": 14}, {"instance": "g2", "status": "ok", "A": 6}],
    )
    return [r1, r2, r3]


def build(tmp_path, out, *extra, runs=None, rid="k3-test"):
    return run(
        "reference",
        "build",
        "--id",
        rid,
        "--suite",
        "lite",
        "--task",
        "maxcut-mqlib",
        "--kind",
        "objective",
        "--direction",
        "maximize",
        "--output",
        out,
        *extra,
        *(runs or runs_for(tmp_path)),
    )


def test_build_freezes_runs_into_a_reference(tmp_path, pinned_time):
    out = tmp_path / "ref.json"
    result = build(tmp_path, out)
    assert result.exit_code == 0, result.output + result.stderr
    data = json.loads(out.read_text())
    task = data["tasks"]["maxcut-mqlib"]
    assert task["instances"] == {"g1": [10.0, 12.0, 14.0], "g2": [5.5, None, 6.0], "g9": [None, 3.0, None]}
    assert data["unscored_reference_instances"] == {"maxcut-mqlib": ["g9"]}
    assert data["scale_floors"] == {"relative": 0.02, "absolute": 1e-9}
    assert data["provenance"]["created_at"] == "2026-01-01T00:00:00Z"
    assert set(data["provenance"]["inputs"]) == {"run1", "run2", "run3"}
    loaded = load_reference(out)
    assert loaded.tasks["maxcut-mqlib"].scored.tolist() == [True, True, False]


def test_build_solve_task_counts_completed_failures_as_not_solved(tmp_path):
    runs = [
        write_json(tmp_path / "s1.json", [{"instance": "p", "status": "ok", "solved": True}]),
        write_json(tmp_path / "s2.json", [{"instance": "p", "status": "timeout"}]),
        write_json(tmp_path / "s3.json", [{"instance": "p", "status": "infra_error"}]),
    ]
    out = tmp_path / "ref.json"
    result = run(
        "reference",
        "build",
        "--id",
        "s",
        "--suite",
        "lite",
        "--task",
        "sat",
        "--kind",
        "solve",
        "--direction",
        "maximize",
        "--output",
        out,
        *runs,
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(out.read_text())["tasks"]["sat"]["instances"] == {"p": [1.0, 0.0, None]}


def test_rebuilding_same_content_is_a_no_op_and_changed_content_under_same_id_is_refused(tmp_path):
    out = tmp_path / "ref.json"
    assert build(tmp_path, out).exit_code == 0
    before = out.read_bytes()
    again = build(tmp_path, out)
    assert again.exit_code == 0 and "unchanged" in again.output
    assert out.read_bytes() == before
    changed = runs_for(tmp_path)
    write_json(
        changed[2], [{"instance": "g1", "status": "ok", "A": 15}, {"instance": "g2", "status": "ok", "A": 6}]
    )
    assert_one_line_error(build(tmp_path, out, runs=changed), "different content", "new --id")
    assert out.read_bytes() == before
    # a new id may replace it
    assert build(tmp_path, out, runs=changed, rid="k3-test-v2").exit_code == 0


def test_build_refuses_bad_runs_and_writes_nothing(tmp_path):
    runs = runs_for(tmp_path)
    write_json(runs[1], [{"instance": "g1", "status": "ok"}])
    out = tmp_path / "ref.json"
    assert_one_line_error(build(tmp_path, out, runs=runs), "run2.json", "record 1", "field 'A'")
    assert not out.exists()
    assert_one_line_error(build(tmp_path, out, runs=[runs[0], runs[0]]), "given twice")
    assert not out.exists()


def test_merge_and_conflicts(tmp_path):
    a = tmp_path / "a.json"
    assert build(tmp_path, a).exit_code == 0
    b = write_json(
        tmp_path / "b.json",
        {
            "reference_id": "other",
            "suite": "lite",
            "scale_floors": {"relative": 0.02, "absolute": 1e-9},
            "tasks": {"tsp": {"kind": "objective", "direction": "minimize", "instances": {"t1": [1, 2]}}},
        },
    )
    out = tmp_path / "merged.json"
    result = run("reference", "merge", "--id", "k3-all", "--output", out, a, b)
    assert result.exit_code == 0, result.stderr
    loaded = load_reference(out)
    assert sorted(loaded.tasks) == ["maxcut-mqlib", "tsp"]
    assert loaded.reference.unscored_reference_instances == {"maxcut-mqlib": ["g9"]}
    assert_one_line_error(
        run("reference", "merge", "--id", "x", "--output", tmp_path / "x.json", a, a), "two parts"
    )
    c = write_json(tmp_path / "c.json", {**json.loads(b.read_text()), "suite": "full"})
    assert_one_line_error(
        run("reference", "merge", "--id", "x", "--output", tmp_path / "x.json", a, c), "suite"
    )
    assert not (tmp_path / "x.json").exists()


# ---- the fast reference path accepts and refuses exactly what the exact path does ----------------


ref_values = st.lists(
    st.one_of(
        st.none(),
        st.integers(-3, 3),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        st.booleans(),
        st.just("1"),
    ),
    max_size=4,
)
ref_names = st.sampled_from(["g1", "g2", "a:b", " g", "", "g\u00e9"])
ref_task = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["objective", "solve", "other"]),
        "direction": st.sampled_from(["maximize", "minimize"]),
        "instances": st.one_of(st.dictionaries(ref_names, ref_values, max_size=4), st.just([1])),
    },
    optional={"extra": st.just(1)},
)
reference_doc = st.fixed_dictionaries(
    {
        "reference_id": st.sampled_from(["k3", "", "a:b"]),
        "suite": st.just("lite"),
        "scale_floors": st.fixed_dictionaries(
            {"relative": st.sampled_from([0.02, -1]), "absolute": st.sampled_from([1e-9, 0])}
        ),
        "tasks": st.dictionaries(st.sampled_from(["t1", "t:2"]), ref_task, max_size=2),
    },
    optional={
        "unscored_reference_instances": st.dictionaries(st.just("t1"), st.lists(ref_names, max_size=2)),
        "provenance": st.just({"created_at": "2026-01-01T00:00:00Z"}),
    },
)


def ref_outcome(raw, fast):
    try:
        return ("ok", parse_reference(raw, "ref.json", fast=fast).model_dump())
    except Exception as exc:  # noqa: BLE001 - BadInput expected; anything else would differ too
        return ("error", type(exc).__name__, str(exc))


@given(reference_doc, st.booleans())
def test_fast_reference_path_agrees_with_exact_path(doc, duplicate):
    raw = json.dumps(doc).encode()
    if duplicate and raw.endswith(b"}"):
        raw = raw[:-1] + b', "suite": "lite"}'
    assert ref_outcome(raw, True) == ref_outcome(raw, False)


def test_fast_reference_path_handles_clean_files_itself():
    raw = json.dumps(ISSUE_REFERENCE).encode()
    assert reference_mod._fast_reference(raw, json.loads(raw)) is not None
    dup = raw.replace(b'"g1": [10, 12, 14]', b'"g1": [10, 12, 14], "g1": [1, 2, 3]')
    assert reference_mod._fast_reference(dup, json.loads(dup)) is None


def test_show_named_reference(tmp_path, monkeypatch):
    monkeypatch.delenv("TCSEXAM_DATA", raising=False)
    assert_one_line_error(run("reference", "show", "full"), "official TCSExam 'full' reference is not public")
    write_json(tmp_path / "references" / "full.json", ISSUE_REFERENCE)
    monkeypatch.setenv("TCSEXAM_DATA", str(tmp_path))
    result = run("reference", "show", "full")
    assert result.exit_code == 0 and "paper-k3-fixed-260925" in result.output


def test_names_with_python_only_whitespace_are_not_a_fast_path_hint(tmp_path):
    """'\\x1f' is whitespace to str.strip but not to the reference's name pattern: the reference
    accepts it, the records' rule refuses it, and the hint must not skip that check."""
    from benchscore.tcsexam.records import parse_records

    ref = json.loads(json.dumps(ISSUE_REFERENCE_FOR_HINT))
    ref["tasks"]["t"]["instances"]["g1\x1f"] = [1.0, 2.0]
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(ref))
    task = load_reference(path).tasks["t"]
    assert task.clean_names is None
    raw = json.dumps([{"instance": n, "status": "ok", "A": 1.0} for n in task.instances]).encode()
    with pytest.raises(BadInput, match="whitespace"):
        parse_records(raw, "r.json", kind="objective", known_names=task.clean_names)
    clean = {**ref, "tasks": {"t": {**ref["tasks"]["t"], "instances": {"g1": [1.0, 2.0]}}}}
    path.write_text(json.dumps(clean))
    assert load_reference(path).tasks["t"].clean_names == ["g1"]


ISSUE_REFERENCE_FOR_HINT = {
    "reference_id": "hint",
    "suite": "s",
    "scale_floors": {"relative": 0.02, "absolute": 1e-9},
    "tasks": {"t": {"kind": "objective", "direction": "maximize", "instances": {}}},
}


def _compiled_outcome(raw: bytes, tmp_path, fast: bool):
    """load_reference (fast path, reusing its checks when compiling) vs the exact parse + compile."""
    try:
        if fast:
            path = tmp_path / "ref.json"
            path.write_bytes(raw)
            tasks = load_reference(path).tasks
        else:
            tasks = reference_mod.compile_reference(parse_reference(raw, "ref.json", fast=False), "ref.json")
    except Exception as exc:  # noqa: BLE001 - BadInput expected; anything else would differ too
        return ("error", type(exc).__name__, str(exc).replace(str(tmp_path / "ref.json"), "ref.json"))
    return (
        "ok",
        {
            name: (t.instances, t.mu.tolist(), t.scale.tolist(), t.scored.tolist(), t.clean_names, t.index)
            for name, t in tasks.items()
        },
    )


def _consistent(tasks: dict) -> dict:
    unscored = {
        name: sorted(i for i, vals in t["instances"].items() if sum(v is not None for v in vals) < 2)
        for name, t in tasks.items()
    }
    return {
        "reference_id": "k3",
        "suite": "lite",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": tasks,
        "unscored_reference_instances": {k: v for k, v in unscored.items() if v},
    }


loadable_doc = st.dictionaries(
    st.sampled_from(["t1", "t:2"]),
    st.fixed_dictionaries(
        {
            "kind": st.just("objective"),
            "direction": st.sampled_from(["maximize", "minimize"]),
            "instances": st.dictionaries(
                st.sampled_from(["g1", "g2", "a:b", "g\u00e9", "g\x1f", " g", "g3"]),
                st.lists(
                    st.one_of(st.none(), st.integers(-5, 5), st.floats(-1e3, 1e3, allow_nan=False)),
                    min_size=1,
                    max_size=4,
                ),
                min_size=1,
                max_size=4,
            ),
        }
    ),
    min_size=1,
    max_size=2,
).map(_consistent)


@given(st.one_of(loadable_doc, reference_doc.filter(lambda d: d["tasks"])))
def test_compiled_reference_is_the_same_whichever_path_loaded_it(tmp_path_factory, doc):
    tmp_path = tmp_path_factory.mktemp("ref")
    raw = json.dumps(doc).encode()
    fast, exact = _compiled_outcome(raw, tmp_path, True), _compiled_outcome(raw, tmp_path, False)
    assert repr(fast) == repr(exact)  # repr: NaN == NaN


@pytest.mark.parametrize(
    "values",
    [[1e308, 1e308], [-1.7e308, -1.7e308], [-1e160, 1e160]],
    ids=["mean overflows", "negative mean overflows", "std overflows"],
)
def test_finite_values_whose_mean_or_std_overflows_are_refused(tmp_path, values):
    # each value is finite, but mu or s (hence scale) is not representable: one line, no warning
    ref = mutate(lambda r: r["tasks"]["maxcut-mqlib"]["instances"].update({"g3": values}))
    path = write_json(tmp_path / "ref.json", ref)
    rec = write_json(
        tmp_path / "rec.json",
        [{"instance": g, "status": "ok", "A": 1} for g in ("g1", "g2", "g3")],
    )
    out = tmp_path / "out.json"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning on stderr is not one line
        result = run(
            "solver-score", "--task", "maxcut-mqlib", "--records", rec, "--reference", path, "--output", out
        )
    assert_one_line_error(result, str(path), "field 'tasks.maxcut-mqlib.instances.g3'", "not finite")
    assert not out.exists()


def test_a_huge_relative_floor_that_makes_scale_infinite_is_refused(tmp_path):
    ref = mutate(lambda r: r["scale_floors"].update({"relative": 1e308}))
    path = write_json(tmp_path / "ref.json", ref)
    with pytest.raises(BadInput, match=r"field 'tasks.maxcut-mqlib.instances.g1'.*not finite"):
        load_reference(path)


def test_build_accepts_identical_runs_from_distinct_files(tmp_path):
    # deterministic solvers can repeat a run exactly: the seed's floors (s = 0) are there for it
    recs = [{"instance": "p", "status": "ok", "solved": True}, {"instance": "q", "status": "ok", "A": 0}]
    runs = [write_json(tmp_path / f"run{i}.json", recs) for i in (1, 2, 3)]
    out = tmp_path / "ref.json"
    result = run(
        "reference",
        "build",
        "--id",
        "s",
        "--suite",
        "lite",
        "--task",
        "sat",
        "--kind",
        "solve",
        "--direction",
        "maximize",
        "--output",
        out,
        *runs,
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(out.read_text())["tasks"]["sat"]["instances"] == {"p": [1.0] * 3, "q": [0.0] * 3}
    # the same file twice is still a mistake
    result = run(
        "reference",
        "build",
        "--id",
        "s2",
        "--suite",
        "lite",
        "--task",
        "sat",
        "--kind",
        "solve",
        "--direction",
        "maximize",
        "--output",
        tmp_path / "ref2.json",
        runs[0],
        runs[1],
        runs[0],
    )
    assert_one_line_error(result, "given twice")
    assert not (tmp_path / "ref2.json").exists()
