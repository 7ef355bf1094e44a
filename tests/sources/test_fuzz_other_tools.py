"""A seeded fuzz test of every reader of other tools' files, and of the outputs read back (issue 39 point 4).

``compare`` and ``leaderboard`` are run on two results of one tool, one of them mutated, in this process
through click's CliRunner:

- inspect_ai ``.eval`` logs (``examples/results/logs``: a real log of 85 zstd members) mutated *inside the
  zip*, each member rewritten with a valid CRC so the mutation reaches the parser: a member's JSON (the
  families of ``tests/test_fuzz_inputs.py``: truncated, bit-flipped, non-UTF-8, non-finite, nested far beyond
  the limit, a huge value, a value of another type, a duplicate key), a sample's own fields (scores, input,
  target, id, epoch, error, retries, limit, metadata) given odd values, member names (renamed, not UTF-8,
  duplicated, removed, added), sizes and offsets in the central directory, compression methods (stored,
  deflate, bzip2, lzma, an unknown method number), nesting (a zip inside a member, a log inside a zip), the
  zip's version and flags, and the whole file truncated or bit-flipped;
- an inspect_ai ``.json`` log (tests/results/data), with the JSON families;
- lm-evaluation-harness output (tests/results/data): the ``results_*.json`` and the ``samples_*.jsonl``;
- Every Eval Ever records (tests/results/data): the aggregate record, and its samples file with the aggregate's
  sha256 of it re-synced (so the mutation reaches the parser, not the checksum); a HELM samples file alone.

Then every output a successful run wrote is read back (``report`` and ``verify``), and the outputs
themselves (a results comparison, a leaderboard.json) are mutated with the JSON families and read back.

Every run keeps the promises of ``tests/test_fuzz_inputs.py``: exit 0, 1 or 2; exit 2 is exactly one
``error:`` line; no traceback; exit 2 writes nothing; inputs are never changed; nothing hangs (a watchdog).
The seed is printed (``-s``); ``BENCHSCORE_FUZZ_SEED=S`` picks another, ``BENCHSCORE_FUZZ_SCALE=N`` makes
N times as many runs (scale 1: a minute or two on a 2-core machine).
"""

from __future__ import annotations

import bz2
import importlib.util
import io
import itertools
import json
import lzma
import os
import random
import shutil
import struct
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common import readers
from benchscore.sources.inspect_logs import _central_directory, _member_bytes

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "examples" / "results" / "logs"
DATA = ROOT / "tests" / "results" / "data"
SCALE = max(1, int(os.environ.get("BENCHSCORE_FUZZ_SCALE", "1")))
SEED = int(os.environ.get("BENCHSCORE_FUZZ_SEED", "0"))
WATCHDOG_S = 120.0


def _shared():
    """tests/test_fuzz_inputs.py: its JSON mutations, watchdog and snapshot (tests/ is no package)."""
    spec = importlib.util.spec_from_file_location("benchscore_fuzz_inputs", ROOT / "tests" / "test_fuzz_inputs.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  (its dataclasses look their module up)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


F = _shared()
JSON_FAMILIES = ("truncate", "bitflip", "non_utf8", "non_finite", "deep", "oversized", "structure", "duplicate")
#: odd values for a sample's own fields (beside the shared swaps)
ODD = (None, True, 0, -1, 1.5, 1e308, -1e308, 10**400, 5e-324, "", "x" * 5000, "C", "1e999", "NaN", [], {}, [None],
       [1, "a"], {"x": None}, {"message": 5}, {"message": "m", "traceback": 7}, [{"role": "user", "content": 5}],
       [{"role": "user", "content": [{"type": "text"}]}], {"type": 3}, "\udcff")
SAMPLE_FIELDS = ("scores", "input", "target", "choices", "id", "epoch", "error", "error_retries", "limit", "metadata",
                 "messages", "output", "attachments", "events", "working_time", "total_time", "uuid", "invalidation")
RUNS: dict[str, int] = {}
_RUN_NUMBER = itertools.count()


# ---- the zip, member by member -------------------------------------------------------------------
@dataclass
class Member:
    name: str | bytes
    data: bytes
    method: int = zipfile.ZIP_DEFLATED


def members_of(path: Path) -> list[Member]:
    with open(path, "rb") as fp:
        return [Member(name, _member_bytes(fp, info, str(path))) for name, info in _central_directory(fp).items()]


def _compress(data: bytes, method: int) -> bytes:
    if method == zipfile.ZIP_STORED:
        return data
    if method == zipfile.ZIP_DEFLATED:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if method == zipfile.ZIP_BZIP2:
        return bz2.compress(data)
    if method == zipfile.ZIP_LZMA:
        return lzma.compress(data, format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA1}])
    if method == 93:
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return data  # an unknown method number: the bytes as they are


