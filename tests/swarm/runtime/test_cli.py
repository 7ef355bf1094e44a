"""The CLI: run / status / audit / stress / budget, bad input, and one real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.swarm.cli import demo, demo_agents, demo_tasks

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "swarm" / "runtime"


def write_inputs(folder: Path, tasks=None, agents=None) -> tuple[Path, Path]:
    t, a = folder / "tasks.jsonl", folder / "agents.json"
    t.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in (tasks or demo_tasks())))
    a.write_bytes(orjson.dumps(agents or demo_agents()))
    return t, a


def invoke(*args):
    return CliRunner().invoke(cli, ["swarm", *map(str, args)], catch_exceptions=False)


def test_bundled_example_matches_the_demo_data():
    assert [orjson.loads(line) for line in (EXAMPLES / "tasks.jsonl").read_bytes().splitlines()] == demo_tasks()
    assert orjson.loads((EXAMPLES / "agents.json").read_bytes()) == demo_agents()


def test_run_status_audit(tmp_path, pinned_time):
    tasks, agents = write_inputs(tmp_path)
    store = f"sqlite:///{tmp_path}/run.db"
    r = invoke("run", tasks, agents, "--store", store, "--run-id", "r1", "--processes", "2",
               "--blobs", tmp_path / "blobs", "--output", tmp_path / "out.json")
    assert r.exit_code == 0, r.output
    out = orjson.loads((tmp_path / "out.json").read_bytes())
    assert out["completed_tasks"] == 8 and out["failed_tasks"] == 0 and out["converged"]
    assert out["convergence"]["accepted_task_id"] == 8 and out["convergence"]["accepted_score"] == 0.85
    assert out["duplicate_claims"] == [] and 1 <= out["participating_agents"] <= 3
    assert out["provenance"]["created_at"] == "2026-01-01T00:00:00Z"
    blob = out["convergence"]["blob_sha256"]
    assert (tmp_path / "blobs" / "sha256" / blob[:2] / blob).exists()

    r = invoke("status", "r1", "--store", store, "--json")
    assert r.exit_code == 0
    status = orjson.loads(r.output)
    assert status["counts"]["done"] == 8 and status["convergence"]["run"]["accepted_task_id"] == 8

    r = invoke("audit", "r1", "--store", store, "--history", "--output", tmp_path / "audit.json")
    assert r.exit_code == 0, r.output
    audit = orjson.loads((tmp_path / "audit.json").read_bytes())
    assert audit["verdict"] == "PASS" and audit["tasks_created"] == 8 and audit["failures"] == 2
    assert audit["pheromone_history"]["4"][0] == 0.5  # the seeded initial P_t


def test_run_output_is_byte_identical(tmp_path, pinned_time):
    tasks, agents = write_inputs(tmp_path)
    outs = []
    for k in range(2):
        store = f"sqlite:///{tmp_path}/run{k}.db"
        r = invoke("run", tasks, agents, "--store", store, "--blobs", tmp_path / "blobs", "--output",
                   tmp_path / f"out{k}.json", "--processes", "1")
        assert r.exit_code == 0
        body = orjson.loads((tmp_path / f"out{k}.json").read_bytes())
        body.pop("store")
        body["provenance"].pop("store")
        body["provenance"]["arguments"].pop("--store")  # the store each run used (issue 16: the command's arguments)
        outs.append(orjson.dumps(body))
    assert outs[0] == outs[1]


def test_audit_refutes_an_unfinished_run(tmp_path):
    from benchscore.swarm import TaskSpec, open_pool

    store = f"sqlite:///{tmp_path}/run.db"
    with open_pool(store, "half") as pool:
        pool.create_run()
        pool.add_tasks([TaskSpec(capability="a", payload={})] * 2)
        pool.claim("x", ["a"])
    r = invoke("audit", "half", "--store", store)
    assert r.exit_code == 1


def test_existing_run_id_is_refused(tmp_path):
    tasks, agents = write_inputs(tmp_path)
    store = f"sqlite:///{tmp_path}/run.db"
    assert invoke("run", tasks, agents, "--store", store, "--processes", "1", "--blobs", tmp_path / "b").exit_code == 0
    r = invoke("run", tasks, agents, "--store", store, "--processes", "1", "--blobs", tmp_path / "b")
    assert r.exit_code == 2 and "already exists" in r.output


@pytest.mark.parametrize(
    ("tasks", "agents", "expected"),
    [
        ([{"capability": "paint", "payload": {"output": "x", "score": 0.5}}], None,
         "tasks.jsonl: line 1: field 'capability': unknown capability 'paint'"),
        ([{"capability": "review", "payload": {"output": "x", "score": 1.5}}], None,
         "tasks.jsonl: line 1: field 'payload.score'"),
        ([{"capability": "review", "payload": {"score": 0.5}}], None, "field 'payload.output'"),
        ([{"capability": "review", "payload": "text"}], None, "field 'payload'"),
        ([{"capability": "review", "payload": {"output": "x", "score": 0.5}, "pheromone": 1e400}], None, "line 1"),
        (None, [{"agent_id": "a", "capabilities": ["review"]}, {"agent_id": "a", "capabilities": ["summarise"]}],
         "agents.json: record 1: field 'agent_id': duplicate"),
        # wrong JSON types are refused, never coerced (true -> 1.0, "0.5" -> 0.5, 2.0 -> 2)
        ([{"capability": "review", "payload": {"output": "x", "score": True}}], None,
         "tasks.jsonl: line 1: field 'payload.score'"),
        ([{"capability": "review", "payload": {"output": "x", "score": "0.5"}}], None,
         "tasks.jsonl: line 1: field 'payload.score'"),
        ([{"capability": "review", "payload": {"output": "x", "score": 0.5, "fail_attempts": 1.0}}], None,
         "tasks.jsonl: line 1: field 'payload.fail_attempts'"),
        ([{"capability": "review", "payload": {"output": 7, "score": 0.5}}], None,
         "tasks.jsonl: line 1: field 'payload.output'"),
        ([{"capability": "review", "payload": {"output": "x", "score": 0.5}, "pheromone": "1"}], None,
         "tasks.jsonl: line 1: field 'pheromone'"),
        ([{"capability": "review", "payload": {"output": "x", "score": 0.5}, "max_attempts": True}], None,
         "tasks.jsonl: line 1: field 'max_attempts'"),
        (None, [{"agent_id": 5, "capabilities": ["review"]}], "agents.json: record 0: field 'agent_id'"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, tasks, agents, expected):
    t, a = write_inputs(tmp_path, tasks, agents)
    r = invoke("run", t, a, "--store", f"sqlite:///{tmp_path}/run.db")
    assert r.exit_code == 2
    assert expected in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "run.db").exists() or "already" not in r.output


def test_malformed_jsonl_and_bad_store_urls(tmp_path):
    t, a = write_inputs(tmp_path)
    t.write_text('{"capability": "review", "payload": {}}\n{not json\n')
    r = invoke("run", t, a, "--store", f"sqlite:///{tmp_path}/x.db")
    assert r.exit_code == 2 and "line 2" in r.output
    t, a = write_inputs(tmp_path)
    for url, msg in [("mysql://x", "expected sqlite"), ("sqlite://host/x.db", "three slashes"),
                     ("postgresql://postgres@127.0.0.1:1/nope", "unreachable")]:
        r = invoke("run", t, a, "--store", url)
        assert r.exit_code == 2 and msg in r.output, (url, r.output)
        assert len(r.output.strip().splitlines()) == 1
    r = invoke("run", t, a, "--store", f"sqlite:///{tmp_path}/y.db", "--redis", "redis://127.0.0.1:1/0")
    assert r.exit_code == 2 and "redis" in r.output and "unreachable" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = invoke("status", "nope", "--store", f"sqlite:///{tmp_path}/empty.db")
    assert r.exit_code == 2 and "no run 'nope'" in r.output


def test_stress_small(tmp_path, pinned_time):
    r = invoke("stress", "--agents", "8", "--tasks", "800", "--batch", "4", "--store", f"sqlite:///{tmp_path}/s.db",
               "--output", tmp_path / "l01.json")
    assert r.exit_code == 1, r.output  # reduced: every check holds, but only a PASS exits 0 (the report is written)
    rep = orjson.loads((tmp_path / "l01.json").read_bytes())
    for key in ("worker_processes", "completed_tasks", "failed_tasks", "duplicate_claims", "participating_agents",
                "converged_shards", "wall_time_s", "tasks_per_second", "L01_PASS"):
        assert key in rep
    assert rep["completed_tasks"] == 800 and rep["participating_agents"] == 8
    assert rep["worker_processes"] == rep["logical_cpus"] == rep["converged_shards"]
    # every check holds, but 8 agents / 800 tasks is not the seed's L01: labelled, never PASS
    assert rep["checks_pass"] and not rep["seed_size"]
    assert rep["L01_verdict"] == "reduced" and rep["L01_PASS"] is False
    assert "reduced (not the seed's size)" in r.output


def test_stress_bad_arguments(tmp_path):
    r = invoke("stress", "--agents", "1", "--tasks", "10", "--processes", "2", "--store", f"sqlite:///{tmp_path}/s.db")
    assert r.exit_code == 2 and "at least one agent per worker process" in r.output


def test_budget_command(tmp_path, pinned_time):
    r = invoke("budget", "--tpm", "3000", "--tokens-per-task", "50", "--output", tmp_path / "l02.json")
    assert r.exit_code == 0, r.output
    rep = orjson.loads((tmp_path / "l02.json").read_bytes())
    assert {k: rep[k] for k in ("target_tpm", "task_count", "total_reserved_tokens", "simulated_minutes",
                                "max_tokens_in_a_minute", "budget_utilization", "L02_PASS")} == {
        "target_tpm": 3000, "task_count": 60, "total_reserved_tokens": 3000, "simulated_minutes": 1,
        "max_tokens_in_a_minute": 3000, "budget_utilization": 1.0, "L02_PASS": True}
    r = invoke("budget", "--tpm", "40", "--tokens-per-task", "50")
    assert r.exit_code == 2 and "no task fits" in r.output


def test_demo_runs(tmp_path):
    demo(tmp_path / "swarm")
    report = orjson.loads((tmp_path / "swarm" / "run-report.json").read_bytes())
    assert report["converged"] and report["audit_verdict"] == "PASS"


def test_console_script_subprocess(tmp_path):
    exe = Path(sys.executable).parent / "benchscore"  # the console script of the venv running the tests
    proc = subprocess.run([str(exe), "swarm", "budget", "--output", str(tmp_path / "l02.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads((tmp_path / "l02.json").read_bytes())["L02_PASS"] is True
    proc = subprocess.run([str(exe), "swarm", "audit", "x", "--store", "bogus://"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_formats_are_listed():
    r = CliRunner().invoke(cli, ["schema", "swarm-task"])
    assert r.exit_code == 0 and "capability" in r.output


def _keys(obj, prefix="", skip=()):
    """Every key of a JSON report (nested as a.b; items of a list of objects by their own keys)."""
    out = set()
    for k, v in obj.items():
        if k in skip or k == "provenance":
            continue
        out.add(prefix + k)
        if isinstance(v, dict):
            out |= _keys(v, prefix + k + ".")
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            out |= set(v[0])
    return out


def test_terminal_tables_show_every_count_of_the_json(tmp_path, monkeypatch):
    """Issue 9 item 7: run, status, audit, stress and budget print every key of their JSON."""
    from benchscore.common.terminal import console

    monkeypatch.setattr(console, "_width", 300)  # one table row per line
    tasks, agents = write_inputs(tmp_path)
    store = f"sqlite:///{tmp_path}/run.db"
    r = invoke("run", tasks, agents, "--store", store, "--run-id", "t", "--processes", "2", "--blobs",
               tmp_path / "b", "--output", tmp_path / "run.json")
    for key in _keys(orjson.loads((tmp_path / "run.json").read_bytes())):
        assert key in r.output, key
    status = orjson.loads(invoke("status", "t", "--store", store, "--json").output)
    r = invoke("status", "t", "--store", store)
    for key in _keys(status, skip=("convergence", "pheromone_leaders")):
        assert key in r.output, key
    assert "converged (run): task 8 score 0.85" in r.output and "pheromone leaders review" in r.output
    r = invoke("audit", "t", "--store", store, "--output", tmp_path / "audit.json")
    per_task = ("final_pheromone", "pheromone_history", "pheromone_points")  # maps of every task, not counts
    for key in _keys(orjson.loads((tmp_path / "audit.json").read_bytes()), skip=("violations", *per_task)):
        assert key in r.output, key
    r = invoke("stress", "--agents", "4", "--tasks", "200", "--batch", "4", "--store", f"sqlite:///{tmp_path}/s.db",
               "--output", tmp_path / "l01.json")
    for key in _keys(orjson.loads((tmp_path / "l01.json").read_bytes()), skip=("service",)):
        assert key in r.output, key
    assert "service.incidents" in r.output
    r = invoke("budget", "--output", tmp_path / "l02.json")
    for key in _keys(orjson.loads((tmp_path / "l02.json").read_bytes())):
        assert key in r.output, key


def test_audit_history_has_pheromone_points(tmp_path):
    """Issue 10: every task's P_t over time as (ledger seq, P_t, event) points, from the ledger."""
    tasks, agents = write_inputs(tmp_path)
    store = f"sqlite:///{tmp_path}/run.db"
    invoke("run", tasks, agents, "--store", store, "--run-id", "p", "--processes", "1", "--blobs", tmp_path / "b")
    assert invoke("audit", "p", "--store", store, "--history", "--output", tmp_path / "a.json").exit_code == 0
    audit = orjson.loads((tmp_path / "a.json").read_bytes())
    points = audit["pheromone_points"]
    assert set(points) == {str(i) for i in range(1, 9)}
    # task 3 (demo index 2) fails its first attempt: created at 0, -1.0 after the failure, +0.6 on success
    assert [(p["P_t"], p["event"]) for p in points["3"]] == [(0.0, "create"), (-1.0, "fail"), (-0.4, "complete")]
    seqs = [p["seq"] for p in points["3"]]
    assert seqs == sorted(seqs) and seqs[0] == 3  # creates are seq 1..8
    assert [p["P_t"] for p in points["3"]] == audit["pheromone_history"]["3"]


