"""Benchmark (issue 31, point 5): `benchscore compare` of 10 inspect_ai logs x 10,000 samples x 3 epochs against
the bare read of the same ten logs, and `benchscore leaderboard` of 50 models x 10,000 samples, in one run.

    .venv/bin/python benchmarks/results/bench_leaderboard.py [--cache /tmp/benchscore-bench-leaderboard]
        [--repeat 1] [--resamples 10000] [--runs 3] [--jobs N] [--point-two-only]

Issue 37 point 2 first, side by side in one run (``--runs`` fresh processes each, alternating, medians and the
peak resident memory): the bare read of the ten logs, `compare` and `leaderboard` of them with ``--jobs 1`` and
``--jobs N`` (default: the cores) and `compare` with every sample parsed whole (the per-sample summaries not
read), whether their outputs are byte-identical, and the bare read of one log beside `mira from-inspect` of it.

The logs: one real evaluation of 40 samples with the offline `mockllm/model` provider (an answer scorer,
one sample whose sandbox fails on epoch 2, one that hits the time limit), expanded to 10,000 samples
by ``benchmarks/mira/bench_from_inspect.make_log`` (inspect_ai's own zip settings), then rewritten once
per model: the header's model and every sample's answer score (C with the model's accuracy, seeded).
They are made once and cached under ``--cache`` (about 10 minutes on two cores the first time).

Each probe runs as a fresh process (wall clock, interpreter start included), ``--repeat`` times, best kept:

- ``bare read``: open each zip, read, decompress (zstandard) and parse (orjson) every sample member;
- ``compare``: `benchscore compare FOLDER --output OUT` end to end (reading, dataset identity check,
  counts, the paired tests of 45 pairs, Holm, rank intervals, provenance hashes, the JSON written);
- ``leaderboard``: `benchscore leaderboard FOLDER --output-dir SITE` of 50 logs (1,225 pairs, rank
  intervals, the pages, leaderboard.json and 50 Every Eval Ever records validated against the schema),
  beside the bare read of those 50 logs.

Goals: compare < 30 s and at most 1.5x the bare read; the 50-model leaderboard < 20 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-W", "ignore", "-c", "from benchscore.cli import main; main()"]

BARE = '''
import struct, sys, zipfile, orjson, zstandard
from pathlib import Path
dctx = zstandard.ZstdDecompressor()
n = 0
for log in sorted(Path(sys.argv[1]).glob("*.eval")):
    with open(log, "rb") as fp:
        for info in zipfile.ZipFile(fp).infolist():
            if not info.filename.startswith("samples/"):
                continue
            fp.seek(info.header_offset)
            head = fp.read(30)
            fp.seek(info.header_offset + 30 + sum(struct.unpack("<HH", head[26:30])))
            orjson.loads(dctx.decompress(fp.read(info.compress_size), max_output_size=info.file_size))
            n += 1
print(n)
'''


def _make_log():
    spec = importlib.util.spec_from_file_location("bench_from_inspect", HERE.parent / "mira" / "bench_from_inspect.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.make_log


def variant(base: Path, out: Path, model: str, accuracy: float, seed: int) -> None:
    """``base`` with another model name and every sample x epoch's answer drawn anew (C with ``accuracy``):
    each ``"value":"C"`` / ``"value":"I"`` of a sample member (its score and its score event) is rewritten."""
    import re

    from inspect_ai._util.zipfile import zipfile_compress_kwargs

    rng = random.Random(seed)
    value = re.compile(rb'"value":"[CI]"')
    tmp = out.with_suffix(".tmp")
    drawn_of: dict[str, bytes] = {}  # sample member -> its drawn answer (the summaries say the same)
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(tmp, "w", **zipfile_compress_kwargs) as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.startswith("samples/"):
                drawn = b'"value":"C"' if rng.random() < accuracy else b'"value":"I"'
                drawn_of[name] = drawn
                data = value.sub(drawn, data)
            elif name == "summaries.json":
                data = b"[" + b",".join(value.sub(drawn_of[f"samples/{s['id']}_epoch_{s['epoch']}.json"],
                                                  json.dumps(s, separators=(",", ":")).encode())
                                        for s in json.loads(data)) + b"]"
            elif name == "header.json":
                doc = json.loads(data)
                doc["eval"]["model"] = model
                data = json.dumps(doc, separators=(",", ":")).encode()
            dst.writestr(name, data)
    tmp.replace(out)


def logs(cache: Path, models: int, samples: int, epochs: int, low: float, high: float) -> Path:
    folder = cache / f"{models}x{samples}x{epochs}"
    if folder.is_dir() and len(list(folder.glob("*.eval"))) == models:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        base = cache / f"base-{samples}x{epochs}.eval"
        if not base.is_file():
            made = _make_log()(Path(tmp), samples, epochs)
            made.replace(base)
        for k in range(models):
            accuracy = low + (high - low) * k / max(1, models - 1)
            variant(base, folder / f"model-{k:02d}.eval", f"mockllm/model-{k:02d}", accuracy, seed=k)
            print(f"  made {folder.name}/model-{k:02d}.eval ({time.perf_counter() - t0:.0f} s)", flush=True)
    return folder


def timed(argv: list[str], repeat: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, env=None)
        took = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:6])} ... failed:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
        best, out = min(best, took), proc.stdout
    return best, out


def run_once(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds (user + system), peak resident MB) of one fresh process, the workers it waited
    for included. On a shared machine the wall clock is mostly waiting for a core: the CPU seconds compare."""
    import os

    with tempfile.TemporaryFile() as errs:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errs,
                                env=dict(os.environ, SOURCE_DATE_EPOCH="1767225600"))  # outputs comparable
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - t0
        errs.seek(0)
        err = errs.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:8])} ... failed ({proc.returncode}):\n{err[-3000:]}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


