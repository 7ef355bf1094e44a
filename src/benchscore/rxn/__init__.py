"""benchscore.rxn: reaction-condition testset V6 (seed 004): build MC / FIB sets from condition tables, ask a
model, evaluate.

Layers: :mod:`conventions` (every open choice, one place), :mod:`parsers` (literature values),
:mod:`formulas` (effective/relative scores), :mod:`metrics` (evaluation, standard library only),
:mod:`answers` (reading a model's answer), :mod:`formats` (pydantic file formats), :mod:`build`
(question construction), :mod:`bundle` (build folders), :mod:`predict` (asking a model), :mod:`cli`.

Names are imported on first use (PEP 562), so ``import benchscore.rxn.cli`` does not load pydantic
or rdkit.
"""

from __future__ import annotations

from benchscore.common.lazy import lazy_exports

_EXPORTS = {
    "ConditionTable": "formats",
    "ConditionTableFile": "formats",
    "FibDataset": "formats",
    "McDataset": "formats",
    "best_indices": "formulas",
    "build_fill_in_blank": "build",
    "build_multiple_choice": "build",
    "denmark_ee": "formulas",
    "effective_score": "formulas",
    "index_fill_in_blank": "metrics",
    "parse_dr": "parsers",
    "parse_ee": "parsers",
    "parse_fib_answer": "answers",
    "parse_mc_answer": "answers",
    "parse_temperature": "parsers",
    "parse_time": "parsers",
    "parse_yield": "parsers",
    "prepare": "build",
    "relative_scores": "formulas",
    "score_fill_in_blank": "metrics",
    "score_multiple_choice": "metrics",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
