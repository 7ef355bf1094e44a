"""benchscore's own reader of inspect_ai logs (``benchscore.sources.inspect_logs``): what it reads equals what
inspect_ai itself reads from the same real logs, and the zip layer (central directory, zip64, deflate and zstd
members, several zstd frames, a damaged member) is read exactly or refused in one line."""

from __future__ import annotations

import io
import math
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.common.errors import BadInput
from benchscore.sources.inspect_logs import (
    _central_directory,
    _Member,
    _member_bytes,
    open_logs,
    resolve_logs,
)

ROOT = Path(__file__).resolve().parents[2]
AGENT_LOG = ROOT / "examples" / "mira" / "inspect" / "agent.eval"
OPS = Path(__file__).resolve().parents[1] / "mira" / "inspect" / "ops_task.py"


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _compare_with_inspect_ai(log: Path) -> int:
    from inspect_ai.log import read_eval_log

    ref = read_eval_log(str(log))
    with open_logs([log]) as (opened,):
        h = opened.header
        assert (h.status, h.task, h.model, h.epochs, h.eval_id, h.run_id) == (
            ref.status, ref.eval.task, ref.eval.model, ref.eval.config.epochs or 1, ref.eval.eval_id, ref.eval.run_id)
        assert h.task_args == ref.eval.task_args and h.sample_ids == ref.eval.dataset.sample_ids
        assert h.inspect_version == ref.eval.packages["inspect_ai"]
        assert h.scorers == [s.name for s in ref.eval.scorers]
        assert (h.error.message if h.error else None) == (ref.error.message if ref.error else None)
        samples = {(s.id, s.epoch): s for s in ref.samples}
        n = 0
        for r in opened.samples():
            s = samples[(r.id, r.epoch)]
            assert r.uuid == s.uuid and r.target == s.target and r.input == s.input and r.choices == s.choices
            assert _same(r.metadata, s.metadata)
            assert r.output == s.output.completion
            assert r.working_time == s.working_time and r.total_time == s.total_time
            assert r.limit == (s.limit.type if s.limit else None)
            assert (r.error.message if r.error else None) == (s.error.message if s.error else None)
            assert [e.error.message for e in r.retries] == [e.message for e in s.error_retries or []]
            assert set(r.scores) == set(s.scores or {})
            for name, score in (s.scores or {}).items():
                mine = r.scores[name]
                assert _same(mine.value, score.value) and mine.answer == score.answer
                assert _same(mine.metadata or {}, score.metadata or {})
                assert len(mine.history) == len(score.history)
            approvals = [(e.approver, e.decision, e.call.function) for e in s.events if e.event == "approval"]
            assert [(a.approver, a.decision, a.function) for a in r.approvals] == approvals
            n += 1
    assert n == len(ref.samples)
    return n


@pytest.mark.inspect
@pytest.mark.usefixtures("inspect_ai_installed")
def test_the_reader_reads_what_inspect_ai_reads(tmp_path):
    """The bundled log (errors, a time limit, NaN metadata, a cancelled run, a model-graded scorer), and a run
    of the ops task with retried errors, approvals and a task group."""
    assert _compare_with_inspect_ai(AGENT_LOG) == 18
    env = dict(os.environ, INSPECT_LOG_LEVEL="error", PYTHONWARNINGS="ignore")
    subprocess.run([sys.executable, str(OPS), str(tmp_path / "logs"), "ok,giveup,group,approval,daemon",
                    "--retry-on-error", "1"], env=env, check=True, capture_output=True, timeout=600)
    (log,) = (tmp_path / "logs").glob("*.eval")
    assert _compare_with_inspect_ai(log) == 15
    with open_logs([AGENT_LOG]) as (opened,):
        graded = {r.key: r.model_graded for r in opened.samples()}
    assert graded["sample 'GOOD' epoch 1"] == frozenset({"llm_check"})