#: `benchscore` with every sample of an inspect_ai log parsed whole (the per-sample summaries not read)
WHOLE = [sys.executable, "-W", "ignore", "-c",
         "from benchscore.results import inspect_adapter as A; A.USE_SUMMARIES = False; "
         "from benchscore.cli import main; main()"]


def point_two(ten: Path, runs: int, resamples: int, jobs: int) -> None:
    """Issue 37 point 2 side by side, in one run: the bare read of the ten logs, compare and leaderboard with
    --jobs 1 and --jobs N (and with every sample parsed whole), their outputs compared; the bare read of one
    log and `mira from-inspect` of it. Each probe a fresh process, alternating, ``runs`` times: medians."""
    import os
    import statistics

    spec = importlib.util.spec_from_file_location("bench_from_inspect", HERE.parent / "mira" / "bench_from_inspect.py")
    mira = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mira)  # type: ignore[union-attr]
    one = sorted(ten.glob("*.eval"))[0]
    members = sum(1 for p in ten.glob("*.eval") for n in zipfile.ZipFile(p).namelist() if n.startswith("samples/"))
    size = sum(p.stat().st_size for p in ten.glob("*.eval")) / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        contract, mapping = mira.inputs(Path(tmp), 10_000)
        common = ["--resamples", str(resamples)]
        probes = {
            "bare read (10 logs)": [sys.executable, "-c", BARE, str(ten)],
            "compare --jobs 1": [*CLI, "compare", str(ten), *common, "--jobs", "1", "--output", f"{tmp}/c1.json"],
            f"compare --jobs {jobs}": [*CLI, "compare", str(ten), *common, "--jobs", str(jobs),
                                       "--output", f"{tmp}/cN.json"],
            "compare --jobs 1, samples whole": [*WHOLE, "compare", str(ten), *common, "--jobs", "1",
                                                "--output", f"{tmp}/cw.json"],
            "leaderboard --jobs 1": [*CLI, "leaderboard", str(ten), *common, "--jobs", "1",
                                     "--output-dir", f"{tmp}/s1"],
            f"leaderboard --jobs {jobs}": [*CLI, "leaderboard", str(ten), *common, "--jobs", str(jobs),
                                           "--output-dir", f"{tmp}/sN"],
            "bare read (1 log)": [sys.executable, "-c", mira.BARE.format(log=str(one))],
            "mira from-inspect (1 log)": [*CLI, "mira", "from-inspect", str(one), "--contract", str(contract),
                                          "--mapping", str(mapping), "--output", f"{tmp}/r.jsonl", "--quiet"],
        }
        times: dict[str, list[float]] = {k: [] for k in probes}
        cpus: dict[str, list[float]] = {k: [] for k in probes}
        peaks: dict[str, list[float]] = {k: [] for k in probes}
        for _ in range(runs):
            for name, argv in probes.items():
                if "--output-dir" in argv:  # a leaderboard writes into a new folder or its own: start anew
                    shutil.rmtree(argv[argv.index("--output-dir") + 1], ignore_errors=True)
                took, cpu, peak = run_once(argv)
                print(f"    {name}: {took:.2f} s, cpu {cpu:.2f} s, {peak:.0f} MB", flush=True)
                times[name].append(took)
                cpus[name].append(cpu)
                peaks[name].append(peak)
        same = Path(f"{tmp}/c1.json").read_bytes() == Path(f"{tmp}/cN.json").read_bytes() == \
            Path(f"{tmp}/cw.json").read_bytes()
        site_same = all(Path(f"{tmp}/s1/{f}").read_bytes() == Path(f"{tmp}/sN/{f}").read_bytes()
                        for f in ("leaderboard.json", "index.html"))
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    print(f"issue 37 point 2: 10 logs x 10,000 samples x 3 epochs ({members} sample members, {size:.0f} MB), "
          f"{runs} run(s) each, fresh process, alternating; load average {os.getloadavg()[0]:.2f}")
    print(f"  {'probe':<34}{'wall s':>8}{'min s':>8}{'max s':>8}{'ratio':>8}{'cpu s':>8}{'ratio':>8}{'peak MB':>9}")
    for name in probes:
        base = "bare read (1 log)" if "1 log" in name else "bare read (10 logs)"
        print(f"  {name:<34}{med[name]:>8.2f}{min(times[name]):>8.2f}{max(times[name]):>8.2f}"
              f"{med[name] / med[base]:>7.2f}x{cpu[name]:>8.2f}{cpu[name] / cpu[base]:>7.2f}x{max(peaks[name]):>9.0f}")
    print("  (wall: medians, with their min and max; cpu: user + system seconds of the process and its workers)")
    print(f"  compare --jobs 1 / --jobs {jobs}: {med['compare --jobs 1'] / med[f'compare --jobs {jobs}']:.2f}x; "
          f"leaderboard: {med['leaderboard --jobs 1'] / med[f'leaderboard --jobs {jobs}']:.2f}x")
    print(f"  outputs: compare --jobs 1, --jobs {jobs} and with samples whole byte-identical: {same}; "
          f"leaderboard sites (leaderboard.json, index.html) identical: {site_same}")
    print("  goals: compare and leaderboard at most 1.0x the bare read, mira from-inspect at most 1.5x, "
          "peak under 300 MB")


