#!/usr/bin/env python3
"""Evaluate fill-in-blank predictions of testsetV6 (Python standard library only).

    python evaluate_fill_in_blank.py --dataset fill_in_blank_all_blank.json \
        --prediction example_prediction_all_blank.json [--output result.json]

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
    datasets, ids = load_datasets(args.dataset, "rxn-fill-in-blank")
    preds = load_predictions(args.prediction)
    try:
        rxn_metrics.check_prediction_ids(preds, ids)
        indexes = [(qtype, rxn_metrics.index_fill_in_blank(samples)) for qtype, samples in datasets]
        per = {qtype: rxn_metrics.score_fill_in_blank(index, preds) for qtype, index in indexes}
        merged = {}
        for _, index in indexes:
            merged.update(index)
        overall = rxn_metrics.score_fill_in_blank(merged, preds)
    except rxn_metrics.PredictionError as exc:
        raise InputError(f"{args.prediction}: {exc}") from None
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise InputError(f"a dataset sample is malformed: {exc!r}") from None
    emit({"task": "fill_in_blank", "per_dataset": per, "overall": overall}, args.output)


if __name__ == "__main__":
    run(main)