def zip_bytes(members: list[Member]) -> bytes:
    """A zip written by hand (names as given, even not UTF-8 or twice; any method number)."""
    out = io.BytesIO()
    central = []
    for m in members:
        name = m.name if isinstance(m.name, bytes) else m.name.encode("utf-8", "surrogateescape")
        flags = 0x800 if not isinstance(m.name, bytes) else 0
        body = _compress(m.data, m.method)
        crc = zlib.crc32(m.data)
        offset = out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, m.method, 0, 0, crc, len(body), len(m.data),
                              len(name), 0))
        out.write(name + body)
        central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, flags, m.method, 0, 0, crc, len(body),
                                   len(m.data), len(name), 0, 0, 0, 0, 0, offset) + name)
    start = out.tell()
    for c in central:
        out.write(c)
    size = out.tell() - start
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), size, start, 0))
    return out.getvalue()


def _cd_entries(data: bytes) -> tuple[int, list[int]]:
    """The end-of-central-directory offset and the offset of each central-directory entry."""
    eocd = data.rfind(b"PK\x05\x06")
    count, _, start = struct.unpack_from("<H2L", data, eocd + 10)
    offsets, pos = [], start
    for _ in range(count):
        offsets.append(pos)
        n, e, c = struct.unpack_from("<3H", data, pos + 28)
        pos += 46 + n + e + c
    return eocd, offsets


def _json_member(rng: random.Random, data: bytes) -> bytes:
    family = rng.choice(JSON_FAMILIES)
    m = F.mutate(family, data, "json", rng)
    return m.data if m.data is not None else data


def _set(doc: dict, path: list[str], value) -> None:
    for key in path[:-1]:
        nxt = doc.get(key)
        if not isinstance(nxt, dict):
            return
        doc = nxt
    doc[path[-1]] = value


def _dumps(doc) -> bytes:
    text = json.dumps(doc, ensure_ascii=False)
    return text.encode("utf-8", "surrogateescape")


