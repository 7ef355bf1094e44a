"""Issues 11 and 20: S07 and S08 live against the real local model server (``scripts/live-gateway.sh``:
llama.cpp serving three distinct models). Asserts structure and honesty, never that the models are
good: the matrix labels S07/S08 ``live``, the model IO audit holds one record per real call with
token counts, the three served models pass the distinct-models check, the votes are recorded with
their constraint, and every FAIL carries its reason, in the JSON and on the terminal."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from benchscore.common.cli import group
from benchscore.common.llm import LLMClient
from benchscore.swarm.cli_accept import accept


@group("t")
def _cli() -> None:
    pass


_cli.add_command(accept)


@pytest.mark.live
def test_s07_s08_live_matrix_is_labelled_live_and_honest(live_gateway, tmp_path):
    base_url, _ = live_gateway
    with LLMClient(base_url) as client:
        listed = client.list_models()
    out = tmp_path / "matrix-live.json"
    r = CliRunner().invoke(_cli, ["accept", "all", "--quick", "--base-url", base_url, "--store",
                                  f"sqlite:///{tmp_path}/live.db", "--blobs", str(tmp_path / "blobs"),
                                  "--timeout", "600", "--output", str(out)])
    assert r.exit_code in (0, 1), r.output  # what the small models give is reported as it is
    m = orjson.loads(out.read_bytes())
    assert m["scenarios"]["S07"]["mode"] == m["scenarios"]["S08"]["mode"] == "live"
    assert not any(x.startswith(("S07", "S08")) for x in m["not_live"])
    assert "S07 (live): FAIL" in r.output and "| S07 | **live** |" in out.with_suffix(".md").read_text()

    io = orjson.loads(out.with_name("matrix-live.model-io.json").read_bytes())
    assert io["mode"] == "live" and io["calls_recorded"] == io["calls_issued"] == len(io["records"]) > 7
    for rec in io["records"]:
        assert rec["model"] in listed
        if rec["status"] == "ok":
            assert isinstance(rec["tokens_in"], int) and isinstance(rec["tokens_out"], int), rec
        else:
            assert rec["error"], rec  # a failed call (context overflow, timeout, ...) says why
    s08 = {c["id"].split(".", 1)[1]: c for c in m["checks"] if c["id"].startswith("S08.")}
    assert s08["every_call_recorded"]["verdict"] == s08["failed_calls_have_reasons"]["verdict"] == "PASS"

    s07 = {c["id"].split(".", 1)[1]: c for c in m["checks"] if c["id"].startswith("S07.")}
    distinct = s07["three_distinct_models_from_discovery"]
    assert distinct["verdict"] == "PASS" and distinct["evidence"]["distinct_models"] == 3, distinct
    assert sorted(distinct["evidence"]["distinct_models_used"]) == sorted(listed)
    votes = [v for r in m["consensus"]["S07"]["rounds"] for v in r["votes"]]
    assert votes and all(v["status"] in ("ok", "unparseable", "call_failed") for v in votes)
    assert all(v["constraint"] == "json_object_schema" for v in votes if v["status"] != "call_failed")
    print(f"\nS07 live: {[(c['id'], c['verdict']) for c in m['checks'] if c['id'].startswith('S07.')]}")
    quality = s07["all_outputs_pass_quality_gate"]["evidence"]["quality"]
    assert quality and all(0.0 <= q["Q"] <= 1.0 for q in quality.values())  # scored as it is, pass or not
    assert m["consensus"]["S07"]["preset"] == "S07_quality" and m["consensus"]["S07"]["rounds"]

    for c in m["checks"]:
        if c["verdict"] == "FAIL":
            assert c["reason"] and any(c["reason"] in ln for ln in r.output.splitlines()), c["id"]
