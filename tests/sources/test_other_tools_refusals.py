"""Issue 39 point 4: the nine tracebacks a fuzz of ``compare`` and ``leaderboard`` found in the readers of other
tools' files, each rebuilt from a real file (an inspect_ai log of examples/results, the lm-eval output and the
Every Eval Ever record of tests/results/data) mutated as the fuzz mutated it. Each is now one ``error:`` line
naming the file, the record and the field, exit 2, nothing written."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.sources.inspect_logs import _central_directory, _member_bytes

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "examples" / "results" / "logs"
DATA = ROOT / "tests" / "results" / "data"
SMALL_LOG = DATA / "inspect_ai" / "log_read_sample.eval"


def rezip(src: Path, dst: Path, edit: Callable[[str, bytes], bytes]) -> Path:
    """The log ``src`` written again (deflate) with each member's bytes passed through ``edit``."""
    with open(src, "rb") as fp, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for name, info in _central_directory(fp).items():
            out.writestr(name, edit(name, _member_bytes(fp, info, str(src))))
    return dst


def edit_sample(member: str | None, change: Callable[[dict], None]) -> Callable[[str, bytes], bytes]:
    """An ``edit`` changing the JSON of one sample member (``member``; None: every sample)."""
    def edit(name: str, data: bytes) -> bytes:
        if (member is None and name.startswith("samples/")) or name == member:
            doc = orjson.loads(data)
            change(doc)
            return json.dumps(doc).encode()  # orjson writes no integer past 64 bits
        return data
    return edit


def refused(tmp_path: Path, *args: object, expect: str) -> str:
    """Run the command; it must exit 2 with one ``error:`` line holding ``expect``, and write nothing."""
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert expect in lines[0], lines[0]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    return lines[0]


def test_a_symbolic_link_loop_given_as_a_log_is_one_line(tmp_path):
    loop = tmp_path / "x.eval"
    loop.symlink_to(loop.name)
    line = refused(tmp_path, "compare", loop, LOGS / "strong.eval", "--output", tmp_path / "c.json",
                   expect="symbolic link loop")
    assert str(loop) in line


def test_a_member_nested_past_the_limit_is_one_line(tmp_path):
    """1,025 levels: orjson refuses it, and the stdlib fallback (for NaN and Infinity) would recurse."""
    def edit(name: str, data: bytes) -> bytes:
        if name != "header.json":
            return data
        return data.replace(b'"eval":{', b'"deep":' + b"[" * 1025 + b"]" * 1025 + b',"eval":{', 1)
    log = rezip(LOGS / "strong.eval", tmp_path / "s.eval", edit)
    assert b'"deep"' in zipfile.ZipFile(log).read("header.json")
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect="header.json is nested deeper than")


def _edit_central_directory(src: Path, dst: Path, change: Callable[[bytearray, int, int], None]) -> Path:
    data = bytearray(src.read_bytes())
    eocd = data.rfind(b"PK\x05\x06")
    (cd_offset,) = struct.unpack_from("<L", data, eocd + 16)
    change(data, cd_offset, eocd)
    dst.write_bytes(bytes(data))
    return dst


def test_a_member_name_that_is_not_utf8_under_the_utf8_flag_is_one_line(tmp_path):
    def change(data: bytearray, cd: int, eocd: int) -> None:
        (flags,) = struct.unpack_from("<H", data, cd + 8)
        struct.pack_into("<H", data, cd + 8, flags | 0x800)
        data[cd + 46] = 0xFF  # the first byte of the first member's name
    log = _edit_central_directory(SMALL_LOG, tmp_path / "s.eval", change)
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json", expect="is not UTF-8")


def test_a_zip_version_zipfile_does_not_read_is_one_line(tmp_path):
    """The central directory counts one member too many (benchscore's own reader gives up and hands the file to
    zipfile), whose first member needs zip version 25.5 to extract: zipfile raises NotImplementedError."""
    def change(data: bytearray, cd: int, eocd: int) -> None:
        struct.pack_into("<H", data, cd + 6, 0xFF)
        (count,) = struct.unpack_from("<H", data, eocd + 10)
        struct.pack_into("<HH", data, eocd + 8, count + 1, count + 1)
    log = _edit_central_directory(SMALL_LOG, tmp_path / "s.eval", change)
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json", expect="zip file version")


@pytest.mark.parametrize("value", [10**400, 1e308, -1e101, "1e200"], ids=["integer", "float", "negative", "text"])
def test_a_score_too_large_for_the_statistics_is_refused_naming_the_sample(tmp_path, value):
    """An integer too large for a float (OverflowError), and finite values whose standard error overflows (1e308
    gave inf and a leaderboard that failed its own validation): the metric is refused, naming sample and epoch."""
    def change(doc: dict) -> None:
        doc["scores"]["match"]["value"] = value
    log = rezip(LOGS / "strong.eval", tmp_path / "s.eval", edit_sample("samples/q05_epoch_1.json", change))
    for command in (["compare", "--output", tmp_path / "c.json"], ["leaderboard", "--output-dir", tmp_path / "site"]):
        line = refused(tmp_path, command[0], log, LOGS / "weak.eval", "--metric", "quiz/match", "--errors",
                       "exclude-pair", *command[1:], expect="sample 'q05' epoch 1")
        assert ("1e+100" in line or "too large for a float" in line) and "s.eval" in line