def test_stress_report_has_throughput_profile(tmp_path):
    from benchscore.swarm.stress import run_stress

    r = run_stress(f"sqlite:///{tmp_path}/s.db", total_agents=4, total_tasks=400, batch=4)
    assert sum(r.completions_per_shard.values()) == 400 == sum(r.completions_per_second)
    assert set(r.completions_per_shard) == {f"shard-{k:03d}" for k in range(r.worker_processes)}
    assert r.crashed_workers == 0 and r.expired_leases == 0 and r.ledger_events == r.audit_violations + 4 * 400


def test_the_cli_is_cheap_to_import_and_its_defaults_are_the_runtimes():
    import subprocess
    import sys

    code = ("import sys, benchscore.swarm.cli\n"
            "heavy = [m for m in ('pydantic', 'numpy', 'rich', 'orjson', 'psycopg', 'redis', 'httpx') if m in sys.modules]\n"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
    from benchscore.swarm.defaults import CRASH_POLICIES, DEFAULT_LEASE_SECONDS, DEFAULT_STORE_URL
    from benchscore.swarm.lease import DEFAULT_LEASE_SECONDS as lease_default
    from benchscore.swarm.lease import CrashPolicy
    from benchscore.swarm.pool import DEFAULT_STORE_URL as pool_default

    assert tuple(p.value for p in CrashPolicy) == CRASH_POLICIES
    assert (DEFAULT_LEASE_SECONDS, DEFAULT_STORE_URL) == (lease_default, pool_default)
