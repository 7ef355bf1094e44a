"""Judge isolation: packets, `mira judge` against the local OpenAI-compatible test server, merging verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from mira_helpers import run, write_json, write_jsonl

from benchscore.common.testserver import OpenAITestServer

CANARY = "CANARY-PRIVATE-7f3a"

CONTRACT = {
    "benchmark_id": "j", "contract_version": "1",
    "cases": [{
        "case_id": "K", "intent": "i", "difficulty": "d", "prompt": "Explain the bug.",
        "scoring_class": "automated_scored", "t_soft_s": 10,
        "criteria": [{"id": "det", "weight": 0.5, "scorer": "deterministic", "hidden_evaluator": CANARY + "-eval"},
                     {"id": "expl", "weight": 0.5, "scorer": "judge", "question": "Is the explanation correct?"}],
        "private_fixtures": {"f": CANARY + "-fixture"}, "hidden_evaluator": CANARY + "-hidden",
        "credentials": {"token": CANARY + "-token"},
    }],
}


def _reps(verdicts: bool = False) -> list[dict]:
    out = []
    for i in (1, 2, 3):
        rec = {"case_id": "K", "repetition": i, "execution_mode": "adapted", "terminal_state": "completed",
               "elapsed_s": 5, "deterministic_results": {"det": True},
               "evidence": {"final_answer": f"EVIDENCE-OF-REP-{i}"},
               "raw_trajectory": [{"secret": CANARY + f"-trajectory-{i}"}]}
        if verdicts:
            rec["judge_verdicts"] = {"expl": "pass"}
        out.append(rec)
    out.append({"case_id": "K", "repetition": 4, "execution_mode": "invalid", "terminal_state": "failed"})
    return out


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    c = write_json(tmp_path / "contract.json", CONTRACT)
    r = write_jsonl(tmp_path / "reps.jsonl", _reps())
    packets = tmp_path / "packets"
    res = run("judge-packets", "--contract", c, "--repetitions", r, "--output-dir", packets)
    assert res.exit_code == 0, res.output
    return c, r, packets


def test_packets_hold_only_their_own_repetition(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    index = orjson.loads((packets / "index.json").read_bytes())
    assert [p["packet_id"] for p in index["packets"]] == ["K.r1.expl", "K.r2.expl", "K.r3.expl"]  # no invalid rep
    for n, entry in enumerate(index["packets"], start=1):
        raw = (packets / entry["file"]).read_text()
        packet = orjson.loads(raw)
        assert packet["sha256"] == entry["sha256"] and re.fullmatch(r"[0-9a-f]{64}", packet["sha256"])
        assert packet["question"] == "Is the explanation correct?"
        assert packet["prompt"] == "Explain the bug."
        assert packet["evidence"] == {"final_answer": f"EVIDENCE-OF-REP-{n}"}
        others = {f"EVIDENCE-OF-REP-{m}" for m in (1, 2, 3) if m != n}
        assert not any(o in raw for o in others)
        assert CANARY not in raw
        assert set(packet) == {"packet_id", "case_id", "repetition", "criterion_id", "question", "prompt",
                               "evidence", "contract_sha256", "sha256"}


def test_packets_folder_must_not_exist(tmp_path: Path) -> None:
    c, r, packets = _setup(tmp_path)
    res = run("judge-packets", "--contract", c, "--repetitions", r, "--output-dir", packets)
    assert res.exit_code == 2 and "already exists" in res.stderr


def test_judge_fresh_conversation_per_packet_and_merge(tmp_path: Path) -> None:
    c, r, packets = _setup(tmp_path)
    answers = {"EVIDENCE-OF-REP-1": "pass", "EVIDENCE-OF-REP-2": " fail\n", "EVIDENCE-OF-REP-3": "Pass, mostly"}

    def responder(model, messages):
        text = messages[-1]["content"]
        return next(v for k, v in answers.items() if k in text)

    with OpenAITestServer(models=["judge-m"], responder=responder) as srv:
        srv.fail_next(1, status=429, retry_after=0.01)
        res = run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "judge-m",
                  "--output", tmp_path / "verdicts.json", "--constraint", "none")
        assert res.exit_code == 1, res.output  # one answer was not binary: judge_failed, file still written
        bodies = [b for b in srv.requests]
    # one fresh conversation per packet (plus the retried 429): system + one user message, own evidence only
    assert len(bodies) == 4
    for body in bodies:
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        user = body["messages"][1]["content"]
        assert sum(f"EVIDENCE-OF-REP-{m}" in user for m in (1, 2, 3)) == 1
        assert CANARY not in orjson.dumps(body).decode()
    out = orjson.loads((tmp_path / "verdicts.json").read_bytes())
    got = {v["packet_id"]: v["verdict"] for v in out["verdicts"]}
    assert got == {"K.r1.expl": "pass", "K.r2.expl": "fail", "K.r3.expl": "judge_failed"}
    assert all(v["call"]["status"] == "ok" for v in out["verdicts"])

    res = run("score", "--contract", c, "--repetitions", r, "--verdicts", tmp_path / "verdicts.json",
              "--output", tmp_path / "score.json", "--quiet")
    score = orjson.loads((tmp_path / "score.json").read_bytes())
    assert res.exit_code == (0 if score["status"] == "complete" else 1), res.output
    reps = {x["id"]: x for x in score["repetitions"]}
    assert reps["K#1"]["status"] == "pass"
    assert reps["K#2"]["status"] == "partial" and reps["K#2"]["raw_success"] == 0.5
    assert reps["K#3"]["status"] is None and "judge_failed" in reps["K#3"]["derivation"]
    assert score["status"] == "incomplete"  # a judge_failed criterion is never guessed
    assert score["cases"][0]["metrics"]["task_success"]["value"] is None


def test_judge_verdicts_complete_the_case(tmp_path: Path) -> None:
    c, r, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        assert run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                   "--output", tmp_path / "v.json").exit_code == 0
    res = run("score", "--contract", c, "--repetitions", r, "--verdicts", tmp_path / "v.json",
              "--output", tmp_path / "s.json", "--quiet")
    assert res.exit_code == 0, res.output
    s = orjson.loads((tmp_path / "s.json").read_bytes())
    assert s["status"] == "complete"
    assert s["overall"]["reliability"]["value"] == 100.0
    assert "verdicts" in s["provenance"]["inputs"]


def test_unknown_model_is_one_line_exit_2(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        res = run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "nope",
                  "--output", tmp_path / "v.json")
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "'nope' is not listed by" in res.stderr
    assert not (tmp_path / "v.json").exists()


def test_unreachable_endpoint_is_one_line_exit_2(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"]) as srv:
        url = srv.base_url  # the server stops: nothing listens there any more
    res = run("judge", "--packets", packets, "--base-url", url, "--model", "m", "--max-retries", "0",
              "--output", tmp_path / "v.json")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert res.stderr.startswith("error: judge endpoint: model discovery at")
    assert not (tmp_path / "v.json").exists()


def test_failed_calls_are_judge_failed(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        srv.fail_next(100, status=500, retry_after=0)
        res = run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m", "--max-retries", "1",
                  "--output", tmp_path / "v.json")
    assert res.exit_code == 1, res.output  # written, but judging is not complete
    assert "packets are judge_failed" in res.stderr
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    assert {v["verdict"] for v in out["verdicts"]} == {"judge_failed"}
    assert all(v["call"]["status"] == "failed" and v["reason"].startswith("judge call failed") for v in out["verdicts"])


def test_tampered_packet_is_refused(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    p = packets / "K.r2.expl.json"
    data = orjson.loads(p.read_bytes())
    data["evidence"]["final_answer"] = "EVIDENCE-OF-REP-1"
    p.write_bytes(orjson.dumps(data))
    res = run("judge", "--packets", packets, "--base-url", "http://127.0.0.1:9", "--model", "m",
              "--output", tmp_path / "v.json")
    assert res.exit_code == 2 and "does not match its sha256" in res.stderr


def test_verdict_for_changed_evidence_is_refused(tmp_path: Path) -> None:
    c, r, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        assert run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                   "--output", tmp_path / "v.json").exit_code == 0
    reps = _reps()
    reps[0]["evidence"] = {"final_answer": "something else"}
    write_jsonl(r, reps)
    res = run("score", "--contract", c, "--repetitions", r, "--verdicts", tmp_path / "v.json",
              "--output", tmp_path / "s.json")
    assert res.exit_code == 2 and "packet_sha256 does not match" in res.stderr
    assert not (tmp_path / "s.json").exists()


def test_verdict_contradicting_record_is_refused(tmp_path: Path) -> None:
    c, r, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "fail") as srv:
        assert run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                   "--output", tmp_path / "v.json").exit_code == 0
    write_jsonl(r, _reps(verdicts=True))
    res = run("score", "--contract", c, "--repetitions", r, "--verdicts", tmp_path / "v.json",
              "--output", tmp_path / "s.json")
    assert res.exit_code == 2 and "contradicts 'pass'" in res.stderr


def test_colliding_packet_ids_are_refused(tmp_path: Path) -> None:
    """Case 'A' rep 1 criterion 'r2.x' and case 'A.r1' rep 2 criterion 'x' would both be packet 'A.r1.r2.x':
    one packet file would overwrite the other, so judge-packets refuses with one line and writes nothing."""
    case = CONTRACT["cases"][0]
    contract = {**CONTRACT, "cases": [
        {**case, "case_id": "A", "criteria": [{"id": "r2.x", "weight": 1, "scorer": "judge", "question": "q?"}]},
        {**case, "case_id": "A.r1", "criteria": [{"id": "x", "weight": 1, "scorer": "judge", "question": "q?"}]},
    ]}
    c = write_json(tmp_path / "contract.json", contract)
    rep = {"execution_mode": "adapted", "terminal_state": "completed", "elapsed_s": 5}
    r = write_jsonl(tmp_path / "reps.jsonl", [{**rep, "case_id": "A", "repetition": 1},
                                              {**rep, "case_id": "A.r1", "repetition": 2}])
    res = run("judge-packets", "--contract", c, "--repetitions", r, "--output-dir", tmp_path / "packets")
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1
    assert f"{r}: line 2: field 'case_id': " in res.stderr and "'A.r1.r2.x'" in res.stderr
    assert not (tmp_path / "packets").exists()


def test_verdicts_carry_the_contract_sha256(tmp_path: Path) -> None:
    """Issue 3: the contract's sha256 goes into every output, the verdicts file included."""
    c, r, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        assert run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                   "--output", tmp_path / "v.json").exit_code == 0
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    index = orjson.loads((packets / "index.json").read_bytes())
    assert out["provenance"]["contract_sha256"] == index["contract_sha256"]
    assert run("score", "--contract", c, "--repetitions", r, "--verdicts", tmp_path / "v.json",
               "--output", tmp_path / "s.json", "--quiet").exit_code == 0
    assert orjson.loads((tmp_path / "s.json").read_bytes())["contract_sha256"] == index["contract_sha256"]