def mutate_eval(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One mutation of an ``.eval`` log: (what was done, the new bytes)."""
    members = members_of_bytes(data)
    samples = [i for i, m in enumerate(members) if str(m.name).startswith("samples/")]
    family = rng.choice(("member_json", "sample_field", "sample_field", "score_value", "header_field", "names",
                         "non_utf8_name", "sizes", "compression", "nesting", "version", "raw"))
    if family == "member_json":
        i = rng.choice(samples + [len(members) - 1] * 3 + list(range(len(members))))
        members[i].data = _json_member(rng, members[i].data)
        return f"{family} {members[i].name!r}", zip_bytes(members)
    if family in ("sample_field", "score_value"):
        i = rng.choice(samples)
        doc = orjson.loads(members[i].data)
        if family == "score_value":
            scorer = rng.choice(sorted(doc.get("scores") or {"match": None}))
            key = rng.choice(["value", "value", "history", "answer", "metadata"])
            _set(doc, ["scores", scorer, key], rng.choice(ODD))
            what = f"scores.{scorer}.{key}"
        else:
            what = rng.choice(SAMPLE_FIELDS)
            if rng.random() < 0.2:
                doc.pop(what, None)
            else:
                doc[what] = rng.choice(ODD)
        members[i].data = _dumps(doc)
        return f"{family} {members[i].name} {what}", zip_bytes(members)
    if family == "header_field":
        name = rng.choice(["header.json", "_journal/start.json"])
        i = next((k for k, m in enumerate(members) if m.name == name), len(members) - 1)
        doc = orjson.loads(members[i].data)
        path = rng.choice([["eval", "run_id"], ["eval", "model"], ["eval", "task"], ["eval", "config", "epochs"],
                           ["eval", "config", "epochs_reducer"], ["eval", "dataset", "sample_ids"], ["eval", "created"],
                           ["status"], ["error"], ["results"], ["results", "scores"], ["version"], ["eval", "task_args"],
                           ["eval", "scorers"], ["eval", "packages"], ["stats"], ["eval", "dataset"], ["eval"]])
        _set(doc, path, rng.choice(ODD))
        members[i].data = _dumps(doc)
        return f"{family} {name} {'.'.join(path)}", zip_bytes(members)
    if family == "names":
        how = rng.choice(["rename", "remove", "add", "twice", "remove_header"])
        i = rng.choice(samples)
        if how == "rename":
            members[i].name = rng.choice(["", "samples/", "samples/../x.json", "samples/q01_epoch_0.json",
                                          "samples/q01_epoch_x.json", "samples/" + "x" * 2000 + ".json",
                                          "samples/\u00e9_epoch_1.json", members[samples[0]].name, "/abs.json"])
        elif how == "remove":
            del members[i]
        elif how == "add":
            members.append(Member(f"samples/zz{rng.randrange(9)}_epoch_1.json", rng.choice(
                [b"{}", b"[]", b"null", members[i].data, b"\xff", members[i].data[: len(members[i].data) // 2]])))
        elif how == "twice":
            members.append(Member(members[i].name, _json_member(rng, members[i].data)))
        else:
            members = [m for m in members if m.name not in ("header.json", "_journal/start.json")
                       or rng.random() < 0.5]
        return f"names {how}", zip_bytes(members)
    if family == "non_utf8_name":
        out = bytearray(zip_bytes(members))
        _, entries = _cd_entries(bytes(out))
        at = rng.choice(entries)
        (n,) = struct.unpack_from("<H", out, at + 28)
        out[at + 46 + rng.randrange(max(1, n))] = rng.choice([0xFF, 0xC3, 0x80, 0xED])
        if rng.random() < 0.5:
            struct.pack_into("<H", out, at + 8, struct.unpack_from("<H", out, at + 8)[0] & ~0x800 & 0xFFFF)
        return family, bytes(out)
    if family == "sizes":
        out = bytearray(data)
        eocd, entries = _cd_entries(data)
        value = rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, len(data), len(data) + 1])
        if rng.random() < 0.3:
            where = rng.choice([8, 10, 12, 16])  # entries on disk, entries, cd size, cd offset
            fmt = "<H" if where < 12 else "<L"
            struct.pack_into(fmt, out, eocd + where, value & (0xFFFF if fmt == "<H" else 0xFFFFFFFF))
            return f"sizes eocd+{where}={value}", bytes(out)
        at = rng.choice(entries)
        where = rng.choice([16, 20, 24, 42, 28, 30])  # crc, compressed, uncompressed, offset, name / extra length
        fmt = "<H" if where in (28, 30) else "<L"
        old = struct.unpack_from(fmt, out, at + where)[0]
        new = rng.choice([value, old + 1, max(0, old - 1)]) & (0xFFFF if fmt == "<H" else 0xFFFFFFFF)
        struct.pack_into(fmt, out, at + where, new)
        return f"sizes entry+{where}={new}", bytes(out)
    if family == "compression":
        if rng.random() < 0.6:
            for m in rng.sample(members, k=rng.randint(1, 4)):
                m.method = rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, 93])
            return "compression methods", zip_bytes(members)
        out = bytearray(data)
        _, entries = _cd_entries(data)
        at = rng.choice(entries)
        method = rng.choice([1, 6, 9, 12, 14, 95, 98, 99, 0xFFFF, 0, 8])
        struct.pack_into("<H", out, at + 10, method)
        return f"compression method number {method}", bytes(out)
    if family == "nesting":
        how = rng.choice(["zip_member", "log_in_zip", "deep_member"])
        if how == "zip_member":
            i = rng.choice(samples + [len(members) - 1])
            members[i].data = zip_bytes([Member("inner.json", members[i].data)])
            return f"nesting zip in {members[i].name}", zip_bytes(members)
        if how == "log_in_zip":
            return "nesting log in a zip", zip_bytes([Member("log.eval", data, zipfile.ZIP_STORED)])
        i = rng.choice(samples)
        depth = rng.choice([101, 1025, 5000])
        members[i].data = members[i].data.replace(b'"metadata":', b'"metadata":' + b"[" * depth + b"]" * depth + b",\"m\":", 1)
        return f"nesting {depth} deep", zip_bytes(members)
    if family == "version":
        out = bytearray(data)
        eocd, entries = _cd_entries(data)
        at = rng.choice(entries)
        field, value = rng.choice([(6, 0xFF), (6, 63), (4, 0xFFFF), (8, 0x1), (8, 0x41), (8, 0x8)])
        struct.pack_into("<H", out, at + field, value)
        if rng.random() < 0.5:  # benchscore's own reader gives up: zipfile reads it
            (count,) = struct.unpack_from("<H", out, eocd + 10)
            struct.pack_into("<HH", out, eocd + 8, count + 1, count + 1)
        return f"version field {field} = {value:#x}", bytes(out)
    m = F.mutate(rng.choice(["truncate", "bitflip"]), data, "zip", rng)
    return f"raw {m.family}", m.data


def members_of_bytes(data: bytes) -> list[Member]:
    with io.BytesIO(data) as fp:
        return [Member(name, _member_bytes(fp, info, "log")) for name, info in _central_directory(fp).items()]


# ---- what to run -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pair:
    """Two results of one tool (``a`` is mutated); the files each is; ``extra``: options the valid pair needs."""

    id: str
    a: str
    b: str
    fuzz: dict[str, str]  # a file of a's (relative to the run's input folder) -> its format
    extra: tuple[str, ...] = ()
    runs: int = 20  # random mutations at scale 1, per file


EEE_ID = "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40"
LM_STAMP = "2026-01-21T03-44-18.458309"
PAIRS = [
    Pair("inspect .eval", "a/strong.eval", "b/weak.eval", {"a/strong.eval": "eval"}, runs=110),
    Pair("inspect .json", "a/log.json", "b/log.json", {"a/log.json": "json"}),
    Pair("lm-eval", f"a/results_{LM_STAMP}.json", f"b/results_{LM_STAMP}.json",
         {f"a/results_{LM_STAMP}.json": "json", f"a/samples_math_perturbed_full_{LM_STAMP}.jsonl": "jsonl"},
         extra=("--intersection",)),
    Pair("every eval ever", f"a/{EEE_ID}.json", f"b/{EEE_ID}.json",
         {f"a/{EEE_ID}.json": "json", f"a/{EEE_ID}_samples.jsonl": "jsonl"}),
    Pair("every eval ever (samples alone)", "a/helm_mmlu_openai_gpt2_samples.jsonl",
         "b/helm_mmlu_openai_gpt2_samples.jsonl", {"a/helm_mmlu_openai_gpt2_samples.jsonl": "jsonl"}, runs=10),
]


def _pair_inputs(pair: Pair, root: Path) -> None:
    """The valid inputs of a pair under root/a and root/b."""
    for side in ("a", "b"):
        (root / side).mkdir(parents=True)
    if pair.id == "inspect .eval":
        shutil.copyfile(LOGS / "strong.eval", root / pair.a)
        shutil.copyfile(LOGS / "weak.eval", root / pair.b)
    elif pair.id == "inspect .json":
        doc = orjson.loads((DATA / "inspect_ai" / "2025-05-12T20-28-13-04-00_popularity.json").read_bytes())
        (root / pair.a).write_bytes(orjson.dumps(doc))
        doc["eval"]["run_id"], doc["eval"]["model"] = "another-run", "openai/another-model"
        (root / pair.b).write_bytes(orjson.dumps(doc))
    else:
        src = DATA / ("lm_eval" if pair.id == "lm-eval" else "every_eval_ever")
        for side in ("a", "b"):
            for f in src.iterdir():
                if f.name != "LICENSE":
                    shutil.copyfile(f, root / side / f.name)


def _resync(folder: Path) -> None:
    """An Every Eval Ever aggregate record's sha256 (and row count) of its samples file, made true again."""
    import hashlib

    aggregate = folder / f"{EEE_ID}.json"
    samples = folder / f"{EEE_ID}_samples.jsonl"
    try:
        doc = orjson.loads(aggregate.read_bytes())
        detail = doc["detailed_evaluation_results"]
        detail["checksum"] = hashlib.sha256(samples.read_bytes()).hexdigest()
        if "total_rows" in detail:
            detail["total_rows"] = sum(1 for line in samples.read_bytes().split(b"\n") if line.strip())
        aggregate.write_bytes(orjson.dumps(doc))
    except (orjson.JSONDecodeError, KeyError, TypeError, OSError):
        pass


# ---- the promises ----------------------------------------------------------------------------------
def check_run(args: list[str], work: Path, inputs: Path, expect: str | None = None) -> list[str]:
    """Run ``benchscore args``; what broke a promise (empty: none)."""
    before_all = F.snapshot(work)
    before_inputs = F.snapshot(inputs)
    try:
        with F.watchdog(WATCHDOG_S):
            result = CliRunner().invoke(cli, args)
    except F.Hung as exc:
        return [f"hung: {exc}"]
    RUNS[args[0]] = RUNS.get(args[0], 0) + 1
    problems = []
    code, err = result.exit_code, result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(result.exception)).strip().splitlines()
        problems.append(f"traceback: {type(result.exception).__name__}: {str(result.exception)[:200]} at {tb[-3:]}")
    if code not in (0, 1, 2):
        problems.append(f"exit {code}")
    if "Traceback" in err:
        problems.append(f"a traceback on stderr: {err[-300:]}")
    if code == 2:
        lines = err.splitlines()
        if args[0] != "verify" and (len(lines) != 1 or not lines[0].startswith("error: ")):
            problems.append(f"exit 2 but stderr is not one 'error:' line: {err[:300]!r}")
        if expect and expect not in err:
            problems.append(f"expected {expect!r} in {err[:300]!r}")
        if F.snapshot(work) != before_all:
            problems.append("exit 2 but something was written or changed")
    elif expect:
        problems.append(f"expected a refusal ({expect!r}), got exit {code}")
    if F.snapshot(inputs) != before_inputs:
        problems.append("an input was changed")
    return [f"{' '.join(args[:1])}: {p} [stderr: {err.strip()[:200]!r}]" for p in problems]


