"""Below chance (issue 39): whether a metric of an rxn evaluation is below what a uniform random answer
scores in expectation (``rxn.metrics.chance_multiple_choice`` / ``chance_fill_in_blank``). Pure
functions; ``benchscore rxn eval-*`` writes their result as ``below_chance``, the terminal, the page and
the figure flag it.
"""

from __future__ import annotations

#: the metrics that have a chance level (``chance_multiple_choice`` / ``chance_fill_in_blank``)
CHANCE_METRICS = ("avg_relative_score", "exact_match_accuracy", "hit_rate")

#: how ``below_chance`` decides, written beside its result in every eval output
BELOW_CHANCE_RULE = ("below chance: the 95 % interval's upper end is below the chance level (what a uniform "
                     "random answer scores in expectation); without an interval, the value itself is below it")


def below_chance(value: object, chance: object, ci95: object = None) -> bool | None:
    """Whether a metric is below chance (:data:`BELOW_CHANCE_RULE`): ``ci95[1] < chance`` when the metric
    has a 95 % interval ``ci95 = [low, high]``, else ``value < chance``; None when the value or the
    chance level is missing. A value below chance whose interval reaches the chance level is not
    flagged: its interval does not tell it from chance."""
    def number(x: object) -> bool:
        return isinstance(x, int | float) and not isinstance(x, bool)

    if not number(value) or not number(chance):
        return None
    if isinstance(ci95, list | tuple) and len(ci95) == 2 and number(ci95[1]):
        return ci95[1] < chance
    return value < chance


def metrics_below_chance(metrics: dict, chance: dict, intervals: dict | None = None) -> list:
    """The names of the metrics of ``metrics`` (one sub-dataset, or overall) that are below chance."""
    out = []
    for name in CHANCE_METRICS:
        ci = ((intervals or {}).get(name) or {}).get("ci95")
        if below_chance(metrics.get(name), chance.get(name), ci):
            out.append(name)
    return out
