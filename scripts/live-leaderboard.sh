#!/usr/bin/env bash
# A first real leaderboard: every model the live gateway serves answers the same questions of every
# bundled multiple-choice set (and the fill-in-blank sets) with structured output, `rxn eval-mc` /
# `rxn eval-fib` score them, the mira judge runs with each model on the demo packets, and
# `benchscore report` draws it all on one page.
#
#   scripts/live-gateway.sh start
#   scripts/live-leaderboard.sh            # writes out/leaderboard/ (report.html, evaluations, verdicts, timings)
#
# Environment: LIMIT (questions per set, default 20), FIB_LIMIT (default 4), OUT (default out/leaderboard),
# MODELS (space-separated ids; default: every model GET /v1/models lists), BENCHSCORE_LIVE_URL
# (default http://127.0.0.1:8090/v1), SETS (MC question types; default all six), BENCHSCORE_VENV.
#
# Calls are ordered by model (the llama-cpp-python gateway holds one model at a time and reloads on a switch).
# Step 5 puts the models side by side with `benchscore compare` (intervals, tests, tie groups).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${BENCHSCORE_VENV:-.venv}
BS="$VENV/bin/benchscore"
URL=${BENCHSCORE_LIVE_URL:-http://127.0.0.1:8090/v1}
OUT=${OUT:-out/leaderboard}
LIMIT=${LIMIT:-20}
FIB_LIMIT=${FIB_LIMIT:-4}
SETS=${SETS:-"single_varying all_varying single_varying_reference all_varying_reference single_varying_reference_control all_varying_reference_control"}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600}
t0=$(date +%s)

if [ -z "${MODELS:-}" ]; then
  MODELS=$("$VENV/bin/python" - "$URL" <<'PY'
import sys
from benchscore.common.llm import LLMClient
with LLMClient(sys.argv[1], max_retries=1, timeout=120) as c:
    print(" ".join(c.list_models()))
PY
)
fi
echo "leaderboard: models $MODELS at $URL; $LIMIT questions per MC set, $FIB_LIMIT per FIB set"