def main() -> None:
    import os

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/benchscore-bench-leaderboard"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3, help="runs of each probe of issue 37 point 2 (medians)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="--jobs N of the parallel probes")
    ap.add_argument("--point-two-only", action="store_true",
                    help="only the probes of issue 37 point 2 (the ten logs; not the 50-log leaderboard)")
    args = ap.parse_args()
    ten = logs(args.cache, 10, 10_000, 3, 0.60, 0.70)
    point_two(ten, args.runs, args.resamples, args.jobs)
    if args.point_two_only:
        return
    fifty = logs(args.cache, 50, 10_000, 1, 0.60, 0.70)
    with tempfile.TemporaryDirectory() as tmp:
        bare10, n = timed([sys.executable, "-c", BARE, str(ten)], args.repeat)
        size = sum(p.stat().st_size for p in ten.glob("*.eval")) / 1e6
        cmp_s, _ = timed([*CLI, "compare", str(ten), "--resamples", str(args.resamples),
                          "--output", f"{tmp}/c.json"], args.repeat)
        doc = json.loads(Path(f"{tmp}/c.json").read_text())
        bare50, n50 = timed([sys.executable, "-c", BARE, str(fifty)], args.repeat)
        lb_s, _ = timed([*CLI, "leaderboard", str(fifty), "--resamples", str(args.resamples),
                         "--output-dir", f"{tmp}/site"], 1)
        board = json.loads(Path(f"{tmp}/site/leaderboard.json").read_text())
    ratio = cmp_s / bare10
    print(f"10 logs x 10,000 samples x 3 epochs ({int(n)} sample members, {size:.0f} MB), best of {args.repeat}:")
    print(f"  bare read of the ten logs: {bare10:.2f} s")
    print(f"  benchscore compare (end to end, {len(doc['comparisons'])} pairs, "
          f"{len(doc['comparisons'][0]['metrics'])} metric(s)): {cmp_s:.2f} s = {ratio:.2f}x the bare read   "
          f"goal < 30 s and <= 1.5x: {'met' if cmp_s < 30 and ratio <= 1.5 else 'NOT met'}")
    rows = board["metrics"][0]["rows"]
    print(f"50 logs x 10,000 samples x 1 epoch ({int(n50)} sample members):")
    print(f"  bare read of the fifty logs: {bare50:.2f} s")
    print(f"  benchscore leaderboard (end to end, {len(rows) * (len(rows) - 1) // 2} pairs, rank intervals, "
          f"pages, records): {lb_s:.2f} s = {lb_s / bare50:.2f}x the bare read   goal < 20 s: "
          f"{'met' if lb_s < 20 else 'NOT met'}")
    print("  top rows: " + "; ".join(f"{r['label']} {r['value']:.4f} rank {r['rank_range'][0]}-{r['rank_range'][1]}"
                                      for r in rows[:3]))
    print("  (2-core shared machine: figures are noisy)")




if __name__ == "__main__":
    main()
