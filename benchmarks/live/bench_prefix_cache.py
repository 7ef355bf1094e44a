"""What prompt caching across shared prefixes changes, against the live gateway.

    nice .venv/bin/python benchmarks/live/bench_prefix_cache.py [--model M] [--questions 6]

llama-cpp-python's server keeps the KV state of the last prompt and evaluates only the part of the next
prompt after their longest common prefix. rxn questions of one condition table share their head (the
instructions, the reaction SMILES and the fixed conditions); the bundled single_varying set lists them
table by table. The same questions are sent (structured, as `rxn predict` sends them) in dataset order
and then interleaved with questions of other tables, so that consecutive prompts share only the generic
instructions; then dataset order again (ABA: drift in the machine's speed shows). Prints each pass's
mean latency and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from benchscore.common.llm import LLMClient
from benchscore.common.terminal import print_table
from benchscore.rxn.cli import load_inputs, run_build_mc
from benchscore.rxn.conventions import DEFAULT_MAX_OPTIONS, DEFAULT_SEED
from benchscore.rxn.predict import answer_format
from benchscore.rxn.prompts import render, structured_suffix


def common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8090/v1")
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--questions", type=int, default=6)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        loaded, meta = load_inputs((), ("buchwald_hartwig",), None)
        folder, _ = run_build_mc(Path(tmp), loaded, meta, seed=DEFAULT_SEED, max_options=DEFAULT_MAX_OPTIONS,
                                 command="bench")
        samples = json.loads((folder / "multiple_choice_single_varying.json").read_text())["samples"]
    by_table: dict[str, list[dict]] = {}
    for s in samples:
        by_table.setdefault(s["id"].rsplit(":", 1)[0], []).append(s)
    tables = [t for t in by_table.values() if len(t) >= 2]
    k = args.questions // 2
    grouped = tables[0][:k] + tables[1][:k]  # two tables, their questions consecutive
    interleaved = [x for pair in zip(tables[0][:k], tables[1][:k], strict=True) for x in pair]
    passes = (("dataset order (same table consecutive)", grouped), ("interleaved tables", interleaved),
              ("dataset order again", grouped))
    rows = []
    with LLMClient(args.base_url, timeout=600) as client:
        client.constraint_for(args.model)
        client.chat(args.model, [{"role": "user", "content": "Say OK."}], max_tokens=2)  # load the model
        for name, order in passes:
            prompts = [render(s) + structured_suffix(s) for s in order]
            shared = [common_prefix(a, b) / len(b) for a, b in zip(prompts, prompts[1:], strict=False)]
            latencies = []
            for s, prompt in zip(order, prompts, strict=True):
                fmt = answer_format(s)
                t0 = time.perf_counter()
                client.chat(args.model, [{"role": "user", "content": prompt}], answer_format=fmt,
                            max_tokens=fmt.max_tokens)
                latencies.append(time.perf_counter() - t0)
            rows.append((name, len(order), statistics.mean(shared), statistics.mean(latencies[1:]),
                         statistics.median(latencies[1:])))
    print_table(f"{args.model}: prompt prefix reuse (first call of each pass left out of the means)",
                ("order", "questions", "mean shared prefix (chars, of the prompt)", "mean latency s",
                 "median latency s"), rows, digits=3)
    print(f"interleaved / dataset order mean latency: {rows[1][3] / ((rows[0][3] + rows[2][3]) / 2):.2f}")


if __name__ == "__main__":
    main()
