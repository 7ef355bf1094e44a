"""Issue 15 point 3: ``swarm run --join RUN_ID`` and ``swarm stress --join RUN_ID`` continue a run
that stopped (its process killed, its store gone for longer than the outage limit) or work one run
together with the process that started it; the joined run keeps one ledger and one hash chain, and
the audit proves it: every task done once.

Issue 15 point 9 (swarm half): two ``swarm run`` with one run id: the loser gets one line."""

from __future__ import annotations

import os
import signal
import time

import orjson
import pytest

from benchscore.swarm import TaskSpec, open_pool

from .procs import (
    assert_each_task_done_once,
    claimed,
    completions,
    finish,
    one_error_line,
    run,
    start,
    wait_for,
    write_agents,
    write_tasks,
)


def _kill_group(proc) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # the command and its worker processes, as `kill -9 -PGID`
    proc.wait(30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the workers too
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError("worker processes outlived the SIGKILL of their group")


@pytest.fixture(params=["sqlite", pytest.param("pg", marks=pytest.mark.pg)])
def store(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/run.db"
    return request.getfixturevalue("pg_url")


def test_run_killed_midway_is_finished_by_join(store, tmp_path):
    n = 80
    tasks = write_tasks(tmp_path, n, seconds=0.05, fail_every=10)
    agents = write_agents(tmp_path, ["ag1", "ag2", "ag3"])
    proc = start("swarm", "run", tasks, agents, "--store", store, "--run-id", "killed", "--processes", "2",
                 "--lease-seconds", "1", "--blobs", tmp_path / "blobs")
    wait_for(lambda: completions(store, "killed") >= 10, proc)
    _kill_group(proc)
    left = claimed(store, "killed")  # held by the dead workers: back when their leases expire
    assert completions(store, "killed") < n
    r = run("swarm", "run", tasks, agents, "--store", store, "--join", "killed", "--processes", "2",
            "--blobs", tmp_path / "blobs", "--output", tmp_path / "joined.json")
    assert r.returncode == 0, r.stderr[-3000:]
    report = orjson.loads((tmp_path / "joined.json").read_bytes())
    assert report["joined"] and report["completed_tasks"] == n and report["audit_verdict"] == "PASS"
    assert report["expired_leases"] == left and 0 < report["completions_here"] < n
    assert_each_task_done_once(store, "killed", n)
    r = run("swarm", "audit", "killed", "--store", store, "--expect-head", report["ledger_head"])
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.pg
def test_two_processes_work_one_run(pg_url, tmp_path):
    """The second process joins the first one's run while it works (as a second machine would): both
    end with exit 0, the agents of both appear in the one ledger, every task done once."""
    n = 300
    tasks = write_tasks(tmp_path, n, seconds=0.03)  # at least 4.5 s of work: time for the second to join
    first = write_agents(tmp_path, ["a1", "a2"], name="first.json")
    second = write_agents(tmp_path, ["b1", "b2"], name="second.json")
    a = start("swarm", "run", tasks, first, "--store", pg_url, "--run-id", "shared", "--processes", "2",
              "--blobs", tmp_path / "blobs", "--output", tmp_path / "a.json")
    wait_for(lambda: completions(pg_url, "shared") >= 1, a)
    b = start("swarm", "run", tasks, second, "--store", pg_url, "--join", "shared", "--processes", "2",
              "--blobs", tmp_path / "blobs", "--output", tmp_path / "b.json")
    (ca, _, ea), (cb, _, eb) = finish(a), finish(b)
    assert (ca, cb) == (0, 0), (ea[-2000:], eb[-2000:])
    ra, rb = (orjson.loads((tmp_path / f).read_bytes()) for f in ("a.json", "b.json"))
    assert not ra["joined"] and rb["joined"]
    assert ra["completions_here"] > 0 and rb["completions_here"] > 0
    assert ra["completions_here"] + rb["completions_here"] == n
    assert ra["ledger_head"] == rb["ledger_head"] and ra["convergence"] == rb["convergence"]
    with open_pool(pg_url, "shared") as pool:
        claimers = {e.agent for e in pool.events() if e.kind == "claim"}
    assert {"a1", "a2"} & claimers and {"b1", "b2"} & claimers
    assert_each_task_done_once(pg_url, "shared", n)


def test_join_refuses_an_unknown_run_and_other_tasks(tmp_path):
    from click.testing import CliRunner

    from benchscore.cli import cli

    def swarm(*args):
        r = CliRunner().invoke(cli, ["swarm", *map(str, args)])
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        return r

    store = f"sqlite:///{tmp_path}/run.db"
    tasks = write_tasks(tmp_path, 4)
    agents = write_agents(tmp_path, ["ag"])
    r = swarm("run", tasks, agents, "--store", store, "--join", "nope")
    assert r.exit_code == 2 and "no run 'nope'" in one_error_line(r.stderr)
    assert swarm("run", tasks, agents, "--store", store, "--run-id", "r", "--processes", "1", "--blobs",
                 tmp_path / "blobs").exit_code == 0
    other = write_tasks(tmp_path, 5, name="other.jsonl")
    r = swarm("run", other, agents, "--store", store, "--join", "r")
    assert r.exit_code == 2 and "join with the tasks file the run was started with" in one_error_line(r.stderr)
    r = swarm("run", tasks, agents, "--store", store, "--join", "r", "--run-id", "r")
    assert r.exit_code == 2 and "give one" in one_error_line(r.stderr)
    r = swarm("run", tasks, agents, "--store", store, "--run-id", "r")  # taken: says how to continue it
    assert r.exit_code == 2 and "already exists" in (line := one_error_line(r.stderr)) and "--join r" in line
    r = swarm("stress", "--store", store, "--join", "nope")
    assert r.exit_code == 2 and "no run 'nope'" in one_error_line(r.stderr)


def test_stress_killed_midway_is_finished_by_join(tmp_path):
    store = f"sqlite:///{tmp_path}/l01.db"
    n = 8000
    proc = start("swarm", "stress", "--agents", "4", "--tasks", n, "--processes", "2", "--batch", "2",
                 "--lease-seconds", "1", "--store", store, "--run-id", "l01-killed")
    wait_for(lambda: completions(store, "l01-killed") >= 300, proc)
    _kill_group(proc)
    assert completions(store, "l01-killed") < n
    r = run("swarm", "stress", "--agents", "4", "--store", store, "--join", "l01-killed",
            "--output", tmp_path / "l01.json")
    assert r.returncode == 1, r.stderr[-3000:]  # reduced (below L01's size): exit 1, the report written
    report = orjson.loads((tmp_path / "l01.json").read_bytes())
    assert report["joined"] and report["total_tasks"] == n and report["completed_tasks"] == n
    assert report["L01_verdict"] == "reduced" and report["checks_pass"] and report["duplicate_claims"] == []
    assert report["worker_processes"] == 2 and report["converged_shards"] == 2
    assert sum(report["completions_per_second"]) == n
    assert_each_task_done_once(store, "l01-killed", n)


@pytest.mark.pg
def test_stress_worked_by_two_processes(pg_url, tmp_path):
    n = 8000
    a = start("swarm", "stress", "--agents", "4", "--tasks", n, "--processes", "2", "--batch", "2",
              "--store", pg_url, "--run-id", "l01-shared", "--output", tmp_path / "a.json")
    wait_for(lambda: completions(pg_url, "l01-shared") >= 1, a)
    b = start("swarm", "stress", "--agents", "4", "--store", pg_url, "--join", "l01-shared",
              "--output", tmp_path / "b.json")
    (ca, _, ea), (cb, _, eb) = finish(a), finish(b)
    assert (ca, cb) == (1, 1), (ea[-2000:], eb[-2000:])  # reduced: exit 1, each report written
    ra, rb = (orjson.loads((tmp_path / f).read_bytes()) for f in ("a.json", "b.json"))
    assert rb["joined"] and ra["completions_here"] > 0 and rb["completions_here"] > 0
    assert ra["completions_here"] + rb["completions_here"] == n
    for r in (ra, rb):
        assert r["completed_tasks"] == n and r["audit_verdict"] == "PASS" and r["L01_verdict"] == "reduced"
    assert_each_task_done_once(pg_url, "l01-shared", n)


@pytest.mark.pg
def test_join_after_the_store_was_gone_longer_than_the_limit(own_pg, tmp_path):
    """The store goes away for longer than ``--max-outage``: the run stops with one line (exit 2, no
    report); once the store is back, ``--join`` finishes it."""
    url = own_pg.fresh_url()
    n = 120
    tasks = write_tasks(tmp_path, n, seconds=0.02)
    agents = write_agents(tmp_path, ["ag1", "ag2"])
    proc = start("swarm", "run", tasks, agents, "--store", url, "--run-id", "gone", "--processes", "2",
                 "--lease-seconds", "1", "--max-outage", "1", "--blobs", tmp_path / "blobs",
                 "--output", tmp_path / "run.json")
    wait_for(lambda: completions(url, "gone") >= 5, proc)
    own_pg.stop()
    code, _out, err = finish(proc)
    assert code == 2 and "longer than the outage limit of 1 s" in one_error_line(err)
    assert not (tmp_path / "run.json").exists()
    own_pg.start()
    r = run("swarm", "run", tasks, agents, "--store", url, "--join", "gone", "--blobs", tmp_path / "blobs",
            "--output", tmp_path / "run.json")
    assert r.returncode == 0, r.stderr[-3000:]
    assert orjson.loads((tmp_path / "run.json").read_bytes())["completed_tasks"] == n
    assert_each_task_done_once(url, "gone", n)


# ---- point 9: one run id, two runs ----------------------------------------------------------------
def test_create_run_that_another_process_just_created_is_run_exists(store):
    """The moment between the existence check and the insert: the store's own constraint decides,
    and says so as RunExists (not psycopg's UniqueViolation / sqlite3's IntegrityError)."""
    with open_pool(store, "taken") as a, open_pool(store, "taken") as b:
        a.create_run()
        a.add_tasks([TaskSpec(capability="x", payload={})])
        b._get_run = lambda: None  # b checked before a inserted
        with pytest.raises(ValueError, match="already exists"):  # RunExists
            b.create_run()
        assert [t.capability for t in a.tasks()] == ["x"]


@pytest.mark.pg
def test_two_swarm_runs_with_one_run_id_on_postgres(pg_url, tmp_path):
    tasks = write_tasks(tmp_path, 20)
    agents = write_agents(tmp_path, ["ag1", "ag2"])
    for k in range(3):
        procs = [start("swarm", "run", tasks, agents, "--store", pg_url, "--run-id", f"race-{k}", "--processes", "1",
                       "--blobs", tmp_path / "blobs") for _ in range(2)]
        results = sorted((finish(p) for p in procs), key=lambda r: r[0])
        assert [r[0] for r in results] == [0, 2], [r[2][-1500:] for r in results]
        line = one_error_line(results[1][2])
        assert f"run 'race-{k}' already exists" in line and "UniqueViolation" not in line
        assert_each_task_done_once(pg_url, f"race-{k}", 20)
