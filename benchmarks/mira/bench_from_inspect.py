"""Benchmark: `mira from-inspect` on an inspect_ai log of 10,000 samples x 3 epochs, side by side with a bare
read of the same log's sample files and with inspect_ai's own `read_eval_log`, each with its peak memory
(issue 30: from-inspect at most 2x the bare read, peak memory under 300 MB and not growing with the samples).

    .venv/bin/python benchmarks/mira/bench_from_inspect.py [--samples 10000] [--epochs 3] [--runs 3]
        [--keep-log PATH | --log PATH] [--no-read-eval-log]

The log: a real evaluation of 40 samples x 3 epochs with the offline `mockllm/model` provider (outputs
with usage; an answer scorer with metadata, one sample whose sandbox fails on epoch 2, one that hits the
time limit), whose sample members are then copied under new ids (`case-NNNNN`, new uuids) into a new
`.eval` zip written with inspect_ai's own zip settings (zstd members), with its header and summaries
updated: a log inspect_ai reads like any other (the `read_eval_log` probe reads it). ``--keep-log PATH``
keeps it, ``--log PATH`` times a log made before.

Each probe runs in a fresh process, alternating, ``--runs`` times; the medians are printed with their
ratio to the bare read and the peak resident memory of the process (``VmHWM`` of /proc/self/status, which
starts afresh at exec, unlike ``ru_maxrss``, which a child inherits from the benchmark that forked it;
interpreter and imports included). Imports are not timed (each probe imports its modules first):

- ``bare read``: open the zip, then for each sample member read its bytes, decompress (zstandard) and
  parse (orjson); nothing else (the floor any reader pays);
- ``reader``: ``benchscore.sources.inspect_logs``: header checks, every sample as a ``SampleRecord``
  (CRC checked, errors parsed, approvals, score history, model-graded scorers);
- ``from-inspect``: `benchscore mira from-inspect` end to end (mapping, contract, sha256 of the log,
  the reader, the conversion, the JSONL written);
- ``read_eval_log``: inspect_ai's own reading of the whole log (``--no-read-eval-log`` skips it: it
  takes about 45 s and 1.8 GB at 10,000 x 3).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASK = '''
import asyncio, sys
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver

class SandboxStartError(RuntimeError):
    pass

@solver
def agent():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        n = int(str(state.sample_id).split("-")[1])
        if n == 3 and state.epoch == 2:
            raise SandboxStartError("sandbox container failed to start")
        if n == 5:
            await asyncio.sleep(3)
        return await generate(state)
    return solve

def outputs(messages, tools, tool_choice, config):
    n = int(messages[-1].text.split()[1].rstrip(":"))
    o = ModelOutput.from_content(model="mockllm/model", content="42" if n % 3 else "41")
    o.usage = ModelUsage(input_tokens=20, output_tokens=1, total_tokens=21)
    return o

@scorer(metrics=[accuracy()])
def answer():
    async def score(state: TaskState, target: Target) -> Score:
        ok = state.output.completion == target.text
        return Score(value=CORRECT if ok else INCORRECT, answer=state.output.completion,
                     metadata={"tests_passed": 3 if ok else 1})
    return score

n = int(sys.argv[2])
inspect_eval(Task(dataset=MemoryDataset([Sample(id=f"case-{i:05d}", input=f"task {i}: answer with the number",
                                                 target="42") for i in range(n)]),
                  solver=agent(), scorer=answer(), epochs=int(sys.argv[3]), time_limit=1, name="bench"),
             model=get_model("mockllm/model", custom_outputs=outputs), log_dir=sys.argv[1], display="none",
             max_samples=100, max_connections=100, fail_on_error=False)
'''

BASE = 40


def make_log(folder: Path, samples: int, epochs: int) -> Path:
    """A real run of 40 samples, its members copied under new ids into a log of ``samples`` x ``epochs``."""
    import zipfile

    import orjson
    from inspect_ai._util.zipfile import zipfile_compress_kwargs  # inspect_ai's own zip settings (zstd)
    from shortuuid import uuid

    script = folder / "task.py"
    script.write_text(TASK)
    run_dir = folder / "run"
    subprocess.run([sys.executable, "-W", "ignore", str(script), str(run_dir), str(BASE), str(epochs)], check=True)
    (log,) = run_dir.glob("*.eval")
    big = folder / f"bench-{samples}x{epochs}.eval"
    with zipfile.ZipFile(log) as src, zipfile.ZipFile(big, "w", **zipfile_compress_kwargs) as dst:
        members = {n: src.read(n) for n in src.namelist() if n.startswith("samples/")}
        base = {(d["id"], d["epoch"]): d for d in map(json.loads, members.values())}
        summaries = {(s["id"], s["epoch"]): s for s in json.loads(src.read("summaries.json"))}
        out_summaries = []
        for epoch in range(1, epochs + 1):
            for n in range(samples):
                sid = f"case-{n:05d}"
                doc = dict(base[(f"case-{n % BASE:05d}", epoch)])
                doc["id"], doc["uuid"] = sid, uuid()
                dst.writestr(f"samples/{sid}_epoch_{epoch}.json", json.dumps(doc, separators=(",", ":")))
                out_summaries.append({**summaries[(f"case-{n % BASE:05d}", epoch)], "id": sid, "uuid": doc["uuid"]})
        dst.writestr("summaries.json", orjson.dumps(out_summaries))
        header = json.loads(src.read("header.json"))
        header["eval"]["dataset"]["samples"] = samples
        header["eval"]["dataset"]["sample_ids"] = [f"case-{n:05d}" for n in range(samples)]
        header["results"]["total_samples"] = header["results"]["completed_samples"] = samples * epochs
        dst.writestr("header.json", json.dumps(header, separators=(",", ":")))
    return big


def inputs(folder: Path, samples: int) -> tuple[Path, Path]:
    cases = [{"case_id": f"case-{n:05d}", "intent": "bench", "difficulty": "easy", "prompt": f"task {n}",
              "scoring_class": "automated_scored", "t_soft_s": 30.0,
              "criteria": [{"id": "answer_correct", "weight": 0.5, "scorer": "deterministic"},
                           {"id": "tests_pass", "weight": 0.5, "scorer": "deterministic"}]} for n in range(samples)]
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"benchmark_id": "bench", "contract_version": "1", "cases": cases}))
    mapping = folder / "mapping.json"
    mapping.write_text(json.dumps({
        "format": "mira-inspect-mapping", "execution_mode": "adapted",
        "criteria": {"answer_correct": {"scorer": "answer", "satisfied": ["C"], "unsatisfied": ["I", "P", "N"]},
                     "tests_pass": {"scorer": "answer", "metadata_key": "tests_passed", "at_least": 3}},
        "errors": {"infrastructure": [{"type": "SandboxStartError"}]}}))
    return contract, mapping


BARE = '''
import json, struct, zipfile, orjson, zstandard
dctx = zstandard.ZstdDecompressor()
n = 0
with open({log!r}, "rb") as fp:
    for info in zipfile.ZipFile(fp).infolist():
        if not info.filename.startswith("samples/"):
            continue
        fp.seek(info.header_offset)
        head = fp.read(30)
        fp.seek(info.header_offset + 30 + sum(struct.unpack("<HH", head[26:30])))
        data = dctx.decompress(fp.read(info.compress_size), max_output_size=info.file_size)
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            doc = json.loads(data)
        n += 1
'''

PROBES = {
    "bare read": BARE,
    "reader": ("from benchscore.sources.inspect_logs import open_logs\n"
               "with open_logs([{log!r}]) as logs:\n    n = sum(1 for _ in logs[0].samples())"),
    "from-inspect": ("from pathlib import Path\nfrom benchscore.mira.cli import run_from_inspect\n"
                     "conv = run_from_inspect([{log!r}], Path({contract!r}), Path({mapping!r}), Path({out!r}))\n"
                     "n = conv.written + len(conv.left_out)"),
    "read_eval_log": "from inspect_ai.log import read_eval_log\nlog = read_eval_log({log!r})\nn = len(log.samples)",
}


def timed(name: str, **paths: str) -> tuple[float, float, int]:
    """(seconds, peak resident MB, samples read) of one probe in a fresh process (imports not timed)."""
    imports = ("import inspect_ai.log" if name == "read_eval_log" else
               "import orjson, zstandard, benchscore.mira.cli, benchscore.mira.formats, benchscore.mira.records, "
               "benchscore.mira.inspect_logs")
    code = ("import resource, time, warnings\nwarnings.simplefilter('ignore')\n" + imports +
            "\nt0 = time.perf_counter()\n" + PROBES[name].format(**paths) +
            "\nhwm = [int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmHWM:')]"
            "\nprint(time.perf_counter() - t0, (hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
            " / 1024, n)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{proc.stderr[-3000:]}")
    out = proc.stdout.split()
    return float(out[-3]), float(out[-2]), int(out[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep-log", type=Path, help="copy the log made here to this path")
    ap.add_argument("--log", type=Path, help="time this log (made by --keep-log) instead of making one")
    ap.add_argument("--no-read-eval-log", action="store_true", help="skip inspect_ai's read_eval_log (slow)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        log = args.log or make_log(folder, args.samples, args.epochs)
        if args.keep_log is not None and args.log is None:
            shutil.copyfile(log, args.keep_log)
        contract, mapping = inputs(folder, args.samples)
        made = "given with --log" if args.log else f"a real run of {BASE} samples, copied; made in " \
                                                   f"{time.perf_counter() - t0:.1f} s"
        print(f"log: {log.name}, {log.stat().st_size / 1e6:.1f} MB, {args.samples} samples x {args.epochs} epochs "
              f"({made})", flush=True)
        paths = {"log": str(log), "contract": str(contract), "mapping": str(mapping), "out": str(folder / "r.jsonl")}
        names = [n for n in PROBES if not (args.no_read_eval_log and n == "read_eval_log")]
        times: dict[str, list[float]] = {name: [] for name in names}
        peaks: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(args.runs):
            for name in names:
                seconds, peak, n = timed(name, **paths)
                assert n == args.samples * args.epochs, (name, n)
                times[name].append(seconds)
                peaks[name].append(peak)
        base = statistics.median(times["bare read"])
        print(f"{'probe':<15}{'median s':>10}{'min s':>9}{'max s':>9}{'x bare':>8}{'peak MB':>9}   "
              f"(runs: {args.runs}, fresh process each; peak: max over runs)")
        for name in names:
            med = statistics.median(times[name])
            print(f"{name:<15}{med:>10.2f}{min(times[name]):>9.2f}{max(times[name]):>9.2f}{med / base:>7.2f}x"
                  f"{max(peaks[name]):>9.0f}")
        ratio = statistics.median(times["from-inspect"]) / base
        peak = max(peaks["from-inspect"])
        print(f"from-inspect / bare read: {ratio:.2f}x (goal: at most 2x) -> {'met' if ratio <= 2 else 'NOT met'}; "
              f"peak {peak:.0f} MB (goal: under 300 MB) -> {'met' if peak < 300 else 'NOT met'}")


if __name__ == "__main__":
    main()