def run_pair(pair: Pair, tmp: Path, file: str, data: bytes | None, special: str | None, rng: random.Random,
             expect: str | None = None) -> list[str]:
    """Run compare or leaderboard on ``pair`` with ``file`` replaced by ``data`` (or a special file), then read
    back what it wrote."""
    work = tmp / f"run{next(_RUN_NUMBER)}"
    inputs, out = work / "in", work / "out"
    out.mkdir(parents=True)
    _pair_inputs(pair, inputs)
    victim = inputs / file
    if special is not None:
        F._place(victim, F.Mutation(special, special=special))
    else:
        victim.write_bytes(data)  # type: ignore[arg-type]
        if pair.id == "every eval ever" and file.endswith("_samples.jsonl"):
            _resync(victim.parent)
    command = rng.choice(["compare", "compare", "leaderboard"])
    args = [command, str(inputs / pair.a), str(inputs / pair.b), *pair.extra]
    args += ["--output", str(out / "c.json")] if command == "compare" else ["--output-dir", str(out / "site")]
    problems = check_run(args, work, inputs, expect)
    written = out / "c.json" if command == "compare" else out / "site" / "leaderboard.json"
    if not problems and written.is_file() and rng.random() < 0.3:  # the output read back
        reader = rng.choice(["report", "verify"]) if command == "compare" else "verify"
        back = [reader, str(written)] + (["--output", str(out / "r.html")] if reader == "report" else [])
        problems += check_run(back, work, inputs)
    shutil.rmtree(work, ignore_errors=True)
    return problems


