"""benchscore.rxn: reaction-condition testset V6 (seed 004): build MC / FIB sets from condition tables, evaluate.

Layers: :mod:`conventions` (every open choice, one place), :mod:`parsers` (literature values),
:mod:`formulas` (effective/relative scores), :mod:`metrics` (evaluation, standard library only),
:mod:`formats` (pydantic file formats), :mod:`build` (question construction), :mod:`bundle`
(build folders), :mod:`cli`.
"""

from .build import build_fill_in_blank, build_multiple_choice, prepare
from .formats import ConditionTable, ConditionTableFile, FibDataset, McDataset
from .formulas import best_indices, denmark_ee, effective_score, relative_scores
from .metrics import index_fill_in_blank, score_fill_in_blank, score_multiple_choice
from .parsers import parse_dr, parse_ee, parse_temperature, parse_time, parse_yield

__all__ = [
    "ConditionTable",
    "ConditionTableFile",
    "FibDataset",
    "McDataset",
    "best_indices",
    "build_fill_in_blank",
    "build_multiple_choice",
    "denmark_ee",
    "effective_score",
    "index_fill_in_blank",
    "parse_dr",
    "parse_ee",
    "parse_temperature",
    "parse_time",
    "parse_yield",
    "prepare",
    "relative_scores",
    "score_fill_in_blank",
    "score_multiple_choice",
]