# 1. the question sets: every bundled dataset, the default seed (byte-identical for everyone)
rm -rf "$OUT/sets"
"$BS" rxn build-mc --output-dir "$OUT/sets" >/dev/null
"$BS" rxn build-fib --output-dir "$OUT/sets" >/dev/null
MC=$(ls -d "$OUT"/sets/*_multiple_choice)
FIB=$(ls -d "$OUT"/sets/*_fill_in_blank)
"$BS" mira judge-packets --contract examples/mira/contract.json \
  --repetitions examples/mira/repetitions_unjudged.jsonl --output-dir "$OUT/packets.tmp" >/dev/null
rm -rf "$OUT/packets" && mv "$OUT/packets.tmp" "$OUT/packets"

outputs=()
for m in $MODELS; do
  mdir="$OUT/$m"
  mkdir -p "$mdir"
  ts=$(date +%s)
  # 2. every MC set, then the FIB sets, structured where the gateway enforces a schema (--constraint auto)
  mc_args=() mc_preds=()
  for q in $SETS; do
    ds="$MC/multiple_choice_$q.json"
    "$BS" rxn predict --dataset "$ds" --base-url "$URL" --model "$m" --limit "$LIMIT" --timeout 600 \
      --output "$mdir/pred_mc_$q.json" >"$mdir/predict_mc_$q.log" 2>&1 || echo "  $m $q: predict exit $? (see $mdir/predict_mc_$q.log)"
    "$BS" rxn eval-mc --dataset "$ds" --prediction "$mdir/pred_mc_$q.json" --output "$mdir/eval_mc_$q.json" >/dev/null
    outputs+=("$mdir/eval_mc_$q.json")
  done
  for q in all_blank all_blank_reference; do
    ds="$FIB/fill_in_blank_$q.json"
    "$BS" rxn predict --dataset "$ds" --base-url "$URL" --model "$m" --limit "$FIB_LIMIT" --timeout 600 \
      --output "$mdir/pred_fib_$q.json" >"$mdir/predict_fib_$q.log" 2>&1 || echo "  $m $q: predict exit $? (see $mdir/predict_fib_$q.log)"
    "$BS" rxn eval-fib --dataset "$ds" --prediction "$mdir/pred_fib_$q.json" --output "$mdir/eval_fib_$q.json" >/dev/null
    outputs+=("$mdir/eval_fib_$q.json")
  done
  # 3. the mira judge on the demo packets, measured against the bundled calibration set (the verdicts a careful
  # reader gives the same 8 packets): exit 1 when a packet is judge_failed (reported, not fatal)
  "$BS" mira judge --calibration examples/mira/judge_calibration.jsonl --base-url "$URL" --model "$m" --timeout 600 \
    --output "$mdir/verdicts.json" --report "$mdir/judge_report.json" >"$mdir/judge.log" 2>&1 ||
    echo "  $m: mira judge exit $? (judge_failed packets; see $mdir/judge.log)"
  # the verdicts scored with the demo's repetitions, the judge beside the score: the report draws that score
  # (incomplete where judge_failed)
  "$BS" mira score --contract examples/mira/contract.json --repetitions examples/mira/repetitions_unjudged.jsonl \
    --verdicts "$mdir/verdicts.json" --judge-calibration examples/mira/judge_calibration.jsonl \
    --output "$mdir/mira_score.json" --quiet ||
    [ $? -eq 1 ]  # exit 1: the score is incomplete (judge_failed packets), still written and drawn
  outputs+=("$mdir/mira_score.json")
  echo "$m: $(( $(date +%s) - ts )) s"
done

# 4. one line per model and set: the leaderboard table (also in $OUT/leaderboard.md). eval-mc scores the whole
# set (the questions not asked count as missing); the table's figures are over the questions asked.
"$VENV/bin/python" - "$OUT" $MODELS <<'PY'
import json, sys
from pathlib import Path
out, models = Path(sys.argv[1]), sys.argv[2:]
rows = ["| model | set | asked | invalid | relative score (mean over asked) | exact match (asked) | answered under |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
for m in models:
    for f in sorted((out / m).glob("eval_*.json")):
        doc = json.loads(f.read_text())
        recs = [r for rs in doc["per_sample"].values() for r in rs if r["status"] != "missing"]
        scored = [r["relative_score"] for r in recs if r["relative_score"] is not None]
        exact = [r.get("exact_match") for r in recs if "exact_match" in r]
        audit = json.loads((out / m / f"pred_{f.stem[5:]}.audit.json").read_text())
        mode = audit["runs"][-1].get("constraint", {}).get("mode", "?")
        rel = f"{sum(scored) / len(scored):.3f}" if scored else "-"
        em = f"{sum(1 for e in exact if e) / len(exact):.3f}" if exact else "-"
        rows.append(f"| {m} | {f.stem[5:]} | {len(recs)} | {sum(r['status'] == 'invalid' for r in recs)} | {rel} | "
                    f"{em} | {mode} |")
    v = json.loads((out / m / "verdicts.json").read_text())["verdicts"] if (out / m / "verdicts.json").exists() else []
    counts = {k: sum(x["verdict"] == k for x in v) for k in ("pass", "fail", "judge_failed")}
    rep = out / m / "judge_report.json"
    kappa = "-"
    if rep.exists():
        k = json.loads(rep.read_text())["agreement"]["kappa"]
        kappa = f"kappa {k['value']:.3g} " + (f"[{k['ci95'][0]:.3g}, {k['ci95'][1]:.3g}]" if k["ci95"] else
                                              f"(no interval: {k.get('ci_reason')})") if k["value"] is not None else \
            f"kappa undefined ({k.get('ci_reason')})"
    rows.append(f"| {m} | mira judge (demo packets) | {len(v)} | {counts['judge_failed']} judge_failed | "
                f"pass {counts['pass']}, fail {counts['fail']}; {kappa} | | "
                f"{v[0]['call'].get('constraint', '?') if v and v[0].get('call') else '?'} |")
(out / "leaderboard.md").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
PY

# 5. the models side by side with intervals and tie groups: `benchscore compare` pairs the questions (clustered
# by condition table), tests each difference, and groups the models no test separates (Holm, alpha 0.05)
for q in $SETS; do
  args=()
  for m in $MODELS; do args+=("$OUT/$m/eval_mc_$q.json"); done
  "$BS" compare "${args[@]}" --output "$OUT/compare_mc_$q.json" >"$OUT/compare_mc_$q.txt"
  outputs+=("$OUT/compare_mc_$q.json")
done
args=()
for m in $MODELS; do args+=("$OUT/$m/mira_score.json"); done
"$BS" compare "${args[@]}" --output "$OUT/compare_mira.json" >"$OUT/compare_mira.txt" ||
  echo "  compare of the judges' mira scores: exit $? (see $OUT/compare_mira.txt)"
[ -f "$OUT/compare_mira.json" ] && outputs+=("$OUT/compare_mira.json")
echo "compare: $OUT/compare_mc_*.txt and $OUT/compare_mira.txt (the leaderboards with their tie groups)"

# 6. the page
"$BS" report "${outputs[@]}" --title "benchscore live leaderboard: $MODELS" --output "$OUT/report.html" >/dev/null
echo "wrote $OUT/report.html and $OUT/leaderboard.md in $(( $(date +%s) - t0 )) s"
