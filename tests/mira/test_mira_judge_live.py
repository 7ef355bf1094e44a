"""Issue 11 item 3: `mira judge` against the real local model server (llama.cpp serving SmolLM2-135M-Instruct).

Runs only with ``BENCHSCORE_LIVE=1`` (fixture ``live_gateway``). The model is weak: the test asserts
structure and honesty, never good judgement: one verdict per packet, an answer outside the binary
rule counted as ``judge_failed`` with its reason, one audit record per call with its token counts,
exit code 1 exactly when a packet is judge_failed, and `mira score --verdicts` accepting the file.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest
from mira_helpers import run

from benchscore.mira.judge import parse_answer

EX = Path(__file__).resolve().parents[2] / "examples" / "mira"


@pytest.mark.live
def test_the_constrained_judge_answers_pass_or_fail_with_every_model(live_gateway, tmp_path: Path) -> None:
    """Issue 20: under llama-cpp-python's json_object + schema every answer is a verdict, for each served model."""
    from benchscore.common.llm import LLMClient
    from benchscore.mira.judge import VERDICT_FORMAT

    base_url, _ = live_gateway
    packets = tmp_path / "packets"
    assert run("judge-packets", "--contract", EX / "contract.json", "--repetitions",
               EX / "repetitions_unjudged.jsonl", "--output-dir", packets).exit_code == 0
    with LLMClient(base_url) as client:
        models = client.list_models()
    for model in models:
        out = tmp_path / f"{model}.json"
        res = run("judge", "--packets", packets, "--base-url", base_url, "--model", model, "--timeout", "300",
                  "--output", out)
        assert res.exit_code == 0, res.output  # no judge_failed: every constrained answer is pass or fail
        doc = orjson.loads(out.read_bytes())
        assert doc["provenance"]["constraint"] == "json_object_schema"
        for v in doc["verdicts"]:
            assert v["verdict"] in ("pass", "fail") and v["call"]["constraint"] == "json_object_schema"
            assert VERDICT_FORMAT.read(v["answer"]) == {"verdict": v["verdict"]}
        print(f"\nlive constrained judge {model}: {Counter(v['verdict'] for v in doc['verdicts'])}")


@pytest.mark.live
def test_mira_judge_on_the_demo_packets_against_the_live_model(live_gateway, tmp_path: Path) -> None:
    base_url, model = live_gateway
    packets = tmp_path / "packets"
    res = run("judge-packets", "--contract", EX / "contract.json", "--repetitions", EX / "repetitions_unjudged.jsonl",
              "--output-dir", packets)
    assert res.exit_code == 0, res.output
    index = orjson.loads((packets / "index.json").read_bytes())
    assert index["packets"], "the demo has judge criteria"

    res = run("judge", "--packets", packets, "--base-url", base_url, "--model", model, "--timeout", "300",
              "--output", tmp_path / "v.json", "--constraint", "none")
    assert res.exit_code in (0, 1), res.output
    out = orjson.loads((tmp_path / "v.json").read_bytes())
    verdicts = out["verdicts"]
    assert [v["packet_id"] for v in verdicts] == [p["packet_id"] for p in index["packets"]]  # one per packet
    assert len({v["call"]["call_id"] for v in verdicts}) == len(verdicts)  # one audit record per call
    for v in verdicts:
        call = v["call"]
        assert call["model"] == model and call["latency_s"] > 0 and call["attempts"] >= 1
        if call["status"] == "ok":
            assert isinstance(call["tokens_in"], int) and call["tokens_in"] > 0
            assert isinstance(call["tokens_out"], int) and call["tokens_out"] >= 0
            assert isinstance(v["answer"], str)
        if v["verdict"] == "judge_failed":
            assert v["reason"], v  # every judge_failed says why
            if call["status"] == "ok":
                assert parse_answer(v["answer"]) is None and v["reason"].startswith("answer is not")
            else:
                assert v["reason"].startswith("judge call failed")
        else:
            assert v["verdict"] in ("pass", "fail") and v["reason"] is None
            assert parse_answer(v["answer"]) == v["verdict"]
    counts = Counter(v["verdict"] for v in verdicts)
    failed = counts["judge_failed"]
    assert res.exit_code == (1 if failed else 0)
    if failed:
        assert f"{failed} of {len(verdicts)} packets are judge_failed" in res.stderr
    # the terminal output carries the counts and every judge_failed reason
    for verdict in ("pass", "fail", "judge_failed"):
        assert any(line.split() == [verdict, str(counts[verdict])] for line in res.stdout.splitlines()), res.stdout

    res = run("score", "--contract", EX / "contract.json", "--repetitions", EX / "repetitions_unjudged.jsonl",
              "--verdicts", tmp_path / "v.json", "--output", tmp_path / "s.json", "--quiet")
    assert res.exit_code == 0, res.output
    score = orjson.loads((tmp_path / "s.json").read_bytes())
    assert score["status"] == ("incomplete" if failed else "complete")
    latencies = sorted(v["call"]["latency_s"] for v in verdicts)
    print(f"\nlive judge {model} at {base_url}: {dict(counts)}; latency s min {latencies[0]:.3f} "
          f"median {latencies[len(latencies) // 2]:.3f} max {latencies[-1]:.3f}; "
          f"answers {[v['answer'] for v in verdicts]}; score status {score['status']}")


@pytest.mark.live
def test_each_live_model_is_measured_against_the_bundled_calibration_set(live_gateway, tmp_path: Path) -> None:
    """Issue 36: every served model judges the bundled calibration set (the verdicts a careful reader gives the 8
    demo packets); the report's table holds every packet the model answered, kappa is the formula's, and the
    model's status says what 8 known verdicts can support. Prints each model's kappa and its interval."""
    from benchscore.common.llm import LLMClient
    from benchscore.stats import agreement as A

    base_url, _ = live_gateway
    with LLMClient(base_url) as client:
        models = client.list_models()
    for model in models:
        res = run("judge", "--calibration", EX / "judge_calibration.jsonl", "--base-url", base_url, "--model", model,
                  "--timeout", "600", "--output", tmp_path / f"v-{model}.json", "--report", tmp_path / f"r-{model}.json")
        assert res.exit_code in (0, 1), res.output
        report = orjson.loads((tmp_path / f"r-{model}.json").read_bytes())
        a = report["agreement"]
        assert a["known"] + a["judge_failed"] == 8 and sum(a["table"].values()) == a["known"]
        assert a["kappa"]["value"] == A.cohen_kappa(A.Confusion(**a["table"]))
        assert a["measured"] is False  # 8 known verdicts: no kappa interval, so never a measured judge
        kappa = a["kappa"]
        print(f"\nlive judge {model} on the bundled calibration set: table {a['table']}, judge_failed "
              f"{a['judge_failed']}, answers {a['answers']}, kappa {kappa['value']} "
              f"{kappa['ci95'] or kappa.get('ci_reason')}; always answers {a['always_answers']}; "
              f"{a['measured_reason']}")
