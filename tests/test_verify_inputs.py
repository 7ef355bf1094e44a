"""issue 35, point 2: every output is verifiable on the path the README shows.

An output whose input was a folder, an eval-set folder, a URL or a ``--data-dir`` records every file it read
(as given, its name relative to what was given, sha256, size); verify finds each (as given, then by sha256
under ``--search``), re-runs the command on the same text and compares. On the code before issue 35 each of
these failed: ``compare FOLDER`` and ``leaderboard FOLDER`` verified as "the re-run was refused: Missing
argument 'OUTPUTS...'" (exit 2), a URL as a missing folder, and ``tcsexam score --data-dir`` only with
``TCSEXAM_DATA`` set; the leaderboard's Every Eval Ever records held no hash of anything.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchscore.cli import cli

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "examples" / "results" / "logs"
ENV = {"SOURCE_DATE_EPOCH": "1767225600"}

pytestmark = pytest.mark.usefixtures("inspect_ai_installed")  # the example logs are .eval files (zstandard)


def run(*args: Any, expect: int = 0, env: dict | None = None) -> Any:
    result = CliRunner().invoke(cli, [str(a) for a in args], env={**ENV, **(env or {})})
    assert result.exit_code == expect, (result.output, result.stderr_bytes)
    return result


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def readme(tmp_path, monkeypatch) -> Path:
    """A folder laid out as the README's commands expect, made the working folder."""
    shutil.copytree(LOGS, tmp_path / "examples" / "results" / "logs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_comparison_of_a_folder_records_every_file_and_verifies(readme, monkeypatch):
    run("compare", "examples/results/logs", "--metric", "quiz/match", "--output", "C.json")
    given = json.loads((readme / "C.json").read_text())["provenance"]["arguments"]["outputs"]
    logs = sorted((readme / "examples" / "results" / "logs").iterdir())
    assert given == [{"folder": "logs", "given": "examples/results/logs", "files": [
        {"name": p.name, "sha256": sha256(p), "size": p.stat().st_size} for p in logs]}]
    r = run("verify", "C.json")
    assert r.output.startswith("C.json: reproduced: ") and r.output.splitlines()[-1] == "verified 1 outputs: 1 reproduced"
    run("verify", "C.json", "--search", "examples/results/logs")
    (readme / "sub").mkdir()  # from another working folder: as given relative to the output's folder
    monkeypatch.chdir(readme / "sub")
    assert run("verify", readme / "C.json").output.startswith(f"{readme / 'C.json'}: reproduced: ")
    monkeypatch.chdir(readme)
    # moved: not there as given, so found by sha256 under --search; without it, named
    shutil.move(readme / "examples", readme / "elsewhere")
    r = run("verify", "C.json", expect=2)
    assert f"C.json: missing input: outputs (middle.eval in examples/results/logs, sha256 {sha256(LOGS / 'middle.eval')}) " \
           "not found" in r.output
    assert run("verify", "C.json", "--search", "elsewhere").output.startswith("C.json: reproduced: ")


def test_a_folder_that_holds_another_file_later_is_verified_on_the_files_read(readme):
    run("compare", "examples/results/logs", "--metric", "quiz/match", "--output", "C.json")
    logs = readme / "examples" / "results" / "logs"
    (logs / "weak.eval").unlink()  # one log gone, another in the folder: the recorded four are found elsewhere
    shutil.copy(LOGS / "middle.eval", logs / "another.eval")
    r = run("verify", "C.json", expect=2)
    assert "missing input: outputs (weak.eval in examples/results/logs, sha256 " in r.output
    assert run("verify", "C.json", "--search", LOGS).output.startswith("C.json: reproduced: ")


def test_an_edited_file_list_is_no_reproduction(readme):
    run("compare", "examples/results/logs", "--metric", "quiz/match", "--output", "C.json")
    doc = json.loads((readme / "C.json").read_text())
    doc["provenance"]["arguments"]["outputs"][0]["files"].pop()  # one log fewer: the re-run reads three
    (readme / "C.json").write_text(json.dumps(doc))
    r = run("verify", "C.json", expect=1)
    assert r.output.startswith("C.json: differs: ")
    del doc["provenance"]["arguments"]["outputs"][0]["files"]  # as an output of the code before: said why
    (readme / "C.json").write_text(json.dumps(doc))
    r = run("verify", "C.json", expect=1)
    assert "cannot be verified: provenance.arguments[\"outputs\"][0] is 'examples/results/logs', but the files read " \
           "from it are not recorded" in r.output


def test_the_leaderboard_of_a_folder_and_its_every_eval_ever_records_verify(readme):
    run("leaderboard", "examples/results/logs", "--output-dir", "site")
    site = readme / "site"
    r = run("verify", "site/leaderboard.json")
    assert r.output.startswith("site/leaderboard.json: reproduced: ")
    r = run("verify", "site")
    assert r.output.splitlines()[-1] == "verified 5 outputs: 5 reproduced", r.output
    board = json.loads((site / "leaderboard.json").read_text())
    for row in board["metrics"][0]["rows"]:
        record = json.loads((site / row["eee_record"]).read_text())
        details = record["source_metadata"]["additional_details"]
        log = readme / "examples" / "results" / "logs" / f"{row['label'].split('/')[1]}.eval"
        assert details["leaderboard"] == "../leaderboard.json"
        assert details["leaderboard_sha256"] == sha256(site / "leaderboard.json")
        assert details[f"sha256:{log.name}"] == sha256(log)  # its source, by the name read
    # an edited record: its source's hash, then its score
    path = site / board["metrics"][0]["rows"][0]["eee_record"]
    original = path.read_text()
    for edit, where in ((lambda d: d["source_metadata"]["additional_details"].update({"sha256:strong.eval": "0" * 64}),
                         'source_metadata.additional_details["sha256:strong.eval"]'),
                        (lambda d: d["evaluation_results"][0]["score_details"].update(score=0.99),
                         "evaluation_results[0].score_details.score")):
        doc = json.loads(original)
        edit(doc)
        path.write_text(json.dumps(doc))
        r = run("verify", "site", expect=1)
        assert f"{path.relative_to(readme)}: differs: 1 value(s) differ from a re-run of benchscore leaderboard" in r.output
        assert f"  {where}: " in r.output, r.output
    path.write_text(original)
    # an edited leaderboard.json: its records no longer name it (their leaderboard is not found)
    board["metrics"][0]["rows"][0]["value"] = 0.5
    (site / "leaderboard.json").write_text(json.dumps(board))
    r = run("verify", "site", expect=2)
    assert "site/leaderboard.json: differs" in r.output
    assert f"{path.relative_to(readme)}: missing input: the output that wrote it (../leaderboard.json, sha256 " in r.output


def test_an_eval_set_folder_records_its_manifest_and_every_attempt(readme):
    """An eval-set folder: the final log of each task is read, its manifest and the older attempts were read to
    pick it; each is recorded, and verify re-runs on the same choice."""
    import os

    from benchscore.sources.inspect_logs import open_logs

    folder = readme / "set"
    folder.mkdir()
    logs = sorted(LOGS.glob("*.eval"))
    with open_logs(logs) as opened:
        ids = [log.header.task_id for log in opened]
    for log in logs:
        shutil.copy2(log, folder / log.name)
    (folder / "eval-set.json").write_text(json.dumps({"eval_set_id": "set-1", "tasks": [
        {"task_id": i, "name": "quiz", "model": "m"} for i in ids]}))
    older = folder / "2000-01-01T00-00-00-00-00_quiz_older.eval"  # an earlier attempt of one task
    shutil.copyfile(LOGS / "strong.eval", older)
    os.utime(older, (946684800, 946684800))  # written in 2000 (the copies keep the example logs' own times)
    r = run("compare", "set", "--metric", "quiz/match", "--output", "C.json")
    assert "older logs of the task not read: 2000-01-01T00-00-00-00-00_quiz_older.eval" in r.output
    files = json.loads((readme / "C.json").read_text())["provenance"]["arguments"]["outputs"][0]["files"]
    assert [f["name"] for f in files] == sorted([older.name, "eval-set.json", *(p.name for p in logs)])
    assert run("verify", "C.json").output.startswith("C.json: reproduced: ")
    shutil.rmtree(folder)
    r = run("verify", "C.json", expect=2)
    assert "missing input: outputs (2000-01-01T00-00-00-00-00_quiz_older.eval in set, sha256" in r.output


def test_logs_given_as_a_url_are_recorded_and_verify_as_given_then_by_sha256(tmp_path, s3_server, monkeypatch):
    import boto3
    import fsspec.config

    url, env = s3_server
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
    client.create_bucket(Bucket="bucket")
    for log in sorted(LOGS.glob("*.eval")):
        client.upload_file(str(log), "bucket", f"runs/{log.name}")
    fsspec.config.conf.clear()
    fsspec.config.set_conf_env(fsspec.config.conf)
    out = tmp_path / "C.json"
    run("compare", "s3://bucket/runs/", "--metric", "quiz/match", "--output", out)
    given = json.loads(out.read_text())["provenance"]["arguments"]["outputs"]
    assert given == [{"url": "s3://bucket/runs/", "files": [
        {"name": p.name, "sha256": sha256(p), "size": p.stat().st_size} for p in sorted(LOGS.glob("*.eval"))]}]
    one = tmp_path / "one.json"  # URLs of single logs
    run("compare", "s3://bucket/runs/strong.eval", "s3://bucket/runs/weak.eval", "--metric", "quiz/match",
        "--output", one)
    assert json.loads(one.read_text())["provenance"]["arguments"]["outputs"][0] == {
        "url": "s3://bucket/runs/strong.eval", "name": "strong.eval", "sha256": sha256(LOGS / "strong.eval"),
        "size": (LOGS / "strong.eval").stat().st_size}
    r = run("verify", out, one)  # as given: fetched from the server
    assert r.output.splitlines()[-1] == "verified 2 outputs: 2 reproduced", r.output
    for log in sorted(LOGS.glob("*.eval")):
        client.delete_object(Bucket="bucket", Key=f"runs/{log.name}")
    r = run("verify", out, expect=2)
    assert "missing input: outputs (middle.eval in s3://bucket/runs/, sha256" in r.output
    r = run("verify", out, one, "--search", LOGS)  # by sha256, read under the same URL
    assert r.output.splitlines()[-1] == "verified 2 outputs: 2 reproduced", r.output


def test_a_tcsexam_score_of_a_data_dir_verifies_without_tcsexam_data(tmp_path, monkeypatch):
    monkeypatch.delenv("TCSEXAM_DATA", raising=False)
    run("demo", "--only", "tcsexam", "--output-dir", tmp_path / "demo")
    data = tmp_path / "data"
    (data / "suites").mkdir(parents=True)
    demo = REPO / "src" / "benchscore" / "tcsexam" / "data" / "demo"
    # the bundled suite, other bytes (not found in benchscore's own data once the folder is gone)
    suite = json.loads((demo / "suites" / "demo-lite.json").read_text())
    (data / "suites" / "demo-lite.json").write_text(json.dumps(suite, indent=1))
    t = tmp_path / "demo" / "tcsexam"
    out = t / "by-name.json"
    run("tcsexam", "score", "--suite", "demo-lite", "--data-dir", data, "--attempts", t / "attempts.csv",
        "--cohort", t / "cohort.json", "--output", out, expect=1)  # the demo's cohort is incomplete on purpose
    recorded = json.loads(out.read_text())["provenance"]["arguments"]["--data-dir"]
    suite = data / "suites" / "demo-lite.json"
    assert recorded == {"folder": "data", "given": str(data), "files": [
        {"name": "suites/demo-lite.json", "sha256": sha256(suite), "size": suite.stat().st_size}]}
    assert run("verify", out).output.startswith(f"{out}: reproduced: ")
    # another data folder in the environment is not what the output was made with: the recorded one is used
    other = tmp_path / "other"
    (other / "suites").mkdir(parents=True)
    (other / "suites" / "demo-lite.json").write_text("{}")
    assert run("verify", out, env={"TCSEXAM_DATA": str(other)}).output.startswith(f"{out}: reproduced: ")
    shutil.rmtree(data)
    r = run("verify", out, expect=2)
    assert f"missing input: --data-dir (suites/demo-lite.json in {data}, sha256" in r.output


def test_the_readme_s_own_benchmark_ends_by_verifying_what_it_wrote(tmp_path):
    """The README's "Your own benchmark" section, run as written (the real console script, in a folder holding
    the example logs where the README has them): its last block verifies the comparison and the leaderboard it
    wrote, every output reproduced, exit 0."""
    import os
    import re
    import subprocess
    import sys

    section = (REPO / "README.md").read_text().split("\n## Your own benchmark\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)
    assert blocks[-1].startswith("benchscore verify ") and "out/results/site" in blocks[-1]
    assert section.rstrip().endswith("[docs/verify.md](docs/verify.md).")  # nothing runs after the verify
    shutil.copytree(LOGS, tmp_path / "examples" / "results" / "logs")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for block in blocks:
        proc = subprocess.run(["bash", "-ec", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, (block, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stdout.splitlines()
    assert lines[-1] == "verified 6 outputs: 6 reproduced", proc.stdout
    assert all(": reproduced: " in line for line in lines[:-1]) and len(lines) == 7
    assert "out/results/site/leaderboard.json: reproduced: " in proc.stdout


def test_a_leaderboard_of_contract_outputs_verifies_where_the_search_folders_hold_their_inputs(tmp_path):
    """A leaderboard of rxn evaluations, its outputs and their question sets moved apart: verify finds the
    outputs under --search, and the re-run's own reproduced marks find the question sets there too (a verify
    inside a command a verify re-runs looks where the outer one looks); every record names its output's sha256."""
    root = tmp_path / "work"
    run("rxn", "build-mc", "--bundled", "deoxyfluorination", "--output-dir", root)
    folder = next(root.glob("*_multiple_choice"))
    outs = []
    for name in ("all_varying", "single_varying"):
        out = root / f"{name}.json"
        run("rxn", "eval-mc", "--dataset", folder / f"multiple_choice_{name}.json", "--prediction",
            folder / f"example_prediction_{name}.json", "--output", out)
        outs.append(out)
    # one dataset each: compare needs one item set; give both outputs the all_varying questions
    run("rxn", "eval-mc", "--dataset", folder / "multiple_choice_all_varying.json", "--prediction",
        folder / "example_prediction_all_varying.json", "--output", root / "again.json")
    site = tmp_path / "site"
    run("leaderboard", outs[0], root / "again.json", "--output-dir", site, "--intersection")
    board = json.loads((site / "leaderboard.json").read_text())
    assert all(r["reproduced"] is True for m in board["metrics"] for r in m["rows"])
    moved_outputs, moved_questions = tmp_path / "outputs", tmp_path / "questions"
    moved_outputs.mkdir()
    for p in (outs[0], root / "again.json"):
        shutil.copy(p, moved_outputs / p.name)
    shutil.copytree(folder, moved_questions)
    shutil.rmtree(root)
    r = run("verify", site, "--search", moved_outputs, "--search", moved_questions)
    assert r.output.splitlines()[-1] == "verified 3 outputs: 3 reproduced", r.output
    for row in board["metrics"][0]["rows"]:
        record = json.loads((site / row["eee_record"]).read_text())
        assert record["source_metadata"]["additional_details"][f"sha256:{row['label']}"] == \
            sha256(moved_outputs / row["label"])
        assert record["eval_library"]["name"] == "benchscore"