def test_a_central_directory_offset_past_the_file_is_one_line(tmp_path):
    """Found by the fuzz (seed 1, scale 6): zipfile's arithmetic gave a negative member offset (OSError at seek)."""
    def change(data: bytearray, cd: int, eocd: int) -> None:
        struct.pack_into("<L", data, eocd + 16, 0xFFFFFFFF)
    log = _edit_central_directory(SMALL_LOG, tmp_path / "s.eval", change)
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json", expect="damaged zip")


def test_a_score_history_that_is_not_a_list_is_one_line(tmp_path):
    """Found by the fuzz (seed 1, scale 6): ``for h in raw["history"]`` on a number (TypeError)."""
    def change(doc: dict) -> None:
        doc["scores"]["match"]["history"] = 5
    log = rezip(LOGS / "strong.eval", tmp_path / "s.eval", edit_sample("samples/q03_epoch_1.json", change))
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect="sample 'q03' epoch 1: field 'scores.match.history'")


def test_a_span_id_that_is_an_object_is_no_id():
    """Found by the fuzz (seed 2, scale 6): a span_begin whose id was an object (TypeError: unhashable)."""
    from benchscore.sources.inspect_logs import sample_record

    with open(LOGS / "strong.eval", "rb") as fp:
        members = _central_directory(fp)
        doc = orjson.loads(_member_bytes(fp, members["samples/q04_epoch_1.json"], "strong.eval"))
    doc["events"].append({"event": "span_begin", "id": {"x": 1}, "parent_id": [1], "type": "scorer",
                          "name": {"n": 2}})
    doc["events"].append({"event": "model", "span_id": {"x": 1}})
    record = sample_record(doc, "strong.eval", orjson.dumps(doc))
    assert record.model_graded == frozenset()


@pytest.mark.parametrize("depth", [101, 1000])
def test_a_log_nested_past_the_readers_limit_is_refused_before_python_walks_it(tmp_path, depth):
    """Found by the fuzz (seed 2, scale 6): a .json log's epochs_reducer nested 1,000 deep parsed, then str() of
    it recursed past Python's limit (RecursionError). Every log, .json or .eval member, now has the readers' one
    limit."""
    from benchscore.common.readers import MAX_DEPTH
    from benchscore.sources import inspect_logs

    assert inspect_logs._LOG_DEPTH == MAX_DEPTH
    doc = orjson.loads((DATA / "inspect_ai" / "2025-05-12T20-28-13-04-00_popularity.json").read_bytes())
    other = json.loads(json.dumps(doc))
    other["eval"]["run_id"], other["eval"]["model"] = "another-run", "openai/another-model"
    doc["eval"]["config"]["epochs_reducer"] = "DEEP"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "log.json").write_bytes(orjson.dumps(doc).replace(b'"DEEP"', b"[" * depth + b"]" * depth))
    (tmp_path / "b" / "log.json").write_bytes(orjson.dumps(other))
    refused(tmp_path, "compare", tmp_path / "a" / "log.json", tmp_path / "b" / "log.json", "--output",
            tmp_path / "c.json", expect=f"nested deeper than {MAX_DEPTH} levels")


def test_reported_scores_that_are_no_list_are_one_line(tmp_path):
    """Found by the fuzz (seed 3, scale 6): header.json's results.scores a number (TypeError: not iterable)."""
    def edit(name: str, data: bytes) -> bytes:
        if name != "header.json":
            return data
        doc = orjson.loads(data)
        doc["results"]["scores"] = 1.5
        return orjson.dumps(doc)
    log = rezip(LOGS / "strong.eval", tmp_path / "s.eval", edit)
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect="field 'results.scores'")


def test_a_target_past_64_bits_is_read():
    """Found by the fuzz (seed 3, scale 6): orjson cannot write an integer past 64 bits (the sample's identity)."""
    from benchscore.results.inspect_adapter import identity

    assert identity("q", 10**400, None) == identity("q", 10**400, None) != identity("q", 10**400 + 1, None)
    assert identity("q", "25", ["a"]) == identity("q", "25", ["a"])


def test_a_retried_error_that_is_null_is_one_line(tmp_path):
    def change(doc: dict) -> None:
        doc["error_retries"] = [None]
    log = rezip(LOGS / "strong.eval", tmp_path / "s.eval", edit_sample("samples/q01_epoch_1.json", change))
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect="sample 'q01' epoch 1: field 'error_retries[0]'")