def test_packets_of_another_contract_are_refused(tmp_path: Path) -> None:
    """A packet whose contract_sha256 is not the index's (a folder mixing two contracts) is refused, one line."""
    _, _, packets = _setup(tmp_path)
    p = packets / "K.r2.expl.json"
    data = orjson.loads(p.read_bytes())
    data["contract_sha256"] = "0" * 64
    from benchscore.mira.judge import packet_sha256

    data["sha256"] = packet_sha256(data)
    p.write_bytes(orjson.dumps(data))
    index = orjson.loads((packets / "index.json").read_bytes())
    for entry in index["packets"]:
        if entry["file"] == p.name:
            entry["sha256"] = data["sha256"]
    (packets / "index.json").write_bytes(orjson.dumps(index))
    res = run("judge", "--packets", packets, "--base-url", "http://127.0.0.1:9", "--model", "m",
              "--output", tmp_path / "v.json")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert f"{p}: field 'contract_sha256'" in res.stderr
    assert not (tmp_path / "v.json").exists()


def test_a_verdict_whose_packet_id_is_not_its_packets_is_refused(tmp_path: Path) -> None:
    """Issue 9 item 11: a judge_failed and a pass for the same packet under two ids must not merge to pass."""
    c, r, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        assert run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                   "--output", tmp_path / "v.json").exit_code == 0
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    third = out["verdicts"][2]
    assert third["packet_id"] == "K.r3.expl"
    failed = {**third, "verdict": "judge_failed", "answer": "maybe", "reason": "answer is not exactly 'pass' or 'fail'"}
    forged = {**third, "packet_id": "K.r3.expl-again"}
    for verdicts, bad in (([*out["verdicts"][:2], failed, forged], 3), ([*out["verdicts"][:2], forged, failed], 2)):
        v = write_json(tmp_path / "forged.json", {**out, "verdicts": verdicts})
        res = run("score", "--contract", c, "--repetitions", r, "--verdicts", v, "--output", tmp_path / "s.json")
        assert res.exit_code == 2, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1, res.stderr
        assert lines[0].startswith(f"error: {v}: verdicts[{bad}]: field 'packet_id': "), lines[0]
        assert "'K.r3.expl-again'" in lines[0] and "'K.r3.expl'" in lines[0]
        assert not (tmp_path / "s.json").exists()


