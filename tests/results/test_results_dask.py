"""``--scheduler ADDRESS``: results read on a real Dask cluster (a ``dask scheduler`` and two ``dask worker``
processes this module starts on free ports), from local files and from moto's S3; the output equals the local run's.
Skipped with the reason when Dask is not installed (the ``dask`` extra), failed instead with
BENCHSCORE_REQUIRE_DASK=1: the ``dask_installed`` fixture runs before the cluster's."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from benchscore.cli import cli

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "examples" / "results" / "logs"
ENV = {"SOURCE_DATE_EPOCH": "1767225600"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, what: str) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port}")


@pytest.fixture(scope="module")
def cluster(dask_installed, inspect_ai_installed, tmp_path_factory):
    """A moto S3 server, a Dask scheduler and two workers (one process, one thread each), all on free ports;
    yields ``(scheduler address, S3 environment)``; stopped after the module."""
    from distributed import Client

    s3_port, port = _free_port(), _free_port()
    s3_env = {"FSSPEC_S3_ENDPOINT_URL": f"http://127.0.0.1:{s3_port}", "AWS_ACCESS_KEY_ID": "testing",
              "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    env = {**os.environ, **s3_env,
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    work = tmp_path_factory.mktemp("dask")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "cwd": work}
    procs = [subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(s3_port)], **quiet)]
    try:
        _wait_port(s3_port, procs[0], "moto server")
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                       str(port), "--no-dashboard"], **quiet))
        _wait_port(port, procs[1], "dask scheduler")
        address = f"tcp://127.0.0.1:{port}"
        for k in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nworkers", "1",
                                           "--nthreads", "1", "--no-dashboard", "--local-directory",
                                           str(work / f"w{k}")], **quiet))
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=180)
        yield address, s3_env
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def run(*args, expect=0):
    res = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert res.exit_code == expect, res.output
    return res


def ran_on(address: str) -> int:
    """How many tasks the workers have finished (entered memory: the scheduler's task prefixes and their counts of
    transitions persist after the tasks are gone)."""
    from distributed import Client

    with Client(address, timeout=60) as client:
        return client.run_on_scheduler(
            lambda dask_scheduler: sum(p.state_counts["memory"] for p in dask_scheduler.task_prefixes.values()))


def table(path: Path, models: int = 4, n: int = 25, epochs: int = 2) -> Path:
    cols: dict[str, list] = {"model": [], "sample_id": [], "epoch": [], "acc": []}
    for k in range(models):
        for i in range(n):
            for e in range(1, epochs + 1):
                cols["model"].append(f"model-{k}")
                cols["sample_id"].append(f"s{i}")
                cols["epoch"].append(e)
                cols["acc"].append(float((i * 7 + e + k * 3) % 10 < 2 + 2 * k))
    pq.write_table(pa.table(cols), path)
    return path


def test_compare_and_leaderboard_on_a_cluster_equal_the_local_run(cluster, tmp_path):
    address, _ = cluster
    before = ran_on(address)
    logs = sorted(LOGS.glob("*.eval"))
    run("compare", *logs, "--output", tmp_path / "local.json")
    res = run("compare", *logs, "--output", tmp_path / "dask.json", "--scheduler", address)
    assert (tmp_path / "local.json").read_bytes() == (tmp_path / "dask.json").read_bytes(), res.output
    assert ran_on(address) == before + 4  # one unit per log: read by the workers
    scores = table(tmp_path / "bench.parquet")
    run("leaderboard", scores, "--output-dir", tmp_path / "site-local", "--resamples", "200")
    run("leaderboard", scores, "--output-dir", tmp_path / "site-dask", "--resamples", "200", "--scheduler", address)
    for name in ("leaderboard.json", "index.html"):
        assert (tmp_path / "site-local" / name).read_bytes() == (tmp_path / "site-dask" / name).read_bytes(), name
    assert ran_on(address) == before + 5
    provenance = json.loads((tmp_path / "site-dask" / "leaderboard.json").read_text())["provenance"]
    assert "--scheduler" not in provenance["arguments"]  # where it ran is no part of the recipe: verify runs here


def test_logs_on_s3_are_read_by_the_workers_from_their_urls(cluster, tmp_path, monkeypatch):
    import boto3
    import fsspec.config

    address, s3_env = cluster
    for k, v in s3_env.items():
        monkeypatch.setenv(k, v)
    client = boto3.client("s3", endpoint_url=s3_env["FSSPEC_S3_ENDPOINT_URL"], region_name="us-east-1")
    client.create_bucket(Bucket="bucket")
    for log in sorted(LOGS.glob("*.eval")):
        client.upload_file(str(log), "bucket", f"runs/{log.name}")
    fsspec.config.conf.clear()
    fsspec.config.set_conf_env(fsspec.config.conf)
    before = ran_on(address)
    run("compare", "s3://bucket/runs/", "--metric", "quiz/match", "--output", tmp_path / "local.json")
    run("compare", "s3://bucket/runs/", "--metric", "quiz/match", "--output", tmp_path / "dask.json",
        "--scheduler", address)
    assert (tmp_path / "local.json").read_bytes() == (tmp_path / "dask.json").read_bytes()
    assert ran_on(address) == before + 4
    res = run("verify", tmp_path / "dask.json")  # recorded as the local run records it: verify re-reads the URL
    assert res.output.splitlines()[-1] == "verified 1 outputs: 1 reproduced", res.output


def test_a_refusal_on_a_worker_is_the_local_one_line(cluster, tmp_path):
    address, _ = cluster
    scores = table(tmp_path / "bench.parquet")
    t = pq.read_table(scores)
    pq.write_table(pa.concat_tables([t, t.slice(3, 1)]), scores)  # a (model, sample_id, epoch) twice
    local = run("compare", scores, expect=2).output
    there = run("compare", scores, "--scheduler", address, expect=2).output
    assert there == local and len(local.strip().splitlines()) == 1 and "is on two rows" in local


def test_a_scheduler_that_does_not_answer_is_one_line(dask_installed, tmp_path, monkeypatch):
    from benchscore.results import distributed as D

    monkeypatch.setattr(D, "CONNECT_TIMEOUT", 2)
    scores = table(tmp_path / "bench.parquet")
    address = f"tcp://127.0.0.1:{_free_port()}"
    out = run("compare", scores, "--scheduler", address, expect=2).output.strip()
    assert len(out.splitlines()) == 1 and out.startswith(f"error: --scheduler {address}: no Dask scheduler answers")


def test_without_dask_scheduler_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    scores = table(tmp_path / "bench.parquet")
    out = tmp_path / "C.json"
    res = run("compare", scores, "--scheduler", "tcp://127.0.0.1:8786", "--output", out, expect=2)
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "--scheduler needs Dask" in lines[0] and "pip install 'benchscore[dask]'" in lines[0]
    assert not out.exists()


def test_evaluations_travel_packed_and_arrive_as_they_left(tmp_path, inspect_ai_installed):
    import pickle

    from benchscore.results.distributed import pack, unpack
    from benchscore.results.reading import read

    evaluations = read([*sorted(LOGS.glob("*.eval"))]) + read([table(tmp_path / "bench.parquet")])
    evaluations[0].samples[1].values = {"only/this": 0.5}  # records whose metrics differ travel as they are
    back = unpack(pickle.loads(pickle.dumps(pack(evaluations))))
    assert back == evaluations
    assert [len(e.samples) for e in back] == [len(e.samples) for e in evaluations] and back[0].samples
