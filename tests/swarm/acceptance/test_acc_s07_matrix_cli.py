"""S07 replay (and with Redis), S08 secrets, the matrix, the `accept` command and the demo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.common.cli import group
from benchscore.common.errors import BadInput
from benchscore.common.testserver import OpenAITestServer
from benchscore.swarm.accept.evidence import Check, ScenarioResult
from benchscore.swarm.accept.matrix import build_matrix, junit_check, render_markdown
from benchscore.swarm.accept.runner import REPLAY_MODELS, AcceptOptions, run_acceptance
from benchscore.swarm.accept.s07 import BUNDLE, evaluate_s07, load_pinned_source, replay_responder, run_s07
from benchscore.swarm.cli_accept import accept, demo_acceptance
from benchscore.swarm.gateway import ModelGateway

REDIS_CHECKS = {"pheromone_scores_pg_and_redis", "redis_stream_event_volume"}


def test_pinned_source_is_verified(tmp_path):
    manifest, texts = load_pinned_source()
    assert manifest.repository == "fastapi/fastapi" and manifest.version == "0.115.0"
    assert manifest.sdist_sha256 == "f93b4ca3529a8ebc6fc3fcf710e5efa8de3df9b41570958abf1d97d843138004"
    assert sorted(texts) == list(range(1, 8)) and "class FastAPI(Starlette)" in texts[1]
    bad = tmp_path / "bundle"
    shutil.copytree(BUNDLE, bad)
    target = bad / manifest.files[2].excerpt
    target.write_text(target.read_text() + "# tampered\n")
    with pytest.raises(BadInput, match="sha256"):
        load_pinned_source(bad)


@pytest.fixture(scope="module")
def s07_replay(tmp_path_factory):
    d = tmp_path_factory.mktemp("s07")
    with OpenAITestServer(models=REPLAY_MODELS, responder=replay_responder) as srv:
        gw = ModelGateway(srv.base_url)
        result, ev = run_s07(gw, f"sqlite:///{d}/s07.db", mode="replay", blob_root=d / "blobs", prefix="t")
    return result, ev


def test_s07_replay_on_sqlite_passes_every_check_but_the_redis_ones(s07_replay):
    result, ev = s07_replay
    assert result.mode == "replay" and len(result.checks) == 14
    failed = {c.name for c in result.checks if not c.passed}
    assert failed == REDIS_CHECKS  # no Redis mirror attached: refused, not assumed
    assert not result.passed
    assert ev.chosen_models == REPLAY_MODELS[1:]  # the embedding model listed by discovery is skipped
    assert ev.consensus.round_count == 2 and ev.consensus.accepted_candidate == "accept_external_chain"


@pytest.mark.redis
def test_s07_replay_with_redis_mirror_passes(tmp_path, redis_prefix):
    url, prefix = redis_prefix
    with OpenAITestServer(models=REPLAY_MODELS, responder=replay_responder) as srv:
        result, ev = run_s07(ModelGateway(srv.base_url), f"sqlite:///{tmp_path}/s07.db", mode="replay",
                             redis_url=f"{url}?prefix={prefix}", blob_root=tmp_path / "blobs", prefix="r")
    assert result.passed, [c for c in result.checks if not c.passed]
    assert ev.redis_stream_length >= ev.ledger_events


def _step(ev, k, **update):
    steps = []
    for s in ev.steps:
        if s.payload["step"] == k:
            out = {**s.output, **update.pop("output", {})}
            s = s.model_copy(update={"output": out, **update})
        steps.append(s)
    return ev.model_copy(update={"steps": tuple(steps)})


S07_CASES = {
    "three_distinct_models_from_discovery": lambda ev: ev.model_copy(update={"steps": tuple(
        s.model_copy(update={"output": {**s.output, "model": "replay-coder-a"}}) for s in ev.steps)}),
    "seven_chain_steps_all_done_in_pg": lambda ev: _step(ev, 4, status="failed"),
    "step_markers_and_previous_links": lambda ev: _step(ev, 3, output={
        "text": _text(ev, 3).replace("STEP-02", "the step before")}),
    "all_outputs_pass_quality_gate": lambda ev: _step(ev, 5, output={"quality": {"quality_pass": False}}),
    "shared_state_chain_cursor_and_summaries": lambda ev: _step(ev, 6, payload={
        **next(s for s in ev.steps if s.payload["step"] == 6).payload, "previous_task_id": 1}),
    "convergence_pg_and_blob": lambda ev: ev.model_copy(update={"blob_exists": False}),
    "shared_state_converged": lambda ev: ev.model_copy(update={"convergence": None}),
    "contains_external_fastapi_code_review_material": lambda ev: ev.model_copy(update={"excerpts_verified": False}),
    "multi_round_quality_consensus_accepts_chain": lambda ev: ev.model_copy(update={"consensus": ev.consensus.model_copy(
        update={"rounds": ev.consensus.rounds[:1], "round_count": 1})}),
    "final_output_references_external_files": lambda ev: _step(ev, 7, output={
        "text": "\n".join(ln for ln in _text(ev, 7).splitlines() if "fastapi/" not in ln or "STEP-07" in ln)}),
    "keeps_model_discovery_not_fixed_model": lambda ev: ev.model_copy(update={"discovery_performed": False}),
    "external_github_target_not_local_project": lambda ev: _step(ev, 2, output={
        "text": _text(ev, 2) + "\nsee benchscore"}),
}


def _text(ev, k):
    return next(s for s in ev.steps if s.payload["step"] == k).output["text"]


@pytest.mark.parametrize("check", sorted(S07_CASES))
def test_each_s07_check_fails_on_its_own_evidence(s07_replay, check):
    _, ev = s07_replay
    before = {c.name for c in evaluate_s07(ev).checks if not c.passed}
    after = {c.name for c in evaluate_s07(S07_CASES[check](ev)).checks if not c.passed}
    assert check in after - before


@pytest.mark.parametrize(("score", "passes"), [(0.75 - 1e-8, False), (0.75 - 1e-10, True), (0.75, True),
                                               (0.75 + 1e-8, True)])
def test_accepted_score_edge(s07_replay, score, passes):
    """convergence_pg_and_blob needs accepted_score >= 0.75 (issue 9: through at_least)."""
    _, ev = s07_replay
    ev = ev.model_copy(update={"convergence": {**ev.convergence, "accepted_score": score}})
    check = next(c for c in evaluate_s07(ev).checks if c.name == "convergence_pg_and_blob")
    assert check.passed is passes


# -- S08 and secrets -----------------------------------------------------------------------------

KEY = "sk-live-canary-7d41a9e0"


def _grep(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_no_key_in_any_report_ledger_or_blob(tmp_path, monkeypatch):
    monkeypatch.setenv("GW_KEY", KEY)
    with OpenAITestServer(models=REPLAY_MODELS, responder=replay_responder, api_key=KEY) as srv:
        srv.fail_next(1, status=429, retry_after=0)
        opts = AcceptOptions(store=f"sqlite:///{tmp_path}/store/accept.db", blob_root=tmp_path / "blobs",
                             base_url=srv.base_url, api_key_env="GW_KEY", prefix="k")
        outcome = run_acceptance("S08", opts)
        assert all(h["authorization"] == f"Bearer {KEY}" for h in srv.headers)
    from benchscore.swarm.cli_accept import _write_outputs

    _write_outputs("S08", outcome, opts, tmp_path / "out" / "s08.json")
    s08 = outcome.results["S08"]
    assert s08.mode == "live" and s08.passed
    assert outcome.model_io.calls_recorded == outcome.model_io.calls_issued > 7
    assert (tmp_path / "out" / "s08.model-io.md").exists()
    assert _grep(tmp_path, KEY.encode()) == []
    assert len(list(tmp_path.rglob("*"))) > 5


def test_replay_key_never_written(tmp_path):
    opts = AcceptOptions(store=f"sqlite:///{tmp_path}/a.db", blob_root=tmp_path / "blobs", prefix="c")
    outcome = run_acceptance("S07", opts)
    assert outcome.results["S07"].mode == "replay"
    from benchscore.swarm.cli_accept import _write_outputs

    _write_outputs("S07", outcome, opts, tmp_path / "s07.json")
    assert _grep(tmp_path, b"sk-replay-canary") == []


# -- the matrix ----------------------------------------------------------------------------------

def ok(name, mode="local", checks=("c",)):
    return ScenarioResult(scenario=name, mode=mode, passed=True,
                          checks=tuple(Check(name=c, passed=True, condition="holds") for c in checks))


FEATURE_NAMES = ("F01_decentralization", "F02_self_organization", "F03_emergence", "F04_robustness",
                 "F05_scalability", "F06_implicit_collaboration")


def all_good(s07_mode="live"):
    results = {"S07": ok("S07", s07_mode), "S08": ok("S08", s07_mode), "S09": ok("S09"),
               "S10": ok("S10", checks=FEATURE_NAMES), "L01": ok("L01"), "L02": ok("L02")}
    closed = {f"A0{i}": ok(f"A0{i}") for i in range(1, 8)}
    return results, closed


def test_matrix_all_live_pass_is_100_and_both_verdicts_true():
    m = build_matrix(*all_good()).model_dump()
    assert (m["swarmness_score"], m["minimal_compliance_score"], m["grade"]) == (
        100.0, 100.0, "strong_local_minimal_swarm_compliance")
    assert m["MINIMAL_CLOSED_LOOP_PASS"] and m["LOCAL_SCALE_AND_BUDGET_PASS"] and m["caps_applied"] == ()
    assert "| S07 | 1 |" in render_markdown(build_matrix(*all_good()))


def test_replay_never_counts_and_a_failed_feature_caps():
    m = build_matrix(*all_good("replay")).model_dump()
    assert m["compliance_inputs"]["S07"] == 0 and m["compliance_inputs"]["S08"] == 0
    assert m["minimal_compliance_score"] == 84 and not m["MINIMAL_CLOSED_LOOP_PASS"]
    results, closed = all_good()
    s10 = results["S10"]
    results["S10"] = s10.model_copy(update={"passed": False, "checks": tuple(
        c.model_copy(update={"passed": c.name != "F03_emergence"}) for c in s10.checks)})
    m = build_matrix(results, closed).model_dump()
    assert m["compliance_inputs"]["F03"] == 0 and m["minimal_compliance_score"] == 59
    assert m["grade"] == "not_a_swarm" and not m["MINIMAL_CLOSED_LOOP_PASS"]
    results, closed = all_good()
    results["L01"] = results["L01"].model_copy(update={"passed": False})
    m = build_matrix(results, closed).model_dump()
    assert m["MINIMAL_CLOSED_LOOP_PASS"] and not m["LOCAL_SCALE_AND_BUDGET_PASS"]
    results, closed = all_good()
    closed["A04"] = closed["A04"].model_copy(update={"passed": False})
    assert not build_matrix(results, closed).MINIMAL_CLOSED_LOOP_PASS


def test_junit_report_reading(tmp_path):
    good = tmp_path / "good.xml"
    good.write_text('<testsuites><testsuite tests="12" failures="0" errors="0" skipped="1">'
                    '<testcase classname="tests.swarm.runtime.test_pool" name="t"/></testsuite></testsuites>')
    assert junit_check(good).passed and junit_check(good).evidence["swarm_testcases"] == 1
    other = tmp_path / "other.xml"  # a clean report of some other test suite is not evidence for A02
    other.write_text('<testsuite tests="12" failures="0" errors="0"><testcase classname="tests.mira.test_x" name="t"/>'
                     '</testsuite>')
    assert not junit_check(other).passed
    empty = tmp_path / "empty.xml"
    empty.write_text('<testsuite tests="5" failures="0" errors="0"/>')
    assert not junit_check(empty).passed
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuite tests="3" failures="1" errors="0"/>')
    assert not junit_check(bad).passed
    assert not junit_check(None).passed
    broken = tmp_path / "broken.xml"
    broken.write_text("<testsuite")
    with pytest.raises(BadInput, match="broken.xml"):
        junit_check(broken)


# -- the command ---------------------------------------------------------------------------------

@group("t")
def _cli() -> None:
    pass


_cli.add_command(accept)


def test_accept_s09_via_cli(tmp_path, pinned_time):
    out = tmp_path / "s09.json"
    r = CliRunner().invoke(_cli, ["accept", "S09", "--output", str(out), "--store", f"sqlite:///{tmp_path}/a.db"])
    assert r.exit_code == 0, r.output
    body = orjson.loads(out.read_bytes())
    assert body["verdict"] == "PASS" and body["provenance"]["created_at"] == "2026-01-01T00:00:00Z"
    assert body["provenance"]["metric_id"] == "swarm.acceptance.S09"


def test_accept_bad_input_is_one_line_exit_2(tmp_path):
    r = CliRunner().invoke(_cli, ["accept", "all", "--junit", str(tmp_path / "missing.xml"),
                                  "--output", str(tmp_path / "m.json")])
    assert r.exit_code == 2 and "missing.xml" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "m.json").exists()
    r = CliRunner().invoke(_cli, ["accept", "S99"])
    assert r.exit_code == 2
    r = CliRunner().invoke(_cli, ["accept", "S07", "--tpm", "500", "--output", str(tmp_path / "s.json")])
    assert r.exit_code == 2 and "--tpm 500" in r.output and not (tmp_path / "s.json").exists()


def test_accept_live_gateway_where_no_model_answers_is_exit_2(tmp_path):
    with OpenAITestServer(models=["text-embedding-only"]) as srv:  # no chat model to run S07 with
        r = CliRunner().invoke(_cli, ["accept", "S07", "--base-url", srv.base_url, "--store",
                                      f"sqlite:///{tmp_path}/a.db", "--output", str(tmp_path / "s07.json")])
    errors = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert r.exit_code == 2 and len(errors) == 1 and "no discovered chat model answered" in errors[0]
    assert "Traceback" not in r.output and not (tmp_path / "s07.json").exists()


def test_accept_all_writes_matrix_and_fails_closed_loop_without_live(tmp_path):
    junit = tmp_path / "j.xml"
    junit.write_text('<testsuite tests="1" failures="0" errors="0">'
                     '<testcase classname="tests.swarm.runtime.test_audit" name="t"/></testsuite>')
    out = tmp_path / "m.json"
    r = CliRunner().invoke(_cli, ["accept", "all", "--quick", "--junit", str(junit), "--output", str(out)])
    assert r.exit_code == 1, r.output  # S07/S08 replay and L01 not run: the closed loop is not claimed
    m = orjson.loads(out.read_bytes())
    for key in ("swarmness_score", "minimal_compliance_score", "grade", "caps_applied", "MINIMAL_CLOSED_LOOP_PASS",
                "LOCAL_SCALE_AND_BUDGET_PASS", "checks", "provenance"):
        assert key in m
    assert m["scenarios"]["S07"]["mode"] == "replay" and m["scenarios"]["L01"]["mode"] == "not_run"
    assert m["closed_loop"]["A02_unit_and_deterministic_scenarios"] == "PASS"
    why = m["compliance_input_reasons"]
    assert m["swarmness_score"] == 100.0 and m["minimal_compliance_score"] == 78, why
    assert all(c["verdict"] in ("PASS", "FAIL") for c in m["checks"])
    assert out.with_suffix(".md").exists() and (tmp_path / "m.model-io.md").exists()


def test_demo_acceptance_writes_the_matrix(tmp_path):
    demo_acceptance(tmp_path)
    m = orjson.loads((tmp_path / "acceptance-matrix.json").read_bytes())
    assert m["not_live"] and not m["MINIMAL_CLOSED_LOOP_PASS"]


def test_console_script_runs_accept(tmp_path):
    exe = Path(sys.executable).with_name("benchscore")
    out = tmp_path / "s09.json"
    proc = subprocess.run([str(exe), "swarm", "accept", "S09", "--output", str(out), "--store",
                           f"sqlite:///{tmp_path}/a.db"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SOURCE_DATE_EPOCH": "0"})
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(out.read_bytes())["verdict"] == "PASS"


@pytest.mark.pg
@pytest.mark.redis
def test_s07_replay_on_postgresql_with_redis(pg_schema, redis_prefix, tmp_path):
    dsn, schema = pg_schema
    url, prefix = redis_prefix
    with OpenAITestServer(models=REPLAY_MODELS, responder=replay_responder) as srv:
        result, ev = run_s07(ModelGateway(srv.base_url), f"{dsn}?schema={schema}", mode="replay",
                             redis_url=f"{url}?prefix={prefix}", blob_root=tmp_path / "blobs", prefix="pg")
    assert result.passed, [c for c in result.checks if not c.passed]
    assert ev.store_kind.startswith("postgres")


def test_accept_formats_have_json_schemas():
    from benchscore.swarm.cli_accept import ACCEPT_FORMATS

    for name, model in ACCEPT_FORMATS.items():
        assert model.model_json_schema()["type"] == "object", name


def test_quality_gate_fallback_to_the_next_discovered_model(tmp_path):
    def responder(model, messages):
        text = str(messages[-1]["content"])
        if model == "replay-coder-b" and text.startswith("STEP-02"):
            return "I'm sorry, but I cannot help with that."
        return replay_responder(model, messages)

    with OpenAITestServer(models=REPLAY_MODELS, responder=responder) as srv:
        result, ev = run_s07(ModelGateway(srv.base_url), f"sqlite:///{tmp_path}/s.db", mode="replay",
                             blob_root=tmp_path / "b", prefix="f")
    tried = {s.payload["step"]: s.output["models_tried"] for s in ev.steps}
    assert tried[2] == ["replay-coder-b", "replay-coder-c"]  # refused, fell back, passed
    assert {c.name for c in result.checks if not c.passed} == REDIS_CHECKS


def test_every_model_refusing_fails_the_gate_with_the_risk_score(tmp_path):
    def responder(model, messages):
        text = str(messages[-1]["content"])
        if text.startswith("STEP-03"):
            return "OFF-TOPIC: a poem about spring"
        return replay_responder(model, messages)

    with OpenAITestServer(models=REPLAY_MODELS, responder=responder) as srv:
        result, ev = run_s07(ModelGateway(srv.base_url), f"sqlite:///{tmp_path}/s.db", mode="replay",
                             blob_root=tmp_path / "b", prefix="g")
    step3 = next(s for s in ev.steps if s.payload["step"] == 3)
    assert step3.score == 0.12 and step3.output["risk"] and len(step3.output["models_tried"]) == 3
    failed = {c.name for c in result.checks if not c.passed}
    assert "all_outputs_pass_quality_gate" in failed


REAL_SDIST = Path(os.environ.get("BENCHSCORE_FASTAPI_SDIST", "/tmp/fa/fastapi-0.115.0.tar.gz"))


def test_sdist_verification_refuses_a_wrong_archive(tmp_path):
    import io
    import tarfile

    from benchscore.swarm.accept.s07 import verify_sdist

    source, excerpts = load_pinned_source()
    fake = tmp_path / "fastapi-0.115.0.tar.gz"
    with tarfile.open(fake, "w:gz") as tar:
        body = excerpts[1].encode()  # right excerpt text, but not the whole file
        info = tarfile.TarInfo("fastapi-0.115.0/fastapi/applications.py")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    ev = verify_sdist(fake, source, excerpts)
    assert not ev["verified"] and not ev["sdist_sha256_matches"]
    assert ev["files"]["fastapi/applications.py"] == "mismatch" and ev["files"]["fastapi/routing.py"] == "missing"
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball")
    with pytest.raises(BadInput, match="junk.tar.gz"):
        verify_sdist(junk, source, excerpts)


@pytest.mark.skipif(not REAL_SDIST.is_file(), reason="the fastapi 0.115.0 sdist is not downloaded here "
                    "(pip download --no-deps --no-binary :all: fastapi==0.115.0; BENCHSCORE_FASTAPI_SDIST=PATH)")
def test_bundled_excerpts_match_the_real_sdist():
    from benchscore.swarm.accept.s07 import verify_sdist

    source, excerpts = load_pinned_source()
    ev = verify_sdist(REAL_SDIST, source, excerpts)
    assert ev["verified"], ev


def test_demo_acceptance_never_raises(tmp_path, monkeypatch, capsys):
    import benchscore.swarm.cli_accept as mod

    def boom(*a, **k):
        raise RuntimeError("store exploded")

    monkeypatch.setattr(mod, "run_acceptance", boom)
    mod.demo_acceptance(tmp_path)
    assert "store exploded" in capsys.readouterr().out
    assert not (tmp_path / "acceptance-matrix.json").exists()


def test_convergence_blob_is_read_back_and_matched(tmp_path):
    """blob_artifact_exists is evidence only when the blob's bytes match their sha256 and it holds the
    convergence the store recorded: a tampered blob or one of another result fails the check."""
    from benchscore.swarm import BlobStore, open_pool
    from benchscore.swarm.accept.s07 import collect_s07_evidence

    store, blobs = f"sqlite:///{tmp_path}/s07.db", BlobStore(tmp_path / "blobs")
    with OpenAITestServer(models=REPLAY_MODELS, responder=replay_responder) as srv:
        _, ev = run_s07(ModelGateway(srv.base_url), store, mode="replay", blob_root=tmp_path / "blobs", prefix="b")
    assert ev.blob_exists
    source, _ = load_pinned_source()

    def recollect(pool):
        return collect_s07_evidence(pool, source, mode="replay", discovered=ev.discovered_models,
                                    chosen=ev.chosen_models, blobs=blobs)

    with open_pool(store, "b-s07") as pool:
        conv = pool.convergences()["run"]
        path = tmp_path / "blobs" / "sha256" / conv["blob_sha256"][:2] / conv["blob_sha256"]
        good = path.read_bytes()
        path.write_bytes(good.replace(b"accepted_task_id", b"accepted_task_xx"))
        tampered = recollect(pool)
        assert not tampered.blob_exists
        assert "convergence_pg_and_blob" in {c.name for c in evaluate_s07(tampered).checks if not c.passed}
        path.write_bytes(good)
        result = pool.converge("s07_step")
        other = blobs.put_json({"run_id": "someone-else", **result.model_dump(), "accepted_task_id": 999})
        pool.record_convergence("run", result, other)
        assert not recollect(pool).blob_exists
        pool.record_convergence("run", result, conv["blob_sha256"])
        assert recollect(pool).blob_exists


def test_malformed_junit_is_refused_before_anything_runs(tmp_path, monkeypatch):
    import benchscore.swarm.cli_accept as cli_accept

    def must_not_run(*a, **k):
        raise AssertionError("the scenarios ran before the --junit file was read")

    monkeypatch.setattr(cli_accept, "run_acceptance", must_not_run)
    bad = tmp_path / "junit.xml"
    bad.write_text('<testsuite tests="many"/>')
    r = CliRunner().invoke(_cli, ["accept", "all", "--junit", str(bad), "--output", str(tmp_path / "m.json")])
    assert r.exit_code == 2 and "junit.xml: field 'tests'" in r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "m.json").exists()


def test_accept_timeout_bounds_each_live_model_call(tmp_path):
    # every answer takes 1 s: within the default 60 s timeout S07 would run; with --timeout 0.2
    # every call times out (retried, then failed), so no discovered model answers: exit 2, one line
    with OpenAITestServer(models=["m-a"]) as srv:
        srv.delay_next(1000, seconds=1.0)
        r = CliRunner().invoke(_cli, ["accept", "S07", "--base-url", srv.base_url, "--timeout", "0.2", "--store",
                                      f"sqlite:///{tmp_path}/a.db", "--output", str(tmp_path / "s07.json")])
    errors = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert r.exit_code == 2 and len(errors) == 1 and "no discovered chat model answered" in errors[0], r.output
    assert not (tmp_path / "s07.json").exists()
    r = CliRunner().invoke(_cli, ["accept", "S07", "--timeout", "0"])
    assert r.exit_code == 2 and "--timeout" in r.output


def test_a_replayed_s07_s08_has_one_verdict_with_its_reason_everywhere(tmp_path, capsys):
    # a replay that passed its checks is FAIL (only live counts) in the scenarios, the closed loop, the
    # compliance inputs, the terminal, the Markdown twin, the report's tables, figure and summary
    from benchscore.publish import report

    demo_acceptance(tmp_path)
    terminal = capsys.readouterr().out
    m = orjson.loads((tmp_path / "acceptance-matrix.json").read_bytes())
    why = ("replay (local OpenAI-compatible test server with a deterministic responder): its checks passed, "
           "but only a live run against a real gateway counts")
    sc = m["scenarios"]["S08"]
    assert (sc["verdict"], sc["verdict_reason"]) == ("FAIL", why) and set(sc["checks"].values()) == {"PASS"}
    assert m["closed_loop"]["S08_model_io_report_audit"] == "FAIL"
    assert m["compliance_inputs"]["S08"] == 0 and m["compliance_input_reasons"]["S08"] == f"FAIL {why}"
    for key, item in (("S07", "S07_live_external_github_code_reasoning"), ("S08", "S08_model_io_report_audit")):
        assert m["scenarios"][key]["verdict"] == m["closed_loop"][item] == "FAIL"
    assert f"S08 (replay): FAIL: {why}" in terminal
    assert f"S08 | replay | FAIL | {why}" in terminal and "S08_model_io_report_audit | replay | FAIL | " in terminal
    assert "| S08 | **replay** | FAIL |" in (tmp_path / "acceptance-matrix.md").read_text()
    found = report.read_outputs([(tmp_path / "acceptance-matrix.json", "m")], strict=True)
    page = report.report_page(found, "t")
    assert "S08 (replay) 7/7 FAIL" in page  # the matrix figure's row label
    assert ">PASS<" not in page.split("Scenarios", 1)[1].split("S08", 1)[1].split("</tr>", 1)[0]


def test_a_single_scenario_file_holds_the_same_verdict(tmp_path):
    out = tmp_path / "s08.json"
    r = CliRunner().invoke(_cli, ["accept", "S08", "--output", str(out), "--store", f"sqlite:///{tmp_path}/a.db"])
    body = orjson.loads(out.read_bytes())
    assert r.exit_code == 1 and body["passed"] and body["verdict"] == "FAIL", r.output  # checks pass, replay
    assert "only a live run against a real gateway counts" in body["verdict_reason"]
    assert "S08 (replay): FAIL: replay" in r.output
    from benchscore.publish import report

    found = report.read_outputs([(out, "s")], strict=True)
    row = report.summary_rows(found)[0]
    assert row.status == "FAIL" and "only a live run" in row.reason
    body["verdict"] = "PASS"  # a file that claims what its mode does not give is refused
    out.write_bytes(orjson.dumps(body))
    with pytest.raises(BadInput, match="verdict"):
        report.read_outputs([(out, "s")], strict=True)


def _probe_or_vote(model, messages, schema):
    if "probe" in schema["properties"]:
        return '{"probe": "benchscore-constraint-probe"}'
    return '{"vote": "accept_external_chain", "confidence": 0.9}'


def test_a_refused_constraint_probe_is_a_finding_not_a_failed_call(tmp_path):
    # a gateway that refuses json_schema with HTTP 500 (as llama-cpp-python does): the probes that try it
    # are how the constraint is chosen, not failures of the run; S08 neither counts nor prints them as FAIL
    out = tmp_path / "s07.json"
    with OpenAITestServer(models=REPLAY_MODELS, responder=replay_responder, constraints=("json_object_schema",),
                          unsupported_constraint="reject", constrained_responder=_probe_or_vote) as srv:
        r = CliRunner().invoke(_cli, ["accept", "S07", "--base-url", srv.base_url, "--store",
                                      f"sqlite:///{tmp_path}/a.db", "--output", str(out)])
    io = orjson.loads(out.with_name("s07.model-io.json").read_bytes())
    refused = [rec for rec in io["records"] if rec["status"] != "ok"]
    assert len(refused) == 3 and all(rec["purpose"] == "constraint-probe" and rec["http_status"] == 500
                                     and rec["constraint"] == "json_schema" for rec in refused), r.output
    assert io["calls_failed"] == 0 and io["failures"] == [] and io["S08_PASS"]
    assert [p["constraint"] for p in io["probe_refusals"]] == ["json_schema"] * 3
    assert {m: p["mode"] for m, p in io["constraints"].items()} == dict.fromkeys(REPLAY_MODELS[1:], "json_object_schema")
    assert all(m["failed"] == 0 and m["probe_refusals"] == 1 for m in io["models"])
    assert "calls_failed=0 probe_refusals=3" in r.output and "FAIL call" not in r.output
    assert ("constraint replay-coder-a: json_object_schema chosen (probe: json_schema rejected: HTTP 500"
            in r.output)
    assert "constraint probe(s) refused" in out.with_name("s07.model-io.md").read_text()
