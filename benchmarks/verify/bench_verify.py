"""Benchmark (issue 16): ``benchscore verify demo-out/`` against running ``benchscore demo``.

    .venv/bin/python benchmarks/verify/bench_verify.py [--repeat 3]

Both as subprocesses (as a user runs them; start-up included), side by side, best of ``--repeat``:
``benchscore demo --output-dir DIR`` (every domain, the swarm's acceptance matrix included), then
``benchscore verify DIR`` (every output under it: the rxn builds and evaluations, the mira scores,
projection and calibration, the tcsexam references, Solver scores and index are re-run; the swarm's
outputs are measurements and only say why they cannot be recomputed). Goal: verify under 0.5 x the demo.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHSCORE = [sys.executable, "-c", "from benchscore.cli import main; main()"]


def timed(args: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run([*BENCHSCORE, *args], capture_output=True, text=True,
                          env={**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}, timeout=900)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
    return seconds, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    demo_s, verify_s = [], []
    last = ""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "demo-out"
        for _ in range(args.repeat):
            demo_s.append(timed(["demo", "--output-dir", str(out)])[0])
            seconds, last = timed(["verify", str(out)])
            verify_s.append(seconds)
    print(f"benchscore demo:   {min(demo_s):.2f} s (best of {args.repeat}; all {', '.join(f'{t:.2f}' for t in demo_s)})")
    print(f"benchscore verify: {min(verify_s):.2f} s (all {', '.join(f'{t:.2f}' for t in verify_s)}): "
          f"{last.strip().splitlines()[-1]}")
    ratio = min(verify_s) / min(demo_s)
    print(f"ratio verify/demo: {ratio:.2f}x   goal < 0.5x: {'met' if ratio < 0.5 else 'NOT met'}")
    print("(2-core shared machine: figures are noisy)")


if __name__ == "__main__":
    main()
