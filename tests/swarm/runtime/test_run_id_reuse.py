"""Issue 18, point 13 (swarm half): a run id names one run. Running again with an id the store holds
is refused in one line that gives both ways on (a new --run-id, or --join ID), and leaves the run as
it was; joining a run that has finished only checks it again (the same ledger head, the same
verdict). The README's block makes a new id each time (tests/test_readme.py runs it twice)."""

from __future__ import annotations

import orjson
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.swarm import open_pool

from .procs import one_error_line, write_agents, write_tasks


def swarm(*args):
    r = CliRunner().invoke(cli, ["swarm", *map(str, args)])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def _ledger(store: str, run_id: str) -> tuple[int, str, dict]:
    with open_pool(store, run_id) as pool:
        head = pool.ledger_head()
        return head.events, head.hash.hex(), pool.counts()


def test_a_run_id_taken_is_refused_with_both_remedies_and_the_run_is_left_as_it_was(tmp_path):
    store = f"sqlite:///{tmp_path}/run.db"
    tasks, agents = write_tasks(tmp_path, 6), write_agents(tmp_path, ["ag1", "ag2"])
    first = tmp_path / "first.json"
    common = ("--store", store, "--processes", "1", "--blobs", tmp_path / "blobs")
    assert swarm("run", tasks, agents, *common, "--run-id", "example", "--output", first).exit_code == 0
    before = _ledger(store, "example")
    r = swarm("run", tasks, agents, *common, "--run-id", "example", "--output", tmp_path / "again.json")
    assert r.exit_code == 2
    line = one_error_line(r.stderr)
    assert f"run 'example' already exists in {store}; pass another --run-id, or continue it with --join example" in line
    assert not (tmp_path / "again.json").exists()
    assert _ledger(store, "example") == before

    joined = tmp_path / "joined.json"
    assert swarm("run", tasks, agents, *common, "--join", "example", "--output", joined).exit_code == 0
    a, b = orjson.loads(first.read_bytes()), orjson.loads(joined.read_bytes())
    assert (b["ledger_head"], b["ledger_events"], b["audit_verdict"], b["converged"]) == (
        a["ledger_head"], a["ledger_events"], "PASS", True)
    assert (b["joined"], b["claims_here"], b["completions_here"]) == (True, 0, 0)
    assert _ledger(store, "example") == before


def test_a_stress_run_id_taken_is_refused_with_both_remedies(tmp_path):
    store = f"sqlite:///{tmp_path}/l01.db"
    args = ("stress", "--agents", "2", "--tasks", "8", "--processes", "1", "--store", store, "--run-id", "l01-x")
    assert swarm(*args).exit_code in (0, 1)  # a reduced size: not the seed's L01, but a run
    before = _ledger(store, "l01-x")
    r = swarm(*args)
    assert r.exit_code == 2
    line = one_error_line(r.stderr)
    assert "run 'l01-x' already exists" in line and "pass another --run-id, or continue it with --join l01-x" in line
    assert _ledger(store, "l01-x") == before