def test_judge_packets_output_dir_and_the_hidden_out_alias(tmp_path: Path) -> None:
    """Issue 10 item 3: `--output-dir` names the folder; `--out` still works but is not shown in --help."""
    c = write_json(tmp_path / "contract.json", CONTRACT)
    r = write_jsonl(tmp_path / "reps.jsonl", _reps())
    for option, folder in (("--output-dir", "a"), ("--out", "b")):
        res = run("judge-packets", "--contract", c, "--repetitions", r, option, tmp_path / folder)
        assert res.exit_code == 0, res.output
        assert (tmp_path / folder / "index.json").is_file()
    assert (tmp_path / "a" / "K.r1.expl.json").read_bytes() == (tmp_path / "b" / "K.r1.expl.json").read_bytes()
    help_text = run("judge-packets", "--help").output
    assert "--output-dir" in help_text and "--out " not in help_text and "--out," not in help_text
    res = run("judge-packets", "--contract", c, "--repetitions", r)
    assert res.exit_code == 2 and "--output-dir" in res.stderr
    res = run("judge-packets", "--contract", c, "--repetitions", r, "--output-dir", tmp_path / "x", "--out",
              tmp_path / "y")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_answer_rule_is_one_word_after_whitespace_and_a_trailing_period() -> None:
    """Issue 11 item 3: a verdict only when the answer is exactly `pass` or `fail` once surrounding whitespace
    and one trailing period are stripped; anything else is judge_failed (the seed's binary rule)."""
    from benchscore.mira.judge import parse_answer

    for text, verdict in (("pass", "pass"), ("fail", "fail"), (" pass\n", "pass"), ("fail.", "fail"),
                          ("\n pass. \n", "pass"), ("pass .", None), ("pass..", None), ("Pass", None), ("FAIL.", None),
                          ("pass, mostly", None), ("pass fail", None), ("", None), (".", None), ("yes", None),
                          ("`pass`", None), ("passed", None)):
        assert parse_answer(text) == verdict, text


