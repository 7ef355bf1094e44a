#!/usr/bin/env python3
"""Evaluate multiple-choice predictions of testsetV6 (Python standard library only).

    python evaluate_multiple_choice.py --dataset multiple_choice_single_varying.json \
        --prediction example_prediction_single_varying.json [--output result.json]

``--dataset`` may be repeated; the prediction file then covers all of them. Prints metrics per
sub-dataset and overall (pooled over all samples) as JSON. ``rxn_metrics.py`` and
``rxn_standalone.py`` must sit beside this script.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # the build folder stays as the build wrote it (no __pycache__)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rxn_metrics  # noqa: E402
from rxn_standalone import InputError, emit, load_datasets, load_predictions, run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", action="append", required=True)
    ap.add_argument("--prediction", required=True)
    ap.add_argument("--output")
    args = ap.parse_args()
    datasets, ids = load_datasets(args.dataset, "rxn-multiple-choice")
    preds = load_predictions(args.prediction)
    try:
        rxn_metrics.check_prediction_ids(preds, ids)
        per = {qtype: rxn_metrics.score_multiple_choice(samples, preds) for qtype, samples in datasets}
        overall = rxn_metrics.score_multiple_choice([s for _, ss in datasets for s in ss], preds)
    except rxn_metrics.PredictionError as exc:
        raise InputError(f"{args.prediction}: {exc}") from None
    except (KeyError, TypeError, IndexError) as exc:
        raise InputError(f"a dataset sample is malformed: {exc!r}") from None
    emit({"task": "multiple_choice", "per_dataset": per, "overall": overall}, args.output)


if __name__ == "__main__":
    run(main)
