"""rxn predict against a live OpenAI-compatible server: throughput and harness overhead.

    nice .venv/bin/python benchmarks/live/bench_predict.py [--base-url http://127.0.0.1:8090/v1]
        [--model M] [--questions 16] [--max-tokens 16] [--concurrency 1,4,16]

Needs the live gateway (``scripts/live-gateway.sh start``) and ``openai`` (the ``live`` extra). The
questions are the first ``--questions`` of the multiple-choice ``all_varying`` set built from the bundled
deoxyfluorination tables. Prints:

1. ``benchscore rxn predict`` (in-process, the whole command) at each ``--concurrency``: predictions/s,
   the run's wall time, and the sum of the model calls' latencies (from the audit records);
2. the same prompts sent one at a time through ``benchscore.common.llm.LLMClient`` and through the plain
   ``openai`` client, two passes each in the order LLMClient, openai, openai, LLMClient (no prompt twice in
   a row, so a server's prompt cache favours neither); the ratio of their total times;
3. the harness overhead of ``rxn predict`` at concurrency 1: (command wall time - sum of call latencies)
   / sum of call latencies, against the goal of under 5 %, and the part of it spent around the calls
   (prompt, parsing, audit, saving). A one-question warm-up run first imports the command's modules.

A shared 2-core machine is noisy: run it with ``nice`` and read the figures as rough.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.common.llm import LLMClient, LLMError
from benchscore.common.terminal import print_table
from benchscore.rxn.cli import load_inputs, run_build_mc
from benchscore.rxn.conventions import DEFAULT_MAX_OPTIONS, DEFAULT_SEED
from benchscore.rxn.prompts import render

GOAL_OVERHEAD = 0.05


def build_dataset(root: Path, question_type: str = "all_varying") -> Path:
    loaded, meta = load_inputs((), ("deoxyfluorination",), None)
    folder, _ = run_build_mc(root, loaded, meta, seed=DEFAULT_SEED, max_options=DEFAULT_MAX_OPTIONS, command="bench")
    return folder / f"multiple_choice_{question_type}.json"


def run_predict(dataset: Path, out: Path, base_url: str, model: str, n: int, max_tokens: int,
                concurrency: int, constraint: str = "auto") -> dict:
    t0 = time.perf_counter()
    r = CliRunner().invoke(cli, ["rxn", "predict", "--dataset", str(dataset), "--base-url", base_url, "--model",
                                 model, "--output", str(out), "--limit", str(n), "--max-tokens", str(max_tokens),
                                 "--concurrency", str(concurrency), "--constraint", constraint, "--timeout", "600"])
    wall = time.perf_counter() - t0
    if r.exit_code not in (0, 1):
        sys.exit(f"rxn predict failed: {r.stderr or r.output}")
    audit = json.loads(out.with_name(f"{out.stem}.audit.json").read_text())
    latencies = [c["record"]["latency_s"] for c in audit["calls"]]
    probe = (audit["runs"][-1].get("constraint") or {}).get("latency_s", 0.0)
    return {"wall": wall, "run_wall": audit["runs"][-1]["wall_time_s"], "latency_sum": sum(latencies) + probe,
            "probe_s": probe, "mode": (audit["runs"][-1].get("constraint") or {}).get("mode"),
            "asked": audit["summary"]["asked"], "failed": audit["summary"]["failed"],
            "tokens_out": audit["summary"]["tokens_out"]}


def compare_clients(prompts: list[str], base_url: str, model: str, max_tokens: int) -> dict:
    import openai

    plain = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    ours = LLMClient(base_url, max_retries=0)
    t_ours = t_plain = 0.0
    tok_ours = tok_plain = 0
    messages_of = [[{"role": "user", "content": p}] for p in prompts]

    def via_ours(messages):
        res = ours.chat(model, messages, max_tokens=max_tokens, temperature=0.0)
        return res.record.tokens_out or 0

    def via_plain(messages):
        res = plain.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens, temperature=0.0)
        return res.usage.completion_tokens if res.usage else 0

    # passes in the order ours, plain, plain, ours (ABBA): no prompt is sent twice in a row (a server's prompt
    # cache would favour the second), and drift in the server's speed affects both clients alike
    for name, fn in (("ours", via_ours), ("plain", via_plain), ("plain", via_plain), ("ours", via_ours)):
        for messages in messages_of:
            t0 = time.perf_counter()
            tokens = fn(messages)
            dt = time.perf_counter() - t0
            if name == "ours":
                t_ours, tok_ours = t_ours + dt, tok_ours + tokens
            else:
                t_plain, tok_plain = t_plain + dt, tok_plain + tokens
    ours.close()
    plain.close()
    return {"ours": t_ours, "plain": t_plain, "tokens_ours": tok_ours, "tokens_plain": tok_plain}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8090/v1")
    ap.add_argument("--model", help="default: the first model the server lists")
    ap.add_argument("--questions", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument("--constraint", default="auto", choices=["auto", "none"],
                    help="auto: structured answers where the server enforces a schema (the probe's calls count as "
                         "model time); none: free text")
    ap.add_argument("--set", default="all_varying", help="the MC question type (default all_varying)")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]

    try:
        with LLMClient(args.base_url, max_retries=1) as client:
            models = client.list_models()
            model = args.model or models[0]
            client.chat(model, [{"role": "user", "content": "Say OK."}], max_tokens=4)  # warm-up
    except (LLMError, IndexError) as exc:
        sys.exit(f"the live server at {args.base_url} is not usable ({exc}); start it: scripts/live-gateway.sh start")

    with tempfile.TemporaryDirectory() as tmp:
        dataset = build_dataset(Path(tmp), args.set)
        samples = json.loads(dataset.read_text())["samples"][: args.questions]
        n = len(samples)
        # warm-up: the command's modules are imported once per process, not per run
        run_predict(dataset, Path(tmp) / "warm-up.json", args.base_url, model, 1, args.max_tokens, 1, args.constraint)
        runs = {c: run_predict(dataset, Path(tmp) / f"pred-c{c}.json", args.base_url, model, n, args.max_tokens, c,
                               args.constraint) for c in levels}
        clients = compare_clients([render(s) for s in samples], args.base_url, model, args.max_tokens)

    rows = [(f"rxn predict --concurrency {c}", r["asked"], r["failed"], r["wall"], r["latency_sum"],
             r["asked"] / r["wall"], r["tokens_out"]) for c, r in runs.items()]
    print_table(f"{model} at {args.base_url}: {n} questions of {args.set}, --max-tokens {args.max_tokens}, "
                f"answered under {runs[levels[0]]['mode']}",
                ("path", "asked", "failed", "wall s", "sum of call latencies s", "predictions/s", "tokens out"),
                rows, digits=3)
    ratio = clients["ours"] / clients["plain"]
    print_table("the same prompts one at a time, two passes per client (order: LLMClient, openai, openai, LLMClient)",
                ("client", "total s", "tokens out", "per call s"),
                [("benchscore.common.llm.LLMClient", clients["ours"], clients["tokens_ours"], clients["ours"] / (2 * n)),
                 ("openai.OpenAI", clients["plain"], clients["tokens_plain"], clients["plain"] / (2 * n))], digits=3)
    base = runs[levels[0]]
    overhead = (base["wall"] - base["latency_sum"]) / base["latency_sum"]
    run_overhead = (base["run_wall"] - base["latency_sum"]) / base["latency_sum"]
    print(f"LLMClient / openai time ratio: {ratio:.3f}")
    for c in levels[1:]:
        print(f"predictions/s at concurrency {c} / at {levels[0]}: "
              f"{(runs[c]['asked'] / runs[c]['wall']) / (base['asked'] / base['wall']):.2f}")
    print(f"rxn predict harness overhead at concurrency {levels[0]}, as a share of the model's time (sum of call "
          f"latencies {base['latency_sum']:.3f} s): whole command {overhead:.1%} (of which reading and validating "
          f"the dataset, model discovery and the final table {base['wall'] - base['run_wall']:.3f} s), around the "
          f"calls {run_overhead:.1%}; goal < {GOAL_OVERHEAD:.0%}: {'PASS' if overhead < GOAL_OVERHEAD else 'FAIL'}")


if __name__ == "__main__":
    main()