def test_the_judge_asks_for_one_word_with_a_small_token_cap(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "fail.") as srv:
        res = run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                  "--output", tmp_path / "v.json", "--constraint", "none")
        bodies = list(srv.requests)
    assert res.exit_code == 0, res.output
    from benchscore.mira.judge import MAX_TOKENS

    for body in bodies:
        assert body["max_tokens"] == MAX_TOKENS <= 8 and body["temperature"] == 0.0
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        assert "exactly one word" in system and "`pass` or `fail`" in user
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    assert {v["verdict"] for v in out["verdicts"]} == {"fail"}
    assert {v["answer"] for v in out["verdicts"]} == {"fail."}  # the raw answer is kept
    assert "free text (constraint none): exactly 'pass' or 'fail'" in out["provenance"]["answer_rule"]
    assert out["provenance"]["constraint"] == "none"
    assert out["provenance"]["max_tokens"] == MAX_TOKENS


def test_a_call_past_the_timeout_is_judge_failed(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        srv.delay_next(1, seconds=1.0)
        res = run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m", "--max-retries", "0",
                  "--timeout", "0.2", "--output", tmp_path / "v.json", "--constraint", "none")
    assert res.exit_code == 1, res.output
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    assert [v["verdict"] for v in out["verdicts"]] == ["judge_failed", "pass", "pass"]
    assert out["verdicts"][0]["reason"].startswith("judge call failed") and "timeout" in out["verdicts"][0]["reason"]


def test_the_loser_of_two_judge_packets_into_one_folder_gets_one_line(tmp_path: Path, monkeypatch) -> None:
    """Issue 15, point 9: the other command creates the folder after this one checked it (the race's late
    window): one line, exit 2, the winner's folder untouched. It was FileExistsError or OSError [Errno 39]."""
    import benchscore.mira.judge as judge

    c = write_json(tmp_path / "contract.json", CONTRACT)
    r = write_jsonl(tmp_path / "reps.jsonl", _reps())
    folder = tmp_path / "packets"
    real = judge.build_packets

    def the_other_one_wins(*args, **kwargs):
        folder.mkdir()
        (folder / "index.json").write_text('{"winner": true}')
        return real(*args, **kwargs)

    monkeypatch.setattr(judge, "build_packets", the_other_one_wins)
    res = run("judge-packets", "--contract", c, "--repetitions", r, "--output-dir", folder)
    assert res.exit_code == 2 and res.stderr == f"error: {folder}: already exists; choose a new folder\n", res.output
    assert [p.name for p in folder.iterdir()] == ["index.json"]
    assert (folder / "index.json").read_text() == '{"winner": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contract.json", "packets", "reps.jsonl"]


