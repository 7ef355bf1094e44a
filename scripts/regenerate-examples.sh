#!/usr/bin/env bash
# Rewrite every examples/*/expected output with the commands the docs give (run from the repository
# root with the venv active, or with BENCHSCORE=path/to/benchscore). The tests that compare the
# expected files run the same commands; run this after a change that alters outputs on purpose
# (a new output field, a provenance change) and review the diff before committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BENCHSCORE:-benchscore}
export SOURCE_DATE_EPOCH=1767225600
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rxn (examples/rxn/README.md)
$B rxn convert-csv --csv examples/rxn/literature_tables.csv --output "$tmp/rxn/literature_tables.json" >/dev/null
$B rxn build-mc --tables "$tmp/rxn/literature_tables.json" --max-options 4 --output-dir "$tmp/rxn" >/dev/null
$B rxn build-fib --tables "$tmp/rxn/literature_tables.json" --output-dir "$tmp/rxn" >/dev/null
MC=$tmp/rxn/20260101_000000_multiple_choice; FIB=$tmp/rxn/20260101_000000_fill_in_blank
$B rxn eval-mc --dataset "$MC/multiple_choice_all_varying.json" --dataset "$MC/multiple_choice_single_varying.json" \
    --prediction examples/rxn/predictions_mc.json --output "$tmp/rxn/eval_mc.json" >/dev/null
$B rxn eval-fib --dataset "$FIB/fill_in_blank_all_blank.json" --dataset "$FIB/fill_in_blank_all_blank_reference.json" \
    --prediction examples/rxn/predictions_fib.json --output "$tmp/rxn/eval_fib.json" >/dev/null
cp "$tmp/rxn/literature_tables.json" examples/rxn/literature_tables.json
cp "$MC/multiple_choice_all_varying.json" "$FIB/fill_in_blank_all_blank_reference.json" "$tmp/rxn/eval_mc.json" \
    "$tmp/rxn/eval_fib.json" examples/rxn/expected/

# mira (docs/mira.md, Quick start)
M=examples/mira
$B mira score --contract $M/contract.json --repetitions $M/repetitions.jsonl --deviations $M/deviations.json \
    --judge-calibration $M/judge_calibration.jsonl --output $M/expected/score.json --quiet
$B mira score --contract $M/contract.json --repetitions $M/repetitions_incomplete.jsonl \
    --deviations $M/deviations.json --output $M/expected/score_incomplete.json --quiet || [ $? -eq 1 ]  # incomplete
$B mira project --score $M/expected/score.json --output $M/expected/public.json --quiet
$B mira calibrate --contract $M/contract.json --observations $M/observations.jsonl \
    --output $M/expected/contract_calibrated.json --quiet

# tcsexam (README.md, TCSExam)
T=examples/tcsexam/seed-example
$B tcsexam solver-score --task maxcut-mqlib --records $T/records.json --reference $T/reference.json \
    --output $T/expected/maxcut-relative.json >/dev/null
$B tcsexam score --suite $T/suite.json --attempts $T/attempts.csv --cohort $T/cohort.json \
    --output $T/expected/index.json >/dev/null
$B tcsexam score --suite $T/suite.json --attempts $T/attempts-incomplete.csv --cohort $T/cohort.json \
    --output $T/expected/index-incomplete.json >/dev/null || [ $? -eq 1 ]  # exit 1: incomplete, still written
git status --short examples

# mira from an inspect_ai log (examples/mira/inspect/README.md; needs the inspect extra)
I=examples/mira/inspect
$B mira from-inspect $I/agent.eval --contract $I/contract.json --mapping $I/mapping.json \
    --output "$tmp/inspect/repetitions.jsonl" >/dev/null || [ $? -eq 1 ]  # exit 1: the run was cancelled, still written
$B mira score --contract $I/contract.json --repetitions "$tmp/inspect/repetitions.jsonl" \
    --output "$tmp/inspect/score.json" >/dev/null || [ $? -eq 1 ]  # exit 1: incomplete (a missing epoch), written
cp "$tmp/inspect/repetitions.jsonl" "$tmp/inspect/score.json" $I/expected/
