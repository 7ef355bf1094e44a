"""Start-up time of the console scripts against a bare Python, measured side by side in one run.

    python benchmarks/cli/startup.py [--runs 15]

Prints, for each command, the median and best wall time of ``--runs`` fresh processes (after one
warm-up run each, so the file cache is warm) and the ratio to ``python -c pass``. Goal (issue 10):
``benchscore --help`` and ``tcsexam --help`` under 0.3 s and under 5x bare Python. The commands run
interleaved (one of each per round) so that load from other work on the machine hits them alike.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "benchscore --help": [str(BIN / "benchscore"), "--help"],
    "tcsexam --help": [str(BIN / "tcsexam"), "--help"],
    "benchscore tcsexam --help": [str(BIN / "benchscore"), "tcsexam", "--help"],
    "benchscore mira --help": [str(BIN / "benchscore"), "mira", "--help"],
    "benchscore rxn --help": [str(BIN / "benchscore"), "rxn", "--help"],
    "benchscore swarm --help": [str(BIN / "benchscore"), "swarm", "--help"],
}


def once(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():
        once(argv)  # warm-up
    for _ in range(args.runs):
        for name, argv in COMMANDS.items():
            times[name].append(once(argv))
    base = statistics.median(times["python -c pass"])
    print(f"{'command':<28}{'median s':>10}{'best s':>9}{'x python':>10}  goal")
    for name, ts in times.items():
        med = statistics.median(ts)
        goal = ""
        if name in ("benchscore --help", "tcsexam --help"):
            goal = "met" if med < 0.3 and med / base < 5 else "NOT met (< 0.3 s and < 5x)"
        print(f"{name:<28}{med:>10.3f}{min(ts):>9.3f}{med / base:>10.1f}  {goal}")


if __name__ == "__main__":
    main()