def test_two_judge_packets_racing_for_one_folder_have_one_winner(tmp_path: Path) -> None:
    """The real race, as subprocesses: whichever wins, the other says so in one line and the folder is whole."""
    import subprocess
    import sys

    c = write_json(tmp_path / "contract.json", CONTRACT)
    r = write_jsonl(tmp_path / "reps.jsonl", _reps())
    cmd = [sys.executable, "-c", "from benchscore.cli import main; main()", "mira", "judge-packets", "--contract",
           str(c), "--repetitions", str(r), "--quiet", "--output-dir"]
    for attempt in range(3):
        folder = tmp_path / f"packets{attempt}"
        procs = [subprocess.Popen([*cmd, str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL) for _ in range(2)]
        results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        assert sorted(code for code, _ in results) == [0, 2], results
        (_, loser), = [(code, err) for code, err in results if code == 2]
        assert loser == f"error: {folder}: already exists; choose a new folder\n", loser
        index = orjson.loads((folder / "index.json").read_bytes())
        assert sorted(p.name for p in folder.iterdir()) == sorted(["index.json", *(e["file"] for e in index["packets"])])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "a temporary folder was left"


# -- issue 20: the verdict under the endpoint's schema constraint --------------------------------------------


def test_the_judge_asks_for_the_verdict_object_under_the_probed_constraint(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    verdicts = iter(['{"verdict": "fail"}', '{"verdict":"pass"}'])

    def answer(model, messages, schema):
        if "probe" in schema["properties"]:  # the constraint probe
            return '{"probe": "benchscore-constraint-probe"}'
        assert schema == {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["pass", "fail"]}},
                          "required": ["verdict"], "additionalProperties": False}
        return next(verdicts)

    with OpenAITestServer(models=["m"], constraints=("json_object_schema",), unsupported_constraint="reject",
                          constrained_responder=answer) as srv:
        srv.violate_schema_next(1, text='```json\n{"verdict": "pass"}\n```', skip=3)  # probe, then rep 1, 2 pass
        res = run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                  "--output", tmp_path / "v.json")
        judged = [b for b in srv.requests if b["messages"][0]["role"] == "system"]
    assert res.exit_code == 1, res.output
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    assert [v["verdict"] for v in out["verdicts"]] == ["fail", "pass", "judge_failed"]
    third = out["verdicts"][2]
    assert third["answer"] == '```json\n{"verdict": "pass"}\n```'  # kept as written, never repaired into a pass
    assert "json_object_schema constraint (never repaired)" in third["reason"]
    assert all(v["call"]["constraint"] == "json_object_schema" for v in out["verdicts"])
    assert out["provenance"]["constraint"] == "json_object_schema"
    assert [t["mode"] for t in out["provenance"]["constraint_probe"]] == ["json_schema", "json_object_schema"]
    from benchscore.mira.judge import VERDICT_FORMAT

    for body in judged:
        assert body["response_format"] == {"type": "json_object", "schema": VERDICT_FORMAT.schema}
        assert body["max_tokens"] == VERDICT_FORMAT.max_tokens and '{"verdict": "pass"}' in body["messages"][0]["content"]


def test_the_judge_falls_back_to_one_word_where_nothing_is_enforced(tmp_path: Path) -> None:
    _, _, packets = _setup(tmp_path)
    with OpenAITestServer(models=["m"], responder=lambda model, msgs: "pass") as srv:
        res = run("judge", "--packets", packets, "--base-url", srv.base_url, "--model", "m",
                  "--output", tmp_path / "v.json")
        last = srv.requests[-1]
    assert res.exit_code == 0, res.output
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    assert out["provenance"]["constraint"] == "none" and {v["verdict"] for v in out["verdicts"]} == {"pass"}
    assert "response_format" not in last and "grammar" not in last and last["max_tokens"] == 4
    assert [t["outcome"].split(":")[0] for t in out["provenance"]["constraint_probe"]] == ["ignored"] * 3
