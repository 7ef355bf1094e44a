"""Benchmark: `mira from-inspect` on an inspect_ai log of 10,000 samples x 3 epochs, against inspect_ai's
own `read_eval_log` of the same log (issue 17: goal under 1.5x; the reading is inspect_ai's, the
mapping must not dominate).

    .venv/bin/python benchmarks/mira/bench_from_inspect.py [--samples 10000] [--epochs 3] [--runs 3] [--real]
        [--keep-log PATH | --log PATH]

The log: a real evaluation of 40 samples x 3 epochs with the offline `mockllm/model` provider (an
answer scorer with metadata, one sample whose sandbox fails on epoch 2, one that hits the time
limit), whose samples are then copied under new ids up to ``--samples`` and written by inspect_ai's
own `write_eval_log` (a `.eval` log inspect_ai reads like any other). With ``--real`` the whole
evaluation is run instead (about 10 minutes on 2 cores at 10,000 samples). Writing the copied log
takes minutes too (20 on a busy machine): ``--keep-log PATH`` keeps it, ``--log PATH`` times a log
made before (of ``case-NNNNN`` samples, as this script makes them).

Each timing runs in a fresh process, alternating, ``--runs`` times; the medians are printed with
their ratio: `read_eval_log(log)` (every sample, as inspect_ai reads a log), then
`benchscore mira from-inspect` end to end (read the mapping and contract, sha256 the log, read
header, summaries and samples through inspect_ai in batches, convert, write the JSONL), and, for
where the time goes, the same reading alone (no conversion, nothing written).
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


def make_log(folder: Path, samples: int, epochs: int, real: bool) -> Path:
    script = folder / "task.py"
    script.write_text(TASK)
    run_dir = folder / "run"
    subprocess.run([sys.executable, "-W", "ignore", str(script), str(run_dir), str(samples if real else 40),
                    str(epochs)], check=True)
    (log,) = run_dir.glob("*.eval")
    if real:
        return log
    from inspect_ai.log import read_eval_log, write_eval_log
    from shortuuid import uuid

    base = read_eval_log(str(log))
    out = []
    for copy in range(-(-samples // 40)):
        for s in base.samples:
            n = int(str(s.id).split("-")[1]) + 40 * copy
            if n < samples:
                out.append(s.model_copy(update={"id": f"case-{n:05d}", "uuid": uuid()}))
    base.samples = sorted(out, key=lambda s: (s.epoch, s.id))
    base.eval.dataset.samples = samples
    base.eval.dataset.sample_ids = [f"case-{n:05d}" for n in range(samples)]
    big = folder / f"bench-{samples}x{epochs}.eval"
    write_eval_log(base, str(big))
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


PROBES = {
    "read_eval_log": "from inspect_ai.log import read_eval_log\nlog = read_eval_log({log!r})\nn = len(log.samples)",
    "from-inspect": ("from pathlib import Path\nfrom benchscore.mira.cli import run_from_inspect\n"
                     "conv = run_from_inspect([Path({log!r})], Path({contract!r}), Path({mapping!r}), Path({out!r}))\n"
                     "n = len(conv.records) + len(conv.left_out)"),
    "reading alone": ("from pathlib import Path\nfrom benchscore.common.inspect_logs import iter_samples, read_header\n"
                      "read_header(Path({log!r}))\nn = sum(1 for _ in iter_samples(Path({log!r})))"),
}


def timed(name: str, **paths: str) -> tuple[float, int]:
    code = ("import time, warnings\nwarnings.simplefilter('ignore')\nimport inspect_ai, benchscore.mira.cli\n"
            "t0 = time.perf_counter()\n" + PROBES[name].format(**paths) + "\nprint(time.perf_counter() - t0, n)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{proc.stderr[-3000:]}")
    out = proc.stdout.split()
    return float(out[-2]), int(out[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--real", action="store_true", help="run the whole evaluation instead of copying samples")
    ap.add_argument("--keep-log", type=Path, help="copy the log made here to this path")
    ap.add_argument("--log", type=Path, help="time this log (made by --keep-log) instead of making one")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        log = args.log or make_log(folder, args.samples, args.epochs, args.real)
        if args.keep_log is not None and args.log is None:
            shutil.copyfile(log, args.keep_log)
        contract, mapping = inputs(folder, args.samples)
        made = ("given with --log" if args.log else f"{'a real run' if args.real else 'a real run of 40 samples, copied'}"
                f"; made in {time.perf_counter() - t0:.1f} s")
        print(f"log: {log.name}, {log.stat().st_size / 1e6:.1f} MB, {args.samples} samples x {args.epochs} epochs "
              f"({made})", flush=True)
        paths = {"log": str(log), "contract": str(contract), "mapping": str(mapping), "out": str(folder / "r.jsonl")}
        times: dict[str, list[float]] = {name: [] for name in PROBES}
        for _ in range(args.runs):
            for name in PROBES:
                seconds, n = timed(name, **paths)
                assert n == args.samples * args.epochs, (name, n)
                times[name].append(seconds)
        base = statistics.median(times["read_eval_log"])
        print(f"{'step':<16}{'median s':>10}{'min s':>9}{'max s':>9}{'ratio':>8}   (runs: {args.runs}, fresh process each)")
        for name, values in times.items():
            med = statistics.median(values)
            print(f"{name:<16}{med:>10.2f}{min(values):>9.2f}{max(values):>9.2f}{med / base:>7.2f}x")
        ratio = statistics.median(times["from-inspect"]) / base
        print(f"from-inspect / read_eval_log: {ratio:.2f}x (goal: under 1.5x) -> {'met' if ratio < 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
