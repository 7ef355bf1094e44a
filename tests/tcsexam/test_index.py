"""tcsexam score: averaging order, every refusal, incomplete/provisional, excluded rows, output shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tcsexam_helpers import assert_one_line_error, run, write_json

from benchscore.common.terminal import fmt
from benchscore.tcsexam.formats import IndexOutput

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tcsexam" / "seed-example"
HEADER = (
    "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol,reference_id,"
    "evidence,reason,raw_reward"
)
ADOPTION_RULE = "the first complete attempts; a re-run replaces one only after a judge failure"
SUITE = {
    "suite": "mini",
    "tracks": {"theorem": ["t1", "t2"], "solver": ["s1"], "construction": ["c1"], "conjecture": ["o1"]},
}


def row(
    track,
    item,
    attempt,
    score,
    adoption="selected",
    status="valid",
    model="m",
    stype=None,
    protocol=None,
    ref="",
    evidence="",
    reason="",
    raw="",
):
    stype = stype or ("fixed_reference_relative" if track == "solver" else "original_task_score")
    protocol = protocol if protocol is not None else ("offline" if track == "solver" else "")
    return (
        f"{model},{track},{item},{attempt},{score},{adoption},{status},{stype},{protocol},{ref},{evidence},"
        f"{reason},{raw}"
    )


def full_rows(attempts=1, model="m"):
    scores = {
        "t1": ["1", "0", "1"],
        "t2": ["0", "0", "1"],
        "s1": ["0.5", "0.25", "0.75"],
        "c1": ["1.5", "0.5", "1"],
        "o1": ["0", "1", "0"],
    }
    tracks = {"t1": "theorem", "t2": "theorem", "s1": "solver", "c1": "construction", "o1": "conjecture"}
    return [row(tracks[i], i, str(a + 1), scores[i][a], model=model) for i in scores for a in range(attempts)]


def setup(tmp_path, rows, attempts=1, models=None, cohort_extra=None):
    suite = write_json(tmp_path / "suite.json", SUITE)
    cohort = write_json(
        tmp_path / "cohort.json",
        {
            "suite": "mini",
            "solver_protocol": "offline",
            "solver_reference_id": "k3",
            "models": models or {"m": {"attempts_per_task": attempts}},
            "adoption_rule": ADOPTION_RULE,
            **(cohort_extra or {}),
        },
    )
    att = tmp_path / "attempts.csv"
    att.write_text("\n".join([HEADER, *rows]) + "\n")
    return suite, att, cohort


def score(tmp_path, rows, **kw):
    suite, att, cohort = setup(tmp_path, rows, **kw)
    out = tmp_path / "index.json"
    result = run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out)
    return result, out


def ok(tmp_path, rows, **kw):
    """The output of a score that ran (exit 0 when complete, 1 when provisional or incomplete: written either way)."""
    result, out = score(tmp_path, rows, **kw)
    data = json.loads(out.read_text())
    assert result.exit_code == (0 if data["status"] == "complete" else 1), result.stderr
    IndexOutput.model_validate(data)
    return data


def test_seed_example_55_5_and_incomplete(tmp_path, pinned_time, monkeypatch):
    monkeypatch.chdir(EXAMPLE.parents[2])
    base = "examples/tcsexam/seed-example/"
    for attempts, expected in (
        ("attempts.csv", "index.json"),
        ("attempts-incomplete.csv", "index-incomplete.json"),
    ):
        out = tmp_path / expected
        result = run(
            "score",
            "--suite",
            base + "suite.json",
            "--attempts",
            base + attempts,
            "--cohort",
            base + "cohort.json",
            "--output",
            out,
        )
        assert result.exit_code == (0 if attempts == "attempts.csv" else 1), result.stderr  # 1: incomplete
        assert out.read_bytes() == (EXAMPLE / "expected" / expected).read_bytes()
    complete = json.loads((tmp_path / "index.json").read_text())
    assert complete["status"] == "complete"
    assert complete["models"]["my-model"]["index"] == 55.5
    thm_c = next(a for a in complete["models"]["my-model"]["adopted_attempts"] if a["item"] == "thm-c")
    assert (thm_c["score"], thm_c["raw_reward"]) == (0.0, 0.6)  # partial credit kept, converted to 0
    assert complete["adoption_rule"].startswith("one attempt per task")
    assert complete["models"]["my-model"]["track_means"] == {
        "theorem": 0.4,
        "solver": 0.25,
        "construction": 1.2,
        "conjecture": 0.0,
    }
    incomplete = json.loads((tmp_path / "index-incomplete.json").read_text())
    model = incomplete["models"]["my-model"]
    assert incomplete["status"] == "incomplete" and model["index"] is None
    assert model["problems"] == ["theorem/thm-e: no result (planned 1 attempt(s))"]
    assert model["coverage"]["theorem"]["tasks_complete"] == 4


def test_output_shape(tmp_path):
    data = ok(tmp_path, full_rows())
    assert list(data) == [
        "status",
        "models",
        "suite",
        "solver_protocol",
        "solver_reference_id",
        "adoption_rule",
        "metric_id",
        "provenance",
    ]
    assert data["adoption_rule"] == ADOPTION_RULE
    assert data["metric_id"] == "tcsexam-index-original-30303010-v0.1"
    m = data["models"]["m"]
    assert list(m) == [
        "status",
        "index",
        "track_means",
        "intervals",
        "task_means",
        "coverage",
        "problems",
        "adopted_attempts",
        "excluded_attempts",
    ]
    assert list(m["track_means"]) == ["theorem", "solver", "construction", "conjecture"]
    assert data["provenance"]["reference"] == {"reference_id": "k3"}
    assert set(data["provenance"]["inputs"]) == {"suite", "attempts", "cohort"}


def test_averaging_order(tmp_path):
    data = ok(tmp_path, full_rows(attempts=3), attempts=3)
    m = data["models"]["m"]
    assert m["task_means"]["theorem"] == {"t1": pytest.approx(2 / 3), "t2": pytest.approx(1 / 3)}
    assert m["track_means"]["theorem"] == pytest.approx(0.5)
    assert m["track_means"]["solver"] == pytest.approx(0.5)
    assert m["track_means"]["construction"] == pytest.approx(1.0)
    assert m["track_means"]["conjecture"] == pytest.approx(1 / 3)
    assert m["index"] == pytest.approx(30 * 0.5 + 30 * 0.5 + 30 * 1.0 + 10 / 3)
    assert m["status"] == "complete" and m["problems"] == []


def test_track_mean_is_the_mean_of_task_means(tmp_path):
    # A cohort plans one repeat count per model, so within a complete model every task has the
    # same number of adopted attempts and a pooled mean would give the same number: that tasks
    # with 3 and with 1 repeats weigh the same is tested on the formulas
    # (test_formulas.py::test_averaging_order_repeats_do_not_weigh_more).
    rows = full_rows()
    data = ok(tmp_path, rows)
    assert data["models"]["m"]["track_means"]["theorem"] == 0.5  # (1 + 0) / 2


def test_valid_zero_is_an_observation(tmp_path):
    rows = [r.replace(",s1,1,0.5,", ",s1,1,0,") for r in full_rows()]
    data = ok(tmp_path, rows)
    assert data["models"]["m"]["status"] == "complete"
    assert data["models"]["m"]["track_means"]["solver"] == 0.0


def test_missing_planned_task_is_incomplete(tmp_path):
    rows = [r for r in full_rows() if ",o1," not in r]
    data = ok(tmp_path, rows)
    m = data["models"]["m"]
    assert data["status"] == "incomplete" and m["status"] == "incomplete" and m["index"] is None
    assert m["track_means"]["conjecture"] is None
    assert m["task_means"]["conjecture"] == {"o1": None}
    assert "conjecture/o1: no result" in m["problems"][0]
    assert m["coverage"]["conjecture"] == {
        "tasks_planned": 1,
        "tasks_complete": 0,
        "attempts_planned": 1,
        "attempts_adopted": 0,
        "attempts_adopted_valid": 0,
    }


def test_missing_planned_attempt_is_incomplete(tmp_path):
    rows = [r for r in full_rows(attempts=2) if not r.startswith("m,construction,c1,2,")]
    data = ok(tmp_path, rows, attempts=2)
    m = data["models"]["m"]
    assert m["status"] == "incomplete" and m["index"] is None
    assert m["problems"] == ["construction/c1: 1 of 2 planned attempt(s) adopted"]


@pytest.mark.parametrize("status", ["judge_failed", "not_finished", "missing"])
def test_adopted_attempt_not_valid_is_incomplete(tmp_path, status):
    rows = [
        r.replace("m,theorem,t2,1,0,selected,valid", f"m,theorem,t2,1,,selected,{status}")
        for r in full_rows()
    ]
    data = ok(tmp_path, rows)
    m = data["models"]["m"]
    assert m["status"] == "incomplete" and m["index"] is None
    assert f"score_status '{status}'" in m["problems"][0]


def test_provisional(tmp_path):
    rows = [r.replace(",c1,1,1.5,selected,", ",c1,1,1.5,selected_provisional,") for r in full_rows()]
    data = ok(tmp_path, rows)
    assert data["status"] == "provisional"
    assert data["models"]["m"]["status"] == "provisional"
    assert data["models"]["m"]["index"] is not None


def test_status_is_the_worst_of_the_models(tmp_path):
    rows = full_rows(model="a") + [r for r in full_rows(model="b") if ",t1," not in r]
    data = ok(tmp_path, rows, models={"a": {"attempts_per_task": 1}, "b": {"attempts_per_task": 1}})
    assert data["models"]["a"]["status"] == "complete"
    assert data["models"]["b"]["status"] == "incomplete"
    assert data["status"] == "incomplete"


def test_excluded_rows_are_kept_never_aggregated(tmp_path):
    rows = full_rows() + [
        row(
            "construction",
            "c1",
            "0",
            "99",
            adoption="excluded",
            status="judge_failed",
            reason="judge crashed",
        ),
        row("theorem", "t2", "old", "1", adoption="excluded"),
    ]
    data = ok(tmp_path, rows)
    m = data["models"]["m"]
    assert m["task_means"]["construction"]["c1"] == 1.5
    assert m["task_means"]["theorem"]["t2"] == 0.0
    assert [e["attempt"] for e in m["excluded_attempts"]] == ["old", "0"]
    assert [e["reason"] for e in m["excluded_attempts"]] == [None, "judge crashed"]
    # an excluded row without its reason is a problem that makes the result provisional, not complete
    assert m["status"] == "provisional" and data["status"] == "provisional"
    assert m["index"] == pytest.approx(30 * 0.5 + 30 * 0.5 + 30 * 1.5)
    assert len(m["problems"]) == 1
    assert "theorem/t2 attempt 'old'" in m["problems"][0] and "without a recorded reason" in m["problems"][0]


def test_excluded_rows_with_reasons_leave_the_result_complete(tmp_path):
    rows = full_rows() + [row("theorem", "t2", "old", "1", adoption="excluded", reason="judge timed out")]
    data = ok(tmp_path, rows)
    m = data["models"]["m"]
    assert m["status"] == "complete" and m["problems"] == []
    assert m["excluded_attempts"] == [
        {
            "track": "theorem",
            "item": "t2",
            "attempt": "old",
            "score": 1.0,
            "raw_reward": None,
            "score_status": "valid",
            "reason": "judge timed out",
            "line": 7,
        }
    ]


REFUSED = [
    ("duplicate attempt", lambda rows: rows + [rows[0]], ("line 7", "field 'attempt'", "repeats line 2")),
    (
        "more adopted than planned",
        lambda rows: rows + [row("theorem", "t1", "2", "1")],
        ("line 7", "field 'adoption_status'", "more adopted attempts"),
    ),
    (
        "solver score_type",
        lambda rows: [r.replace("fixed_reference_relative", "original_task_score") for r in rows],
        ("field 'score_type'", "fixed_reference_relative"),
    ),
    (
        "theorem with fixed_reference_relative",
        lambda rows: [
            r.replace(
                "m,theorem,t1,1,1,selected,valid,original_task_score",
                "m,theorem,t1,1,1,selected,valid,fixed_reference_relative",
            )
            for r in rows
        ],
        ("line 2", "field 'score_type'"),
    ),
    (
        "solver protocol differs",
        lambda rows: [r.replace(",offline,", ",online,") for r in rows],
        ("field 'solver_protocol'", "differs from the cohort's 'offline'"),
    ),
    (
        "solver protocol missing",
        lambda rows: [r.replace(",offline,", ",,") for r in rows],
        ("field 'solver_protocol'",),
    ),
    (
        "solver reference differs",
        lambda rows: [r.replace(",offline,,", ",offline,k4,") for r in rows],
        ("field 'reference_id'", "'k4'"),
    ),
    (
        "solver score above 1",
        lambda rows: [r.replace(",s1,1,0.5,", ",s1,1,1.5,") for r in rows],
        ("field 'score'", "[0, 1]"),
    ),
    (
        "theorem partial credit",
        lambda rows: [r.replace("m,theorem,t1,1,1,", "m,theorem,t1,1,0.5,") for r in rows],
        ("line 2", "field 'score'", "1 (complete proof accepted) or 0"),
    ),
    (
        "conjecture partial credit",
        lambda rows: [r.replace(",o1,1,0,", ",o1,1,0.3,") for r in rows],
        ("field 'score'",),
    ),
    (
        "negative construction",
        lambda rows: [r.replace(",c1,1,1.5,", ",c1,1,-0.1,") for r in rows],
        ("field 'score'", "non-negative"),
    ),
    ("item not in the suite", lambda rows: rows + [row("theorem", "t9", "1", "1")], ("field 'item'", "'t9'")),
    ("item in another track", lambda rows: rows + [row("conjecture", "t1", "1", "1")], ("field 'item'",)),
    (
        "model not in the cohort",
        lambda rows: rows + [row("theorem", "t1", "1", "1", model="zz")],
        ("field 'model'",),
    ),
    ("unknown track", lambda rows: rows + [row("proof", "t1", "1", "1")], ("field 'track'",)),
    (
        "unknown adoption status",
        lambda rows: rows + [row("theorem", "t1", "2", "1", adoption="maybe")],
        ("field 'adoption_status'",),
    ),
    (
        "non-finite score",
        lambda rows: [r.replace(",c1,1,1.5,", ",c1,1,nan,") for r in rows],
        ("field 'score'", "finite"),
    ),
    ("text score", lambda rows: [r.replace(",c1,1,1.5,", ",c1,1,high,") for r in rows], ("field 'score'",)),
    (
        "valid without score",
        lambda rows: [r.replace(",c1,1,1.5,", ",c1,1,,") for r in rows],
        ("field 'score'",),
    ),
    ("ragged row", lambda rows: rows + ["m,theorem,t1"], ("line 7", "fields")),
]


@pytest.mark.parametrize("label,fn,fragments", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_attempts_exit_2_one_line_and_write_nothing(tmp_path, label, fn, fragments):
    result, out = score(tmp_path, fn(full_rows()))
    assert_one_line_error(result, "attempts.csv", *fragments)
    assert not out.exists()


def test_excluded_rows_do_not_count_as_adopted(tmp_path):
    rows = full_rows() + [row("theorem", "t1", "2", "0", adoption="excluded", reason="re-run")]
    assert ok(tmp_path, rows)["models"]["m"]["status"] == "complete"


def test_unknown_header_column_and_cohort_problems(tmp_path):
    suite, att, cohort = setup(tmp_path, full_rows())
    att.write_text(att.read_text().replace("reason", "comment"))
    out = tmp_path / "o.json"
    assert_one_line_error(
        run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out),
        "line 1",
        "field 'comment'",
    )
    result, out = score(tmp_path, full_rows(), cohort_extra={"suite": "lite"})
    assert_one_line_error(result, "cohort.json", "field 'suite'")
    result, out = score(tmp_path, full_rows(), models={"m": {"attempts_per_task": 0}})
    assert_one_line_error(result, "cohort.json", "attempts_per_task")
    result, out = score(tmp_path, full_rows(), cohort_extra={"solver_protocol": "hybrid"})
    assert_one_line_error(result, "cohort.json", "solver_protocol")
    assert not out.exists()


def test_suite_manifest_rules(tmp_path):
    suite, att, cohort = setup(tmp_path, full_rows())
    out = tmp_path / "o.json"
    write_json(suite, {"suite": "mini", "tracks": {**SUITE["tracks"], "conjecture": ["t1"]}})
    assert_one_line_error(
        run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out),
        "suite.json",
        "tracks.conjecture[0]",
        "already appears",
    )
    write_json(suite, {"suite": "mini", "tracks": {**SUITE["tracks"], "conjecture": []}})
    assert_one_line_error(
        run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out),
        "tracks.conjecture",
    )
    assert not out.exists()


def test_named_suite_without_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("TCSEXAM_DATA", raising=False)
    _, att, cohort = setup(tmp_path, full_rows())
    for name in ("lite", "full"):
        result = run(
            "score", "--suite", name, "--attempts", att, "--cohort", cohort, "--output", tmp_path / "o.json"
        )
        assert_one_line_error(
            result, f"official TCSExam {name!r} suite is not public", "--suite PATH", "tcsexam demo"
        )
    data = tmp_path / "data"
    write_json(data / "suites" / "mini.json", SUITE)
    result = run(
        "score",
        "--suite",
        "mini",
        "--data-dir",
        data,
        "--attempts",
        att,
        "--cohort",
        cohort,
        "--output",
        tmp_path / "o.json",
    )
    assert result.exit_code == 0, result.stderr


def evidence_file(tmp_path, reference_id="k3", task="s1", relative_score=0.5):
    return write_json(
        tmp_path / "ev" / "s1.json",
        {
            "task": task,
            "relative_score": relative_score,
            "reference_id": reference_id,
            "instances": {},
        },
    )


def with_evidence(rows, evidence="ev/s1.json"):
    return [r.replace(",offline,,,", f",offline,k3,{evidence},") for r in rows]


def test_evidence_is_checked(tmp_path):
    evidence_file(tmp_path)
    assert ok(tmp_path, with_evidence(full_rows()))["status"] == "complete"
    evidence_file(tmp_path, reference_id="paper-k3-fixed-260925")
    result, out = score(tmp_path, with_evidence(full_rows()))
    assert_one_line_error(result, "field 'evidence'", "'paper-k3-fixed-260925'")
    evidence_file(tmp_path, task="s2")
    assert_one_line_error(score(tmp_path, with_evidence(full_rows()))[0], "field 'evidence'", "'s2'")
    evidence_file(tmp_path, relative_score=0.6)
    assert_one_line_error(score(tmp_path, with_evidence(full_rows()))[0], "field 'score'", "relative_score")
    assert_one_line_error(
        score(tmp_path, with_evidence(full_rows(), "ev/none.json"))[0], "none.json", "file not found"
    )


def test_evidence_score_may_be_rounded_where_written(tmp_path):
    evidence_file(tmp_path, relative_score=0.50004)
    assert ok(tmp_path, with_evidence(full_rows()))["status"] == "complete"  # '0.5' is 0.50004 rounded
    evidence_file(tmp_path, relative_score=0.56)
    assert score(tmp_path, with_evidence(full_rows()))[0].exit_code == 2


def test_evidence_files_are_hashed_into_provenance(tmp_path):
    import hashlib

    ev = evidence_file(tmp_path)
    data = ok(tmp_path, with_evidence(full_rows()))
    assert data["provenance"]["evidence"] == {"ev/s1.json": hashlib.sha256(ev.read_bytes()).hexdigest()}
    assert "evidence" not in ok(tmp_path, full_rows())["provenance"]


def test_seed_literal_cohort_and_nine_column_attempts_table(tmp_path):
    from benchscore.tcsexam.formats import Cohort

    seed_cohort = json.loads("""{
      "suite": "lite",
      "solver_protocol": "offline",
      "solver_reference_id": "paper-k3-fixed-260925",
      "models": {"my-model": {"attempts_per_task": 1}}
    }""")
    with pytest.raises(ValueError, match="adoption_rule"):
        Cohort.model_validate(seed_cohort)
    declared = Cohort.model_validate({**seed_cohort, "adoption_rule": ADOPTION_RULE})
    assert declared.models["my-model"].attempts_per_task == 1
    # the seed's own columns only (no reference_id/evidence/reason), and its example solver row
    suite = write_json(
        tmp_path / "suite.json",
        {
            "suite": "lite",
            "tracks": {
                "theorem": ["t"],
                "solver": ["maxcut-mqlib"],
                "construction": ["c"],
                "conjecture": ["o"],
            },
        },
    )
    cohort = write_json(tmp_path / "cohort.json", seed_cohort)
    att = tmp_path / "attempts.csv"
    att.write_text(
        "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol\n"
        "my-model,solver,maxcut-mqlib,1,0.25,selected,valid,fixed_reference_relative,offline\n"
    )
    out = tmp_path / "index.json"
    # the seed's literal cohort declares no adoption rule; the seed asks for one before aggregating
    result = run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out)
    assert_one_line_error(result, "cohort.json", "field 'adoption_rule'")
    assert not out.exists()
    cohort = write_json(tmp_path / "cohort.json", {**seed_cohort, "adoption_rule": ADOPTION_RULE})
    att.write_text(
        "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol\n"
        "my-model,solver,maxcut-mqlib,1,0.25,selected,valid,fixed_reference_relative,offline\n"
        "my-model,theorem,t,1,1,selected,valid,original_task_score,\n"
        "my-model,construction,c,1,1.2,selected,valid,original_task_score,\n"
        "my-model,conjecture,o,1,0,selected,valid,original_task_score,\n"
    )
    result = run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["models"]["my-model"]["index"] == pytest.approx(30 * 1 + 30 * 0.25 + 30 * 1.2)
    assert data["solver_reference_id"] == "paper-k3-fixed-260925"


def test_construction_rewards_too_large_to_aggregate_are_refused(tmp_path):
    # two finite rewards near the float maximum overflowed math.fsum (a traceback) or the index
    rows = [r.replace(",c1,1,1.5,", ",c1,1,1e308,") for r in full_rows()]
    rows.append(row("construction", "c1", "2", "1e308"))
    result, out = score(tmp_path, rows, attempts=1, models={"m": {"attempts_per_task": 2}})
    assert_one_line_error(result, "attempts.csv", "line ", "field 'score'", "too large")
    assert not out.exists()


def test_the_largest_accepted_construction_reward_gives_a_finite_index(tmp_path):
    from benchscore.tcsexam.index import MAX_CONSTRUCTION_SCORE

    rows = [r.replace(",c1,1,1.5,", f",c1,1,{MAX_CONSTRUCTION_SCORE!r},") for r in full_rows(attempts=3)]
    rows = [r.replace(",c1,2,0.5,", f",c1,2,{MAX_CONSTRUCTION_SCORE!r},") for r in rows]
    data = ok(tmp_path, rows, attempts=3)
    assert data["models"]["m"]["status"] == "complete"
    assert data["models"]["m"]["index"] > 1e300


# ---- raw rewards (seed: 评测输出保留任务判分器的原始奖励) -----------------------------------------


def test_raw_reward_is_kept_beside_the_converted_score(tmp_path):
    rows = full_rows(attempts=2)
    rows = [
        r.replace("m,theorem,t1,2,0,selected,valid,original_task_score,,,,,", "m,theorem,t1,2,0,selected,valid,"
                  "original_task_score,,,,,0.6")
        .replace("m,conjecture,o1,1,0,selected,valid,original_task_score,,,,,", "m,conjecture,o1,1,0,selected,"
                 "valid,original_task_score,,,,,0.35")
        .replace("m,construction,c1,1,1.5,selected,valid,original_task_score,,,,,", "m,construction,c1,1,1.5,"
                 "selected,valid,original_task_score,,,,,1.5")
        .replace("m,solver,s1,1,0.5,selected,valid,fixed_reference_relative,offline,,,,", "m,solver,s1,1,0.5,"
                 "selected,valid,fixed_reference_relative,offline,,,,0.83")
        for r in rows
    ]
    rows.append(row("theorem", "t2", "x", "0", adoption="excluded", reason="re-judged", raw="0.9"))
    data = ok(tmp_path, rows, attempts=2)
    m = data["models"]["m"]
    adopted = {(a["track"], a["item"], a["attempt"]): a for a in m["adopted_attempts"]}
    assert len(adopted) == 10
    partial = adopted[("theorem", "t1", "2")]
    assert partial == {
        "track": "theorem",
        "item": "t1",
        "attempt": "2",
        "adoption_status": "selected",
        "score": 0.0,
        "raw_reward": 0.6,
        "score_status": "valid",
        "line": 3,
    }
    assert adopted[("conjecture", "o1", "1")]["raw_reward"] == 0.35
    assert adopted[("conjecture", "o1", "1")]["score"] == 0.0
    assert adopted[("construction", "c1", "1")]["raw_reward"] == 1.5
    assert adopted[("solver", "s1", "1")]["raw_reward"] == 0.83
    assert adopted[("theorem", "t1", "1")]["raw_reward"] is None  # an empty cell
    # the index aggregates the 0/1 conversion, never the raw reward
    assert m["task_means"]["theorem"]["t1"] == 0.5
    assert m["task_means"]["conjecture"]["o1"] == 0.5
    assert m["excluded_attempts"][0]["raw_reward"] == 0.9


def test_the_seed_columns_alone_still_work_without_raw_reward(tmp_path):
    suite, att, cohort = setup(tmp_path, full_rows())
    lines = att.read_text().splitlines()
    att.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")  # drop the raw_reward column
    out = tmp_path / "o.json"
    result = run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    assert all(a["raw_reward"] is None for a in data["models"]["m"]["adopted_attempts"])


RAW_REFUSED = [
    ("nan", "nan", "finite"),
    ("inf", "inf", "finite"),
    ("text", "high", "finite"),
]


@pytest.mark.parametrize("label,value,fragment", RAW_REFUSED, ids=[r[0] for r in RAW_REFUSED])
def test_raw_reward_must_be_a_finite_number_or_empty(tmp_path, label, value, fragment):
    rows = full_rows()
    rows[0] = rows[0] + value  # the first row's raw_reward cell (last column) was empty
    result, out = score(tmp_path, rows)
    assert_one_line_error(result, "attempts.csv", "line 2", "field 'raw_reward'", fragment)
    assert not out.exists()


def test_a_construction_score_is_its_raw_reward(tmp_path):
    rows = [r + ("1.4" if ",c1,1,1.5," in r else "") for r in full_rows()]  # raw_reward 1.4, score 1.5
    result, out = score(tmp_path, rows)
    assert_one_line_error(result, "attempts.csv", "line 5", "field 'raw_reward'", "raw reward")
    assert not out.exists()


# ---- the adoption rule (seed: 汇总前声明计划重复次数和采用规则) ------------------------------------


@pytest.mark.parametrize("value", [None, "", "   "])
def test_the_cohort_declares_its_adoption_rule(tmp_path, value):
    suite, att, cohort = setup(tmp_path, full_rows())
    data = json.loads(cohort.read_text())
    if value is None:
        del data["adoption_rule"]
    else:
        data["adoption_rule"] = value
    write_json(cohort, data)
    out = tmp_path / "o.json"
    result = run("score", "--suite", suite, "--attempts", att, "--cohort", cohort, "--output", out)
    assert_one_line_error(result, "cohort.json", "field 'adoption_rule'")
    assert not out.exists()


# ---- terminal output: every number and count of the JSON, plain and whole when piped -------------


def _num(value):
    return fmt(value)  # rounded for reading, as the terminal shows every number


def _row(stdout, *cells):
    """The plain-table line whose cells (split on whitespace) are exactly ``cells``."""
    want = [str(c) for c in cells]
    hits = [line for line in stdout.splitlines() if line.split() == want]
    assert hits, (want, stdout)


def test_terminal_output_tells_the_whole_truth(tmp_path):
    long_reason = "the judge crashed on the first run " + "and the re-run was adopted " * 6
    rows = full_rows(model="a", attempts=2) + [
        row("theorem", "t1", "old", "1", adoption="excluded", model="a", reason=long_reason, raw="0.75"),
    ]
    rows = [r + "0.125" if r.startswith("a,theorem,t2,1,") else r for r in rows]
    rows += [r for r in full_rows(model="b-with-a-long-model-name", attempts=2) if ",o1," not in r]
    rows.append(row("construction", "c1", "0", "2", adoption="excluded", model="b-with-a-long-model-name"))
    result, out = score(
        tmp_path,
        rows,
        models={"a": {"attempts_per_task": 2}, "b-with-a-long-model-name": {"attempts_per_task": 2}},
    )
    data = json.loads(out.read_text())
    assert result.exit_code == (0 if data["status"] == "complete" else 1), result.stderr
    stdout = result.stdout
    assert ADOPTION_RULE in stdout
    assert f"status {data['status']}" in stdout
    for model, res in data["models"].items():
        tm = res["track_means"]
        _row(stdout, model, res["status"], *(_num(tm[t]) for t in tm), _num(res["index"]))
        for track, cov in res["coverage"].items():
            _row(stdout, model, track, *cov.values())
        for track, means in res["task_means"].items():
            for item, mean in means.items():
                _row(stdout, model, track, item, _num(mean))
        for a in res["adopted_attempts"]:
            _row(stdout, model, a["track"], a["item"], a["attempt"], a["adoption_status"], _num(a["score"]),
                 _num(a["raw_reward"]), a["score_status"], a["line"], "-")
        for e in res["excluded_attempts"]:
            cells = [model, e["track"], e["item"], e["attempt"], "excluded", _num(e["score"]), _num(e["raw_reward"]),
                     e["score_status"], e["line"]]
            line = next(x for x in stdout.splitlines() if x.split()[: len(cells)] == [str(c) for c in cells])
            assert line.endswith(e["reason"].strip() if e["reason"] else "-"), line  # whole, on one line
        for problem in res["problems"]:
            assert any(line.strip() == f"{model}: {problem}" for line in stdout.splitlines()), (problem, stdout)
    assert data["models"]["a"]["adopted_attempts"][2]["raw_reward"] == 0.125
    assert len(data["models"]["b-with-a-long-model-name"]["problems"]) == 2
    assert "\x1b" not in stdout and "│" not in stdout and "…" not in stdout  # plain text when piped


def test_an_output_that_is_the_suite_named_from_the_data_folder_is_refused(tmp_path):
    # the common checks cover a path given as a name (no domain check needed)
    _, att, cohort = setup(tmp_path, full_rows())
    data = tmp_path / "data"
    suite = write_json(data / "suites" / "mini.json", SUITE)
    before = suite.read_bytes()
    result = run("score", "--suite", "mini", "--data-dir", data, "--attempts", att, "--cohort", cohort,
                 "--output", suite)
    assert_one_line_error(result, "inputs are never modified")
    assert suite.read_bytes() == before
    # a suite given by path is a plain string option: no command replaces a file it did not write, and with
    # --force the domain refuses it as the --output
    suite2 = write_json(tmp_path / "suite2.json", SUITE)
    before2 = suite2.read_bytes()
    result = run("score", "--suite", suite2, "--attempts", att, "--cohort", cohort, "--output", suite2)
    assert_one_line_error(result, "holds a file benchscore did not write")
    result = run("score", "--suite", suite2, "--attempts", att, "--cohort", cohort, "--output", suite2, "--force")
    assert_one_line_error(result, "--output is also an input")
    assert suite2.read_bytes() == before2


def test_the_reason_that_decides_the_status_comes_first(tmp_path):
    # an unexplained exclusion (theorem, an earlier track: provisional at most) and a judge failure
    # (construction: incomplete): the judge failure decides, so it is the first problem, which the
    # terminal and the report's summary row lead with
    from benchscore.common.html import Output
    from benchscore.tcsexam.figures import summary_rows

    rows = [r.replace("m,construction,c1,1,1.5,selected,valid", "m,construction,c1,1,,selected,judge_failed")
            for r in full_rows()] + [row("theorem", "t2", "old", "1", adoption="excluded")]
    data = ok(tmp_path, rows)
    m = data["models"]["m"]
    assert m["status"] == "incomplete" and len(m["problems"]) == 2
    assert "construction/c1" in m["problems"][0] and "'judge_failed' is not a valid observation" in m["problems"][0]
    assert "provisional at best" in m["problems"][1]
    page_row = summary_rows(Output(path=tmp_path, label="x", sha256="", doc=data, kind="index"))[0]
    assert page_row.reason.startswith(m["problems"][0])
