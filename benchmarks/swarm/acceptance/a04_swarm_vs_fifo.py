"""A04 benchmark: pheromone-driven claiming (the swarm's pool) against a FIFO queue.

Workload (see benchscore.swarm.accept.a04): seeded root tasks of hidden quality in [0.3, 0.8],
a fraction broken (fail every attempt), each completion spawns a refinement (+step quality);
converged when a task with score >= target is done. Each execution sleeps --work-ms (the
stand-in for a model call), so wall time mostly follows executions.

Prints, per seed and in total: executions and seconds to convergence, accepted score after the
same execution budget, for swarm and FIFO side by side, and the ratios. The ablation column runs
the same pool with the trail switched off (refinements start at P_t = 0): it separates the effect
of the pheromone rule from the store.

    .venv/bin/python benchmarks/swarm/acceptance/a04_swarm_vs_fifo.py --seeds 10
    .venv/bin/python benchmarks/swarm/acceptance/a04_swarm_vs_fifo.py --store postgresql://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import statistics

from benchscore.swarm.accept.a04 import Workload, a04_pass, run_fifo, run_swarm_strategy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--roots", type=int, default=20)
    ap.add_argument("--broken", type=float, default=0.2)
    ap.add_argument("--work-ms", type=float, default=2.0)
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--store", default=None, help="pool URL for the swarm side (default: a temporary SQLite file)")
    a = ap.parse_args()
    rows = []
    ablation = []
    print(f"{'seed':>4} | {'swarm exec':>10} {'fifo exec':>9} | {'swarm s':>8} {'fifo s':>8} | "
          f"{'swarm acc@B':>11} {'fifo acc@B':>10} | {'no-trail exec':>13} | A04")
    for seed in range(1, a.seeds + 1):
        w = Workload(roots=a.roots, broken_fraction=a.broken, work_s=a.work_ms / 1000, budget=a.budget, seed=seed)
        s = run_swarm_strategy(w, a.store)
        f = run_fifo(w)
        n = run_swarm_strategy(w, a.store, trail=False)
        rows.append((s, f))
        ablation.append(n)
        fmt = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))  # noqa: E731
        print(f"{seed:>4} | {fmt(s.executions_to_convergence):>10} {fmt(f.executions_to_convergence):>9} | "
              f"{fmt(s.seconds_to_convergence):>8} {fmt(f.seconds_to_convergence):>8} | "
              f"{s.accepted_score_at_budget:>11.3f} {f.accepted_score_at_budget:>10.3f} | "
              f"{fmt(n.executions_to_convergence):>13} | {'PASS' if a04_pass(s, f) else 'FAIL'}")
    both = [(s, f) for s, f in rows if s.executions_to_convergence and f.executions_to_convergence]
    if both:
        ex = statistics.mean(f.executions_to_convergence / s.executions_to_convergence for s, f in both)
        sec = statistics.mean(f.seconds_to_convergence / s.seconds_to_convergence for s, f in both)
        print(f"\nmean FIFO/swarm ratio over {len(both)} seeds where both converged: executions {ex:.2f}x, "
              f"seconds {sec:.2f}x")
    print(f"mean accepted score at budget {a.budget}: swarm "
          f"{statistics.mean(s.accepted_score_at_budget for s, _ in rows):.3f}, "
          f"FIFO {statistics.mean(f.accepted_score_at_budget for _, f in rows):.3f}")
    conv = [n.executions_to_convergence for n in ablation if n.executions_to_convergence]
    if conv:
        print(f"ablation (same pool, no trail): mean executions to convergence {statistics.mean(conv):.1f} "
              f"over {len(conv)} converged seeds; swarm "
              f"{statistics.mean(s.executions_to_convergence for s, _ in rows if s.executions_to_convergence):.1f}, "
              f"FIFO {statistics.mean(f.executions_to_convergence for _, f in rows if f.executions_to_convergence):.1f}")
    print(f"converged: swarm {sum(s.executions_to_convergence is not None for s, _ in rows)}/{len(rows)}, "
          f"FIFO {sum(f.executions_to_convergence is not None for _, f in rows)}/{len(rows)}; "
          f"A04_PASS {sum(a04_pass(s, f) for s, f in rows)}/{len(rows)}")
    print("(2-core machine shared with other engineers: the seconds are noisy; executions are exact)")


if __name__ == "__main__":
    main()
