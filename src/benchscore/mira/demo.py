"""`benchscore demo` for mira: score the bundled demo (every status), project it, build judge packets."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from benchscore.common.atomic import atomic_write_json
from benchscore.common.provenance import provenance, recording
from benchscore.common.terminal import print_line

from .formats import ScoreOutput
from .judge import build_packets
from .projection import project
from .records import load_contract, load_repetitions
from .terminal import print_score


def data_path(name: str) -> Path:
    """Path of a bundled demo file (contract.json, repetitions.jsonl, deviations.json, observations.jsonl, ...)."""
    return Path(str(resources.files("benchscore.mira") / "data" / name))


def run_demo(out_dir: Path) -> None:
    """Score the bundled demo (its judge measured against the bundled calibration set) and its incomplete
    variant, project it, calibrate it; print the whole score."""
    from . import cli
    from .cli import run_calibrate, run_score

    out_dir.mkdir(parents=True, exist_ok=True)
    for name in ("contract.json", "repetitions.jsonl", "repetitions_incomplete.jsonl", "deviations.json",
                 "observations.jsonl", "judge_calibration.jsonl"):
        shutil.copyfile(data_path(name), out_dir / name)
    c, r, d = out_dir / "contract.json", out_dir / "repetitions.jsonl", out_dir / "deviations.json"
    k = out_dir / "judge_calibration.jsonl"  # the verdicts a careful reader gives the demo's judge packets
    with recording("benchscore mira score", cli.score, contract=c, repetitions=r, deviations=d, judge_calibration=k,
                   output=out_dir / "score.json"):
        out = run_score(c, r, out_dir / "score.json", d, calibration_path=k)
    with recording("benchscore mira score", cli.score, contract=c, repetitions=out_dir / "repetitions_incomplete.jsonl",
                   deviations=d, output=out_dir / "score_incomplete.json"):
        inc = run_score(c, out_dir / "repetitions_incomplete.jsonl", out_dir / "score_incomplete.json", d)
    sc = ScoreOutput.model_validate(out)
    public = project(sc, deviations=out["deviations"])
    with recording("benchscore mira project", cli.project, score_path=out_dir / "score.json",
                   output=out_dir / "public.json"):
        public["provenance"] = provenance(f"mira:{sc.benchmark_id}@{sc.contract_version}/public",
                                          {"score": out_dir / "score.json"})
    atomic_write_json(out_dir / "public.json", public)
    loaded = load_contract(c)
    reps = load_repetitions(r, loaded)
    packets = build_packets(loaded.sha256, loaded.cases, reps.records)
    with recording("benchscore mira calibrate", cli.calibrate, contract=c, observations=out_dir / "observations.jsonl",
                   output=out_dir / "contract_calibrated.json"):
        run_calibrate(c, out_dir / "observations.jsonl", None, out_dir / "contract_calibrated.json")

    print_score(out)
    print_line(f"without ADV-03's rerun the score is {inc['status']}: "
               + "; ".join(f"{m['case_id']}: {m['missing']}" for m in inc["missing"]))
    print_line(f"{len(packets)} judge packets could be built; wrote score.json, score_incomplete.json, "
               f"public.json, contract_calibrated.json in {out_dir}")