@pytest.mark.inspect
@pytest.mark.usefixtures("inspect_ai_installed")
def test_a_deflated_log_and_a_json_log_read_the_same(tmp_path):
    """The same members recompressed with deflate (as logs before zstd were), and the log as inspect_ai's .json."""
    from inspect_ai.log import read_eval_log, write_eval_log

    deflated = tmp_path / "deflated.eval"
    with zipfile.ZipFile(AGENT_LOG) as src, zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as dst:
        import zipfile_zstd  # noqa: F401 - zipfile reads the zstd members here

        for item in src.infolist():
            dst.writestr(item.filename, src.read(item.filename))
    as_json = tmp_path / "agent.json"
    write_eval_log(read_eval_log(str(AGENT_LOG)), str(as_json))

    def read(path: Path) -> list[tuple]:
        with open_logs([path]) as (opened,):
            return [(r.id, r.epoch, r.output, {k: repr(v.value) for k, v in r.scores.items()},
                     r.error.message if r.error else None, r.working_time) for r in opened.samples()]

    base = read(AGENT_LOG)
    assert read(deflated) == base
    assert sorted(read(as_json), key=lambda t: (t[1], str(t[0]))) == sorted(base, key=lambda t: (t[1], str(t[0])))


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_the_central_directory_equals_zipfile_zip64_included(tmp_path):
    """More than 65,535 members: the zip64 end of central directory; one member written twice."""
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for i in range(65_540):
            z.writestr(f"samples/{i}.json", b"{}")
        z.writestr("samples/7.json", b'{"again": 1}')
    with open(path, "rb") as fp:
        mine = _central_directory(fp)
        theirs = {}
        for info in zipfile.ZipFile(fp).infolist():
            theirs.pop(info.filename, None)
            theirs[info.filename] = info
    assert mine is not None and list(mine) == list(theirs)
    for name in ("samples/0.json", "samples/65539.json", "samples/7.json"):
        a, b = mine[name], theirs[name]
        assert (a.CRC, a.compress_size, a.file_size, a.header_offset) == (b.CRC, b.compress_size, b.file_size,
                                                                          b.header_offset)
    with open(path, "rb") as fp:
        assert _member_bytes(fp, mine["samples/7.json"], "many.zip") == b'{"again": 1}'


def _local(name: bytes, payload: bytes) -> bytes:
    return b"PK\x03\x04" + b"\x00" * 22 + struct.pack("<HH", len(name), 0) + name + payload


def test_a_member_of_several_zstd_frames_and_a_damaged_one():
    import zstandard

    data = b'{"id": "A", "text": "' + b"x" * 5000 + b'"}'
    cctx = zstandard.ZstdCompressor()
    first, second = cctx.compressobj(), cctx.compressobj()
    two = first.compress(data[:3000]) + first.flush() + second.compress(data[3000:]) + second.flush()
    blob = _local(b"samples/A.json", two)
    info = _Member("samples/A.json", 93, zlib.crc32(data), len(two), len(data), 0)
    assert _member_bytes(io.BytesIO(blob), info, "x.eval") == data
    bad = _Member("samples/A.json", 93, zlib.crc32(data) ^ 1, len(two), len(data), 0)
    with pytest.raises(BadInput, match="fails its CRC check"):
        _member_bytes(io.BytesIO(blob), bad, "x.eval")
    with pytest.raises(BadInput, match="compression method 12"):
        _member_bytes(io.BytesIO(blob), _Member("samples/A.json", 12, 0, len(two), len(data), 0), "x.eval")


def test_resolving_what_the_user_gave(tmp_path):
    with pytest.raises(BadInput, match="file not found"):
        resolve_logs([tmp_path / "nope.eval"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="a folder holding no inspect_ai log"):
        resolve_logs([tmp_path / "empty"])
    (tmp_path / "logs" / "sub").mkdir(parents=True)
    for name in ("b.eval", "sub/a.json", "logs.json", ".hidden.eval", "notes.txt"):
        (tmp_path / "logs" / name).write_bytes(b"")
    assert [loc.name for loc in resolve_logs([tmp_path / "logs"])] == ["b.eval", "a.json"]
    assert resolve_logs([f"file://{tmp_path}/logs/b.eval"])[0].url == f"{tmp_path}/logs/b.eval"
    with pytest.raises(BadInput, match="cannot open this URL"):
        resolve_logs(["nosuchprotocol://bucket/x.eval"])


@given(st.lists(st.tuples(st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)),
                          st.integers(-12 * 60, 14 * 60)), min_size=2, max_size=6, unique_by=lambda t: t[0]))
def test_the_attempt_order_follows_the_instants_the_logs_record_in_any_offset(times):
    """An eval set's final log is chosen by ``eval.created`` (issue 35): written in any UTC offset (or none:
    UTC), the order of the attempts is the order of the instants, never of how the times are written."""
    from benchscore.sources.inspect_logs import attempt_order

    headers = []
    for when, minutes in times:
        zone = timezone(timedelta(minutes=minutes))
        text = when.replace(tzinfo=UTC).astimezone(zone).isoformat() if minutes else when.isoformat()
        headers.append(({"eval": {"created": text}}, when))
    ranked = sorted(headers, key=lambda h: attempt_order(h[0]))
    assert [w for _, w in ranked] == sorted(w for _, w in headers)