@pytest.mark.parametrize(("value", "field"), [
    (5, "'input'"), ({"role": "user"}, "'input'"), ([1, 2], "'input[0]'"), (["hello"], "'input[0]'"),
    ([{"role": "user", "content": [5]}], "'input[0].content'"), ([{"role": "user", "content": 3}], "'input[0].content'"),
])
def test_a_sample_input_that_is_not_chat_messages_is_one_line(tmp_path, value, field):
    def change(doc: dict) -> None:
        doc["input"] = value
    log = rezip(LOGS / "strong.eval", tmp_path / "s.eval", edit_sample("samples/q02_epoch_1.json", change))
    refused(tmp_path, "compare", log, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect=f"sample 'q02' epoch 1: field {field}")


def _lm_eval(tmp_path: Path, change: Callable[[dict], None]) -> Path:
    folder = tmp_path / "lm"
    shutil.copytree(DATA / "lm_eval", folder)
    results = next(folder.glob("results_*.json"))
    doc = orjson.loads(results.read_bytes())
    change(doc)
    results.write_bytes(orjson.dumps(doc))
    return results


@pytest.mark.parametrize(("key", "value", "field"), [
    ("higher_is_better", "yes", "higher_is_better.math_perturbed_full"),
    ("higher_is_better", {"exact_match": "yes"}, "higher_is_better.math_perturbed_full.exact_match"),
    ("configs", ["x"], "configs.math_perturbed_full"),
    ("n-samples", 3, "n-samples.math_perturbed_full"),
])
def test_lm_eval_results_of_the_wrong_shape_are_one_line(tmp_path, key, value, field):
    def change(doc: dict) -> None:
        doc[key]["math_perturbed_full"] = value
    results = _lm_eval(tmp_path, change)
    refused(tmp_path, "compare", results, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect=f"field {field!r}")


def test_lm_eval_higher_is_better_not_an_object_is_one_line(tmp_path):
    def change(doc: dict) -> None:
        doc["higher_is_better"] = "yes"
    results = _lm_eval(tmp_path, change)
    refused(tmp_path, "compare", results, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect="field 'higher_is_better'")


def test_an_lm_eval_value_too_large_is_not_compared(tmp_path):
    folder = tmp_path / "lm"
    shutil.copytree(DATA / "lm_eval", folder)
    samples = next(folder.glob("samples_*.jsonl"))
    lines = samples.read_bytes().splitlines()
    first = orjson.loads(lines[0])
    metric = first["metrics"][0]
    first[metric] = 1e308
    samples.write_bytes(b"\n".join([orjson.dumps(first), *lines[1:]]) + b"\n")
    results = next(folder.glob("results_*.json"))
    task = samples.name[len("samples_"):].split("_2026")[0]
    other = shutil.copytree(DATA / "lm_eval", tmp_path / "lm2")
    refused(tmp_path, "compare", results, other, "--metric", f"{task}/{metric},{first['filter']}",
            "--output", tmp_path / "c.json", expect="within 1e+100 in magnitude (line 1")


def test_an_every_eval_ever_score_too_large_is_one_line_with_the_checksum_resynced(tmp_path):
    """The samples changed and the aggregate record's sha256 of them re-synced, so the value reaches the reader."""
    folder = tmp_path / "eee"
    shutil.copytree(DATA / "every_eval_ever", folder)
    aggregate = folder / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json"
    samples = folder / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40_samples.jsonl"
    record = orjson.loads(samples.read_bytes().splitlines()[0])
    record["evaluation"]["score"] = 1e308  # finite: its standard error would be inf
    samples.write_bytes(orjson.dumps(record) + b"\n")
    doc = orjson.loads(aggregate.read_bytes())
    doc["detailed_evaluation_results"]["checksum"] = hashlib.sha256(samples.read_bytes()).hexdigest()
    aggregate.write_bytes(orjson.dumps(doc))
    refused(tmp_path, "compare", aggregate, LOGS / "weak.eval", "--output", tmp_path / "c.json",
            expect="line 1: field 'evaluation.score'")


def test_a_json_log_nested_100000_deep_is_one_line_in_bounded_memory(tmp_path):
    """Found by the fuzz (seed 1, scale 6): ijson's prefixed events keep a prefix per level, so a sample value
    nested 100,000 deep took 22 GB before the machine killed the process. Run with a 3 GB address space."""
    import resource
    import subprocess
    import sys

    doc = orjson.loads((DATA / "inspect_ai" / "2025-05-12T20-28-13-04-00_popularity.json").read_bytes())
    other = json.loads(json.dumps(doc))
    other["eval"]["run_id"], other["eval"]["model"] = "another-run", "openai/another-model"
    doc["samples"][0]["metadata"] = {"deep": "DEEP"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    text = orjson.dumps(doc).replace(b'"DEEP"', b"[" * 100_000 + b"]" * 100_000)
    (tmp_path / "a" / "log.json").write_bytes(text)
    (tmp_path / "b" / "log.json").write_bytes(orjson.dumps(other))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, 3 * 1024**3))

    proc = subprocess.run([sys.executable, "-c", "from benchscore.cli import main; main()", "compare",
                           str(tmp_path / "a" / "log.json"), str(tmp_path / "b" / "log.json"), "--output",
                           str(tmp_path / "c.json")], capture_output=True, text=True, preexec_fn=limit, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and "nested deeper than" in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "c.json").exists()