def mutations_of(fmt: str, data: bytes, rng: random.Random) -> tuple[str, bytes]:
    if fmt == "eval":
        return mutate_eval(data, rng)
    family = rng.choice(JSON_FAMILIES)
    m = F.mutate(family, data, fmt, rng)
    return f"{family} {m.note}".strip(), m.data


_NON_REGULAR = {"fifo": "not a regular file", "dev_zero": "not a regular file", "loop": "symbolic link loop",
                "dangling": "not found", "folder": None}


@pytest.fixture(scope="module")
def seed_said():
    print(f"\nBENCHSCORE_FUZZ_SEED={SEED} BENCHSCORE_FUZZ_SCALE={SCALE}")


@pytest.fixture(scope="module", autouse=True)
def bounded_memory():
    """The runs are in this process: an address space of 8 GB makes a reader that blows up (a JSON log nested
    100,000 deep once took 22 GB) a MemoryError, a broken promise, instead of the machine's OOM killer."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = 8 * 1024**3
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    yield
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _cases():
    for pair in PAIRS:
        for file, fmt in pair.fuzz.items():
            yield pair, file, fmt


@pytest.mark.parametrize(("pair", "file", "fmt"), list(_cases()), ids=[f"{p.id}:{Path(f).name}" for p, f, _ in _cases()])
def test_fuzzed_files_of_other_tools_keep_the_shared_promises(pair, file, fmt, tmp_path, seed_said, monkeypatch):
    """The valid pair runs (exit 0 or 1), then each mutation of ``file`` keeps every promise."""
    rng = random.Random(f"{pair.id} {file} {SEED}")
    base = tmp_path / "base"
    _pair_inputs(pair, base)
    data = (base / file).read_bytes()
    failures = []
    valid = run_pair(pair, tmp_path, file, data, None, random.Random(0))
    assert not valid, valid
    for _ in range(pair.runs * SCALE):
        what, mutated = mutations_of(fmt, data, rng)
        failures += [f"{what}: {p}" for p in run_pair(pair, tmp_path, file, mutated, None, rng)]
    for special, expect in _NON_REGULAR.items():
        failures += [f"{special}: {p}" for p in run_pair(pair, tmp_path, file, None, special, rng, expect)]
    with monkeypatch.context() as mp:  # over the size limit (lowered for the run): the shared message
        mp.setattr(readers, "DEFAULT_MAX_BYTES", len(data) - 1)
        failures += [f"oversized: {p}" for p in run_pair(pair, tmp_path, file, data, None, rng,
                                                           "larger than the limit")]
    print(f"{pair.id} {Path(file).name}: seed {SEED}, {pair.runs * SCALE + len(_NON_REGULAR) + 1} mutations, "
          f"{len(failures)} violations")
    assert not failures, f"seed {SEED}: {len(failures)} broken promises:\n" + "\n".join(failures)


# ---- outputs read back ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> Path:
    """A results comparison and a leaderboard.json of the inspect_ai logs (valid: what is then mutated)."""
    root = tmp_path_factory.mktemp("outputs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1767225600")
        for args in (["compare", str(LOGS), "--output", str(root / "compare.json")],
                     ["leaderboard", str(LOGS), "--output-dir", str(root / "site")]):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code in (0, 1), result.output
    return root


READ_BACK = [("report", "compare.json"), ("verify", "compare.json"), ("verify", "site/leaderboard.json"),
             ("report", "site/leaderboard.json")]


@pytest.mark.parametrize(("reader", "name"), READ_BACK, ids=[f"{r}:{Path(n).name}" for r, n in READ_BACK])
def test_fuzzed_outputs_read_back_keep_the_shared_promises(reader, name, outputs, tmp_path, seed_said):
    rng = random.Random(f"{reader} {name} {SEED}")
    data = (outputs / name).read_bytes()
    failures = []
    for i in range(12 * SCALE):
        family = rng.choice((*JSON_FAMILIES, "retyped"))
        m = F.mutate(family, data, "json", rng)
        work = tmp_path / f"back{i}"
        (work / "in").mkdir(parents=True)
        doc = work / "in" / Path(name).name
        doc.write_bytes(m.data)
        args = [reader, str(doc)] + (["--output", str(work / "r.html")] if reader == "report" else [])
        failures += [f"{family} {m.note}: {p}" for p in check_run(args, work, work / "in")]
        shutil.rmtree(work, ignore_errors=True)
    print(f"{reader} {name}: seed {SEED}, {12 * SCALE} mutations, {len(failures)} violations")
    assert not failures, f"seed {SEED}: {len(failures)} broken promises:\n" + "\n".join(failures)


def test_zz_the_number_of_runs():
    print(f"\nfuzz of other tools' files: seed {SEED}, scale {SCALE}, {sum(RUNS.values())} runs: {dict(sorted(RUNS.items()))}")


