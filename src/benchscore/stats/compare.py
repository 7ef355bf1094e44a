"""``benchscore compare A.json B.json [C.json ...]``: paired comparisons of outputs of one contract.

The mechanism is here, once; each domain supplies one hook, ``entries(doc, label) -> list[Entry] |
None``, that recognises its outputs and returns, for each result in the file (a ``tcsexam score``
output holds several models), what must agree for two results to be comparable (``same``: metric
id, dataset / contract / suite / reference sha256) and, per headline metric, the output's own number
and its items with their per-item values (:class:`Metric`). This module checks that the outputs are
comparable (one line naming what differs otherwise, exit 2), pairs the items, runs
:func:`benchscore.stats.paired.infer_pair` on every pair of results and writes one verdict per pair
and metric from one inference (the test, its inverted interval and its minimum detectable effect);
with three or more results the verdicts use Holm-adjusted p-values with intervals at the matching
level, and the leaderboard gives rank intervals and group labels; it lists the items that differ most.
"""

from __future__ import annotations

import itertools
import operator
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchscore.common.errors import BadInput
from benchscore.stats import fragility as F
from benchscore.stats import paired as P
from benchscore.stats import ranks as K
from benchscore.stats.intervals import LEVEL, NoInterval, cluster_codes, ratio_interval, rng_for

DEFAULT_RESAMPLES = 10_000
DEFAULT_ALPHA = 0.05
DEFAULT_TOP = 10
#: up to this many results every pair gets its own exact test and the rank intervals come from Holm over
#: them (100 results: 4,950 pairs, about 15 s on two cores); past it the max-t bootstrap over all pairs
#: (:mod:`benchscore.stats.ranks`) gives the rank sets and the verdicts, and only the pairs adjacent on a
#: board are written (:func:`rank_method`)
EXACT_PAIRS_UP_TO = 100
#: ``--rank-sets`` choices and the method each names in outputs
RANK_SETS = {"holm": "holm_exact", "max-t": K.METHOD}
#: how closely the number recomputed from the items must equal the output's own number
_AGREE = 1e-9
#: how many removed units a fragility names
FRAGILE_LISTED = 10


@dataclass
class Metric:
    """One headline metric of one result, as its items give it.

    ``items`` maps an item id to ``(num, den)``: the metric is ``scale x sum_s W_s x sum num / sum
    den`` over the items of each stratum (a mean: ``den`` 1; a pooled rate: successes and trials;
    ``den`` 0: the item leaves the mean). ``clusters`` maps items to the independent unit they
    belong to (a condition table; None: each item is its own unit); ``strata`` items to a stratum
    whose weight is ``weights[stratum]`` (None: one stratum of weight 1). ``binary``: the items are
    0/1 outcomes (McNemar applies when each unit holds one item). ``value`` is the output's own number
    (``null_reason`` says why it is null). ``sources`` names where each item comes from (an rxn
    question: its dataset's sha256): an item two results share must come from the same source.
    ``bounds`` are the smallest and largest values the number can take (None: no bound), in its own
    unit (after ``scale``); ``ci95`` is the output's own interval of the number (``ci_reason`` when
    it has none), shown beside it on a leaderboard. ``counts`` (results of other tools: scored /
    errored / unscored samples and the errors policy) is carried beside the number in every comparison
    and leaderboard row.
    """

    name: str
    value: float | None
    items: dict[str, tuple[float, float]]
    binary: bool = False
    clusters: dict[str, str] | None = None
    strata: dict[str, str] | None = None
    weights: dict[str, float] | None = None
    scale: float = 1.0
    null_reason: str | None = None
    sources: dict[str, str] | None = None
    bounds: tuple[float | None, float | None] = (None, None)
    ci95: list[float] | None = None
    ci_reason: str | None = None
    counts: dict[str, Any] | None = None
    ci_method: str | None = None
    #: the output's own interval of this number is null at this n (a floor of its method, such as "the
    #: construction track needs 20 tasks"): compare then gives no interval and no minimum detectable effect
    #: either, and the verdict ``cannot_separate_at_this_n`` with this reason (issue 38)
    floor_reason: str | None = None
    #: the metrics this number is made of (a composite: the TCSExam index of its track means), listed beside
    #: a floor as what compare can compare instead
    components: list[str] | None = None


@dataclass
class Entry:
    """One result of one output file (``label``: the file as given, ``FILE:MODEL`` for one model).
    ``about``: what the result says of itself that compare neither compares nor uses (when it was
    evaluated, the library that ran it, each metric's dataset, the files it was read from), for
    what is published of it (the Every Eval Ever records)."""

    label: str
    kind: str
    same: dict[str, Any]
    metrics: list[Metric] = field(default_factory=list)
    about: dict[str, Any] = field(default_factory=dict)


Hook = Callable[[Any, str], "list[Entry] | None"]


#: the verdicts of one comparison of one metric (docs/statistics.md)
VERDICTS = ("differs", "not_separated", "cannot_separate_at_this_n")


def formats() -> dict[str, type]:
    """The pydantic model of a compare output (``benchscore schema benchscore-compare``)."""
    from typing import Literal

    from pydantic import Field

    from benchscore.common.models import Format

    class ScoreEdit(Format):
        """A score edited after the run (inspect_ai's edit_score), taken with --accept-score-edits."""

        sample: str
        epoch: int
        scorer: str
        author: str | None = Field(description="who edited it (null: the log records no author)")
        reason: str | None
        timestamp: str | None
        original: Any = Field(description="the value the scorer gave")
        value: Any = Field(description="the edited value, the one counted")

    class Counts(Format):
        """The samples behind a number of another tool's results (sample x epochs)."""

        samples: int = Field(ge=0, description="samples every result shares")
        sample_epochs: int = Field(ge=0)
        scored: int = Field(ge=0)
        errored: int = Field(ge=0)
        unscored: int = Field(ge=0)
        missing: int = Field(ge=0, description="epochs a sample lacks (a whole planned sample the files lack: all)")
        limited: int = Field(ge=0, description="sample epochs that hit a limit")
        retried: int = Field(ge=0, description="sample epochs retried after an error (counted as 'retries' says)")
        edited: int = Field(0, ge=0, description="sample epochs whose score was edited after the run "
                                                 "(--accept-score-edits; each in score_edits)")
        undefined: int = Field(0, ge=0, description="samples the epoch reducer gives no value (majority without a "
                                                    "strict majority), counted as the errors policy says")
        excluded: int = Field(ge=0, description="samples left out (--errors exclude-pair)")
        errors: Literal["as-wrong", "exclude-pair", "refuse"] = Field(description="how errors were counted")
        retries: Literal["last-attempt", "first-attempt"] | None = Field(
            None, description="how a retried sample epoch counts: as its last attempt ended (inspect_ai's rule) or "
                              "as its first did (errored)")
        status: Literal["success", "error", "cancelled", "unknown"] | None = Field(
            None, description="how the run ended; any status but success (unknown: the format records none) makes "
                              "the number not final (exit 1)")
        status_error: str | None = Field(None, description="the error the run ended with")
        score_edits: list[ScoreEdit] | None = Field(None, description="every edited score counted (sample, epoch, "
                                                                      "scorer, who, why, the scorer's value, the "
                                                                      "edited one)")

    class Intersection(Format):
        items: int = Field(ge=0, description="the items every result has")
        dropped: dict[str, list[str]] = Field(description="per result, the items it has that another lacks")

    class Differing(Format):
        item: str
        a: float | None
        b: float | None
        difference: float | None
        unit: str | None = Field(None, description="the independent unit the item belongs to (an rxn condition table)")

    class Fragility(Format):
        """What a differs verdict rests on (benchscore.stats.fragility)."""

        units_to_change: int = Field(ge=1, description="the fewest units found whose removal changes the verdict")
        n_units: int = Field(ge=1)
        share: float = Field(description="units_to_change / n_units")
        method: Literal["exact", "leave_one_out_then_greedy", "greedy"] = Field(description=(
            "exact: every smaller set of units was removed in turn; leave_one_out_then_greedy: every single "
            "unit was, and past one the count is an upper bound (the units favouring the winner most, removed "
            "one by one); greedy: that upper bound alone"))
        fragile: bool = Field(description=f"the verdict rests on one unit or on fewer than "
                                          f"{F.FRAGILE_SHARE:.0%} of the units")
        removed: list[str] = Field(description=f"the units removed (their names; the first {FRAGILE_LISTED})")

    class MetricComparison(Format):
        name: str
        a: float = Field(description="the first result's number (its own, or on the common items with --intersection)")
        b: float
        difference: float = Field(description="a - b")
        verdict: Literal["differs", "not_separated", "cannot_separate_at_this_n"] = Field(
            description="differs: the test (Holm-adjusted with three or more results) rejects at alpha; "
                        "cannot_separate_at_this_n: no outcome with this many units could reject")
        verdict_reason: str
        ci95: list[float] | None = Field(min_length=2, max_length=2, description=(
            "the differences the test does not reject at ci_level: it excludes 0 exactly when the verdict "
            "is differs; inside what the metric allows"))
        ci_level: float = Field(description="1 - alpha, or 1 - alpha / (m - r) matching Holm with m pairs, r separated")
        ci_method: Literal["sign_flip_inversion", "mcnemar_inversion", "paired_t_inversion", "max_t_inversion"]
        ci_reason: str | None = None
        p_value: float
        p_holm: float | None = Field(None, description="Holm-adjusted over the pairs (three or more results)")
        test: Literal["sign_flip_permutation_exact", "sign_flip_permutation_monte_carlo", "mcnemar_exact", "paired_t",
                      "max_t_stepdown"]
        smallest_attainable_p: float = Field(description="the smallest p-value the test can give with n_units units")
        n_items: int
        n_units: int = Field(description="independent units the items form (rxn: condition tables)")
        standard_error: float | None
        minimum_detectable_effect: float | None = Field(
            description="the smallest true difference the test, at the interval's level, detects with 80 % power")
        mde_reason: str | None = None
        components: list[str] | None = Field(None, description=(
            "a composite whose own interval is null at this n (cannot_separate_at_this_n, no interval, no "
            "minimum detectable effect): the components compare can compare instead"))
        items_that_differ_most: list[Differing]
        counts: dict[Literal["a", "b"], Counts] | None = Field(
            None, description="per result (a, b): the samples scored, errored, unscored and how errors were counted")
        fragility: Fragility | None = Field(None, description=(
            "differs: the fewest units whose removal changes the verdict, and whether it is fragile (null for "
            "any other verdict, or with fragility_reason)"))
        fragility_reason: str | None = None

    class Pair(Format):
        a: str
        b: str
        metrics: list[MetricComparison]

    class Standing(Format):
        label: str
        value: float
        ci95: list[float] | None = Field(min_length=2, max_length=2,
                                         description="the result's own 95 % interval (from its output)")
        ci_reason: str | None = None
        ci_method: str | None = Field(None, description="how ci95 was computed (null: the output's own, unnamed)")
        rank_range: list[int] = Field(min_length=2, max_length=2, description=(
            "95 % rank interval, simultaneous over the results: [1 + results separated above it, "
            "N - results separated below it] (separated: by Holm, or by the max-t stepdown: rank_sets)"))
        groups: list[str] | None = Field(description=(
            "the labels of the groups the result belongs to (compact letter display): two results share a label "
            "exactly when they are not separated; a .. z up to 26 groups, two letters each past 26; null (with "
            f"groups_reason) past 676 groups or past {EXACT_PAIRS_UP_TO} results (max-t rank sets): the rank "
            "interval alone"))
        groups_reason: str | None = None
        indistinguishable_from: list[str]
        equal_to: list[str] = Field(description="results with exactly the same value (listed in label order)")
        counts: Counts | None = None
        fragile_separations: list[str] | None = Field(None, description=(
            "results it is separated from by a fragile verdict only (resting on one unit or on fewer than "
            f"{F.FRAGILE_SHARE:.0%} of the units): the rank interval and the groups count these separations, "
            "this list says which they are"))

    class Step(Format):
        hypotheses: int = Field(ge=0, description="ordered pairs still in play")
        critical_value: float
        critical_value_mc_interval: list[float] = Field(min_length=2, max_length=2, description=(
            "95 % interval of the critical value infinitely many draws would give (order statistics)"))
        critical_value_mc_standard_error: float
        rejected: int = Field(ge=0)

    class RankSetsInfo(Format):
        """How the rank sets of one metric were made, past the board size where every pair is tested."""

        method: Literal["max_t_stepdown"]
        method_reason: str
        draws: int = Field(ge=1, description="multiplier draws (seeded by the recorded seed)")
        units: int
        min_units: int = Field(description="the fewest units at which the sets' simulated coverage holds")
        critical_value: float | None = Field(description="a pair is separated exactly when |T| exceeds it")
        critical_value_mc_standard_error: float | None
        critical_value_mc_interval: list[float] | None
        pairs_within_mc_error: int | None = Field(description=(
            "pairs whose statistic lies inside the critical value's Monte-Carlo interval: their verdict "
            "could change with other draws"))
        steps: list[Step]
        reason: str | None = Field(None, description="why there are no rank sets (never a number in their place)")

    class CompareOutput(Format):
        """Output of ``benchscore compare``: every pair of results, per metric (docs/statistics.md)."""

        format: Literal["benchscore-compare"]
        kind: str
        same: dict[str, Any] = Field(description="what every compared result shares")
        results: list[str]
        alpha: float
        level: float
        comparisons: list[Pair]
        leaderboards: dict[str, list[Standing]] | None = None
        rank_sets: dict[str, RankSetsInfo] | None = Field(None, description=(
            f"past {EXACT_PAIRS_UP_TO} results, per metric: the max-t rank sets' draws, critical values and "
            "their Monte-Carlo error; the comparisons are then the pairs adjacent on a board"))
        not_compared: dict[str, str]
        intersection: dict[str, Intersection] | None = Field(
            description="--intersection: per metric, the items compared and those dropped (null without it)")
        judge: dict[str, Any] | None = Field(None, description="--judge-calibration: values corrected for a grader's "
                                             "errors (benchscore.results.judged)")
        provenance: dict[str, Any]

    return {"benchscore-compare": CompareOutput}


def verify_kind() -> Any:
    """The kind of a compare output for ``benchscore verify`` (told apart by validation against its model)."""
    from benchscore.common.verify import Kind

    return Kind("comparison", (formats()["benchscore-compare"],), lambda m: m == "benchscore-compare",
                "benchscore-compare", ("benchscore compare",))


def _one_line(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 160 else text[:157] + "..."


def collect(docs: Sequence[tuple[str, Any]], hooks: Sequence[Hook], known: str) -> list[Entry]:
    """The entries of every output; an output no hook recognises is refused (one line)."""
    out: list[Entry] = []
    for label, doc in docs:
        for hook in hooks:
            got = hook(doc, label)
            if got is not None:
                out.extend(got)
                break
        else:
            raise BadInput(f"not an output benchscore compare knows ({known})", source=label)
    if len(out) < 2:
        raise BadInput(f"compare needs at least two results; {', '.join(e.label for e in out) or 'none'} given")
    return out


def check_comparable(entries: list[Entry]) -> None:
    """Refuse outputs of different contracts: one line naming the first thing that differs."""
    first = entries[0]
    for e in entries[1:]:
        if e.kind != first.kind:
            raise BadInput(f"{first.label} is a {first.kind} output, {e.label} a {e.kind} output: compare needs "
                           "outputs of one contract")
        for key in first.same:
            if e.same.get(key) != first.same[key]:
                raise BadInput(f"{first.label} and {e.label} differ in {key}: {_one_line(first.same[key])} vs "
                               f"{_one_line(e.same.get(key))}; compare needs outputs of one contract")


def _item_sets(entries: list[Entry], name: str, intersection: bool) -> tuple[list[str], dict[str, list[str]]]:
    """The items metric ``name`` is compared on (in the first entry's order) and, with
    ``intersection``, the items dropped from each entry; without it, differing sets are refused."""
    sets = [next(m for m in e.metrics if m.name == name).items for e in entries]
    if all(s.keys() == sets[0].keys() for s in sets[1:]):  # the usual case, at C speed: the same items
        return list(sets[0]), {}
    if not intersection:
        first = sets[0]
        for e, s in zip(entries[1:], sets[1:], strict=True):
            extra = [i for i in s if i not in first]
            missing = [i for i in first if i not in s]
            if extra or missing:
                parts = ([f"lacks {len(missing)} item(s) of {entries[0].label} (first: {missing[0]!r})"] if missing
                         else []) + ([f"has {len(extra)} it lacks (first: {extra[0]!r})"] if extra else [])
                raise BadInput(f"{e.label} and {entries[0].label} are not on the same items for {name}: {e.label} "
                               + " and ".join(parts) + "; compare them on their common items with --intersection")
    common = set(sets[0]).intersection(*sets[1:])
    dropped = {e.label: [i for i in s if i not in common] for e, s in zip(entries, sets, strict=True)}
    return [i for i in sets[0] if i in common], {k: v for k, v in dropped.items() if v}


@dataclass
class _Layout:
    """How the items of one metric form units: each item's unit code, each unit's stratum, the
    strata's weights (computed once per metric, from the first result)."""

    items: list[str]
    codes: np.ndarray
    g: int
    stratum: np.ndarray
    weights: np.ndarray
    scale: float
    clusters: dict[str, str] | None
    _name_rank: np.ndarray | None = None

    @classmethod
    def of(cls, m: Metric, items: list[str]) -> _Layout:
        if m.clusters is not None:
            codes, g = cluster_codes(m.clusters[i] for i in items)
        else:
            codes, g = np.arange(len(items)), len(items)
        weights_of = m.weights or {"": 1.0}
        names = {s: k for k, s in enumerate(weights_of)}
        item_stratum = (np.fromiter((names[m.strata[i]] for i in items), dtype=np.int64, count=len(items))
                        if m.strata else np.zeros(len(items), dtype=np.int64))
        stratum = np.zeros(g, dtype=np.int64)
        stratum[codes] = item_stratum
        return cls(items, codes, g, stratum, np.array(list(weights_of.values()), dtype=float), m.scale, m.clusters)

    def columns(self, m: Metric) -> tuple[np.ndarray, np.ndarray]:
        """The items' numerators and denominators, in order."""
        in_order = len(m.items) == len(self.items) and all(map(operator.eq, m.items, self.items))
        values = m.items.values() if in_order else (m.items[i] for i in self.items)
        pairs = np.fromiter(itertools.chain.from_iterable(values), dtype=float, count=2 * len(self.items))
        return pairs[0::2], pairs[1::2]

    def name_rank(self) -> np.ndarray:
        """Each item's position in the sorted item names (computed once per layout)."""
        if self._name_rank is None:
            rank = np.empty(len(self.items), dtype=np.int64)
            rank[np.argsort(np.array(self.items))] = np.arange(len(self.items))
            self._name_rank = rank
        return self._name_rank

    def same_units(self, m: Metric, items: list[str]) -> bool:
        """Whether ``m`` over ``items`` forms exactly these units (then the layout is reused)."""
        return (m.clusters is self.clusters and m.strata is None and m.weights is None and m.scale == self.scale
                and items == self.items)

    def per_unit(self, col: np.ndarray) -> np.ndarray:
        return np.bincount(self.codes, weights=col, minlength=self.g)

    def unit_name(self, unit: int) -> str:
        """A unit's name: its item, or its cluster (an rxn condition table)."""
        first = int(np.flatnonzero(self.codes == unit)[0])
        return self.items[first] if self.clusters is None else self.clusters[self.items[first]]

    def value(self, num: np.ndarray, den: np.ndarray) -> float:
        return P.value(self.per_unit(num), self.per_unit(den), self.stratum, self.weights, self.scale)

    def units(self, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], *,
              bounds: tuple[float | None, float | None] = (None, None)) -> P.Units:
        return P.Units(self.per_unit(a[0]), self.per_unit(a[1]), self.per_unit(b[0]), self.per_unit(b[1]),
                       self.stratum, self.weights, self.scale, bounds)

    def differ_most(self, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray],
                    top: int) -> list[dict[str, Any]]:
        """The ``top`` items whose values (``scale x num / den``; none when ``den`` is 0) differ most,
        largest first (an item with a value in one result only counts as the largest), each with both."""
        with np.errstate(invalid="ignore", divide="ignore"):
            va = np.where(a[1] != 0, self.scale * a[0] / np.where(a[1] != 0, a[1], 1.0), np.nan)
            vb = np.where(b[1] != 0, self.scale * b[0] / np.where(b[1] != 0, b[1], 1.0), np.nan)
        one_sided = np.isnan(va) != np.isnan(vb)
        size = np.where(one_sided, np.inf, np.abs(np.nan_to_num(va - vb)))
        differ = np.flatnonzero((size > 0) | one_sided)
        if differ.size > top > 0:  # only the largest (and their ties) need sorting by name
            cut = np.partition(size[differ], differ.size - top)[differ.size - top]
            differ = differ[size[differ] >= cut]
        if differ.size > 4 * top:  # many ties at the cut: order by size, then name, without a Python key per item
            differ = differ[np.lexsort((self.name_rank()[differ], -size[differ]))]
            order = differ[:top].tolist()
        else:
            order = sorted(differ.tolist(), key=lambda k: (-size[k], self.items[k]))[:top]
        out = []
        for k in order:
            x = None if np.isnan(va[k]) else float(va[k])
            y = None if np.isnan(vb[k]) else float(vb[k])
            row: dict[str, Any] = {"item": self.items[k], "a": x, "b": y,
                                   "difference": None if x is None or y is None else x - y}
            if self.clusters is not None:
                row["unit"] = self.clusters[self.items[k]]
            out.append(row)
        return out


def _recomputed(entry: Entry, m: Metric, layout: _Layout, cols: tuple[np.ndarray, np.ndarray], *,
                check: bool) -> float:
    """The metric recomputed from its items; with ``check`` (all its items, a number) refused when it
    is not the output's own number."""
    got = layout.value(*cols)
    if check and m.value is not None and not abs(got - m.value) <= _AGREE * max(1.0, abs(m.value)):
        raise BadInput(f"{m.name} is {m.value!r} but its items give {got!r}: the file was changed after it was "
                       "written (benchscore verify finds where)", source=entry.label)
    return got


def _interval_on(layout: _Layout, cols: tuple[np.ndarray, np.ndarray], bounds: tuple[float | None, float | None]
                 ) -> tuple[list[float] | None, str | None, str | None]:
    """``(ci95, ci_reason, ci_method)`` of a result on the items compared (``--intersection``: the items
    every result has), by the method of the outputs' own intervals: :func:`intervals.ratio_interval` of
    its units (values in [0, 1] when the metric has both ``bounds``: 0 and ``scale``; unbounded
    otherwise), times ``scale``. A weighted sum of strata gets none, and says why."""
    if len(layout.weights) > 1:
        return None, ("a weighted sum of strata compared on the common items only: each stratum's interval is "
                      "the contract's own, not recomputed here"), None
    lo, hi = bounds
    try:
        got = ratio_interval(layout.per_unit(cols[0]), layout.per_unit(cols[1]),
                             bounded=hi is not None and lo is not None,
                             unit="item" if layout.clusters is None else "unit")
    except NoInterval as exc:
        return None, f"compared on the common items: {exc}", None
    return [layout.scale * got.low, layout.scale * got.high], None, got.method


def _check_sources(entries: list[Entry], ms: list[Metric], items: list[str], name: str) -> None:
    first = ms[0].sources
    if first is None:
        return
    for e, m in zip(entries[1:], ms[1:], strict=True):
        if m.sources is None or m.sources == first:  # the usual case, at C speed
            continue
        for i in items:
            if m.sources.get(i) != first.get(i):
                raise BadInput(f"{name}: item {i!r} comes from {first.get(i)} in {entries[0].label} but from "
                               f"{m.sources.get(i)} in {e.label}; compare needs outputs of one contract")


def _grouped(not_compared: dict[str, str]) -> str:
    """Why no metric was compared, each reason once with the metrics it holds for (``a, b and c null in
    X: ...``), in the metrics' order."""
    by_reason: dict[str, list[str]] = {}
    for name, why in not_compared.items():
        by_reason.setdefault(why, []).append(name)
    parts = []
    for why, names in by_reason.items():
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        parts.append(f"{listed} {why}")
    return "; ".join(parts)


def _floor(name: str, ms: list[Metric], labels: list[str], metric_of: dict[tuple[str, str], Metric],
           compared: dict[str, list[str]]) -> tuple[str | None, list[str] | None]:
    """Why no comparison of metric ``name`` can be trusted at this n, when a result's own interval of it
    is null by a floor (:attr:`Metric.floor_reason`), with the components compare can compare instead
    (compared, and without a floor of their own); ``(None, None)`` otherwise."""
    got = next(((label, m) for label, m in zip(labels, ms, strict=True) if m.floor_reason), None)
    if got is None:
        return None, None
    label, m = got
    why = (f"the own interval of {name} in {label} is null ({m.floor_reason}): a comparison on the same units "
           "cannot be trusted either, so no interval and no minimum detectable effect")
    if m.components is None:
        return why, None
    ok = [c for c in m.components if c in compared
          and not any(metric_of[(x, c)].floor_reason for x in labels)]
    return why + ("; its components compared instead: " + ", ".join(ok) if ok else
                  "; none of its components can be compared either"), ok


def _verdict(p: float, sap: float, alpha: float, family: int, holm_p: float | None, n_units: int) -> tuple[str, str]:
    """One verdict and its reason, from the p-value that decides (Holm-adjusted with a family)."""
    name, used = ("p_holm", holm_p) if holm_p is not None else ("p", p)
    reachable = min(1.0, family * sap)
    if reachable >= alpha:
        why = f"with {n_units} units the smallest attainable p-value is {sap:.3g}"
        if family > 1:
            why += f" ({family} pairs, Holm: {reachable:.3g})"
        return "cannot_separate_at_this_n", why + f", not below alpha {alpha:g}: no outcome could separate them"
    if used < alpha:  # type: ignore[operator]
        return "differs", f"{name} {used:.3g} < alpha {alpha:g}"
    return "not_separated", f"{name} {used:.3g} >= alpha {alpha:g}"


def _standings(labels: list[str], values: list[float], own: list[tuple[list[float] | None, str | None, str | None]],
               sep: set[frozenset[int]], counts: list[dict[str, Any] | None],
               fragile: set[frozenset[int]] = frozenset()) -> list[dict[str, Any]]:
    """The leaderboard of one metric: results by value (highest first; equal values by label, and
    named as equal), each with its own interval (``own``: interval, reason, method), its rank interval and
    its group labels (both from the Holm-separated pairs)."""
    n = len(labels)
    order = sorted(range(n), key=lambda i: (-values[i], labels[i]))

    def separated(i: int, j: int) -> bool:
        return frozenset((i, j)) in sep

    ranges = P.rank_ranges(values, separated)
    try:
        marks: dict[int, list[str]] | None = P.letters(order, separated)
        too_many = None
    except P.TooManyGroups as exc:
        marks, too_many = None, str(exc)
    return [{
        "label": labels[i], "value": values[i], "ci95": own[i][0], **({"ci_reason": own[i][1]} if own[i][1] else {}),
        **({"ci_method": own[i][2]} if own[i][2] else {}),
        "rank_range": ranges[i], "groups": marks[i] if marks is not None else None,
        **({"groups_reason": too_many} if too_many else {}),
        "indistinguishable_from": [labels[j] for j in order if j != i and not separated(i, j)],
        "equal_to": sorted(labels[j] for j in range(n) if j != i and values[j] == values[i]),
        **({"counts": counts[i]} if counts[i] else {}),
        **({"fragile_separations": [labels[j] for j in order if frozenset((i, j)) in fragile]}
           if any(i in f for f in fragile) else {}),
    } for i in order]


def _fragility(layout: _Layout, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], m: Metric,
               r: P.PairInference, k: int, ps: list[float], alpha: float, family: int, resamples: int,
               rng: np.random.Generator) -> dict[str, Any]:
    """The fragility of pair ``k``'s differs verdict (:func:`benchscore.stats.fragility.fragility`): the
    test rerun on fewer units with the same resamples and seed, Holm over the other pairs' p-values as
    they are."""
    state = rng.bit_generator.state
    sign = r.difference > 0

    def still_differs(units: P.Units) -> bool:
        rng.bit_generator.state = state  # the same patterns for every rerun
        got = P.infer_pair(units, resamples=resamples, rng=rng, binary=m.binary)
        holm_p = None
        if family > 1:
            others = list(ps)
            others[k] = got.p_value
            holm_p = P.holm(others)[k]
        verdict, _ = _verdict(got.p_value, got.smallest_attainable_p, alpha, family, holm_p, got.n_units)
        return verdict == "differs" and (got.difference > 0) == sign

    got = F.fragility(layout.units(a, b, bounds=m.bounds), still_differs)
    return {"units_to_change": got.units_to_change, "n_units": got.n_units, "share": got.share,
            "method": got.method, "fragile": got.fragile,
            "removed": [layout.unit_name(x) for x in got.removed[:FRAGILE_LISTED]]}


def rank_method(n_results: int, requested: str = "auto") -> str:
    """The one switch between the two rank methods: ``holm_exact`` (every pair's own exact test, Holm over
    them) up to :data:`EXACT_PAIRS_UP_TO` results, ``max_t_stepdown`` (:func:`benchscore.stats.ranks.rank_sets`)
    past it, where N(N - 1)/2 exact tests and their rows are no longer affordable; ``requested`` ("holm",
    "max-t": ``--rank-sets``) chooses one at any size. Where both run, they agree (docs/statistics.md)."""
    if requested == "auto":
        return "holm_exact" if n_results <= EXACT_PAIRS_UP_TO else K.METHOD
    return RANK_SETS[requested]


def _adjacent_pairs(labels: list[str], values: dict[str, list[float]]) -> list[tuple[int, int]]:
    """The pairs adjacent on some metric's board (by value, highest first, ties by label)."""
    got: set[tuple[int, int]] = set()
    for vals in values.values():
        order = sorted(range(len(labels)), key=lambda i: (-vals[i], labels[i]))
        got.update((min(x, y), max(x, y)) for x, y in zip(order, order[1:], strict=False))
    return sorted(got)


def _max_t(name: str, layout: _Layout, cols: list[tuple[np.ndarray, np.ndarray]], theta: list[float],
           alpha: float, draws: int, seed: int, why: str) -> tuple[K.RankSets | None, dict[str, Any]]:
    """The max-t rank sets of one metric from its units (every result's contribution per unit), and what the
    output says about them; None below the units at which they hold their level (the reason said)."""
    from benchscore.common.progress import Progress

    g_of = np.bincount(layout.stratum, minlength=len(layout.weights))
    info: dict[str, Any] = {"method": K.METHOD, "method_reason": why, "draws": draws, "units": layout.g,
                            "min_units": K.MIN_UNITS}
    if layout.g < K.MIN_UNITS or np.any(g_of < 2):
        short = (f"{layout.g} units" if layout.g < K.MIN_UNITS else "a stratum with fewer than 2 units")
        info.update(critical_value=None, critical_value_mc_standard_error=None, critical_value_mc_interval=None,
                    pairs_within_mc_error=None, steps=[], reason=(
                        f"{short}: the max-t rank sets hold their level from {K.MIN_UNITS} units (every stratum "
                        f"at least 2), so no pair of these {len(theta)} results is separated and every rank "
                        "set is the whole board"))
        return None, info
    num = np.column_stack([layout.per_unit(c[0]) for c in cols])
    den = np.column_stack([layout.per_unit(c[1]) for c in cols])
    u = K.contributions(num, den, layout.stratum, layout.weights, layout.scale)
    del num, den
    with Progress(f"rank sets of {name} ({len(theta)} results, {draws} draws)") as bar:
        sets = K.rank_sets(u, np.asarray(theta, dtype=float), alpha=alpha, draws=draws,
                           rng=rng_for(seed, name, "rank sets"),
                           progress=lambda done, total: bar.update(done, total=total))
    last = sets.steps[-1]
    info.update(critical_value=last.critical_value, critical_value_mc_standard_error=last.mc_standard_error,
                critical_value_mc_interval=list(last.mc_interval), pairs_within_mc_error=sets.within_mc_error,
                steps=[{"hypotheses": s.hypotheses, "critical_value": s.critical_value,
                        "critical_value_mc_interval": list(s.mc_interval),
                        "critical_value_mc_standard_error": s.mc_standard_error, "rejected": s.rejected}
                       for s in sets.steps])
    return sets, info


def _max_t_reason(info: dict[str, Any], verdict: str, why: str, n: int, alpha: float) -> str:
    """A max-t pair's verdict reason: the rank sets' (none below the units floor; too few draws), or the
    p-value's with the critical value it matches."""
    if info.get("reason"):
        return info["reason"]
    if verdict == "cannot_separate_at_this_n":
        return (f"with {info['draws']} draws no Monte-Carlo p-value is below {1 / (info['draws'] + 1):.3g}, not below "
                f"alpha {alpha:g}: more --draws could separate them")
    return (f"{why} (max-t over every pair of {n} results; separated exactly when |T| > "
            f"{info['critical_value']:.4g}, the critical value of {info['draws']} draws)")


def _max_t_standings(labels: list[str], values: list[float], own: list[tuple],
                     sets: K.RankSets | None, counts: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The leaderboard of one metric from the max-t rank sets (the same keys as :func:`_standings`; no
    letters: a compact letter display of so many results is neither computable in time nor readable)."""
    n = len(labels)
    order = sorted(range(n), key=lambda i: (-values[i], labels[i]))
    position = {i: k for k, i in enumerate(order)}
    same: dict[float, list[str]] = {}
    for i in range(n):
        same.setdefault(values[i], []).append(labels[i])
    rows = []
    for i in order:
        others = (sorted(sets.not_separated_from(i).tolist(), key=position.__getitem__) if sets is not None
                  else [j for j in order if j != i])
        rows.append({
            "label": labels[i], "value": values[i], "ci95": own[i][0], **({"ci_reason": own[i][1]} if own[i][1] else {}),
            **({"ci_method": own[i][2]} if len(own[i]) > 2 and own[i][2] else {}),
            "rank_range": [int(sets.lower[i]), int(sets.upper[i])] if sets is not None else [1, n], "groups": None,
            "groups_reason": (f"past {EXACT_PAIRS_UP_TO} results the max-t rank sets separate the pairs: the rank "
                              "interval alone (a compact letter display of so many results is neither computable "
                              "in time nor readable)"),
            "indistinguishable_from": [labels[j] for j in others],
            "equal_to": sorted(x for x in same[values[i]] if x != labels[i]),
            **({"counts": counts[i]} if counts[i] else {}),
        })
    return rows


def compare(entries: list[Entry], *, intersection: bool = False, resamples: int = DEFAULT_RESAMPLES,
            seed: int = 16, alpha: float = DEFAULT_ALPHA, top: int = DEFAULT_TOP,
            standings: bool = False, detectable_effects: bool = True, rank_sets: str = "auto",
            draws: int = K.DEFAULT_DRAWS) -> dict[str, Any]:
    """The comparison document (without provenance): every pair of entries, per metric. The
    leaderboards come with three or more results, or with two when ``standings`` (the leaderboard
    command: one pair, its plain p-value decides). Without ``detectable_effects`` the minimum
    detectable effects are not computed (null, and said so): the leaderboard publishes none. Past
    :data:`EXACT_PAIRS_UP_TO` results (or with ``rank_sets="max-t"``) the max-t bootstrap over all pairs
    (``draws`` multiplier draws) gives the rank sets and the verdicts, and only the pairs adjacent on a
    board are listed (:func:`rank_method`)."""
    check_comparable(entries)
    names = [m.name for m in entries[0].metrics]
    metric_of = {(e.label, m.name): m for e in entries for m in e.metrics}
    labels = [e.label for e in entries]
    if len(set(labels)) != len(labels):
        raise BadInput(f"the same result is given twice: {next(x for x in labels if labels.count(x) > 1)}")
    not_compared: dict[str, str] = {}
    prepared: dict[str, tuple[_Layout, list[tuple[np.ndarray, np.ndarray]]]] = {}
    items_of: dict[str, list[str]] = {}
    dropped_of: dict[str, dict[str, list[str]]] = {}
    values: dict[str, list[float]] = {}
    recomputed: dict[str, bool] = {}
    for name in names:
        ms = [metric_of[(e.label, name)] for e in entries]
        nulls = [(e, m) for e, m in zip(entries, ms, strict=True) if m.value is None]
        if nulls and not intersection:
            e, m = nulls[0]
            not_compared[name] = (f"null in {e.label}" + (f": {m.null_reason}" if m.null_reason else "")
                                  + "; --intersection compares on the items every result has")
            continue
        items, dropped = _item_sets(entries, name, intersection)
        _check_sources(entries, ms, items, name)
        if not items:
            not_compared[name] = "no item in common"
            continue
        reuse = next((lay for lay, _ in prepared.values() if lay.same_units(ms[0], items)), None)
        layout = reuse if reuse is not None and ms[0].clusters is not None else _Layout.of(ms[0], items)
        cols = [layout.columns(m) for m in ms]
        computed = [_recomputed(e, m, layout, c, check=not dropped and not nulls)
                    for e, m, c in zip(entries, ms, cols, strict=True)]
        if any(v != v for v in computed):  # NaN: a stratum without items (a track with no common task)
            not_compared[name] = "a stratum has no item in common"
            continue
        items_of[name], dropped_of[name] = items, dropped
        prepared[name] = (layout, cols)
        # the output's own number; on fewer items (--intersection) the number those items give
        values[name] = computed if dropped or nulls else [m.value for m in ms]  # type: ignore[misc]
        recomputed[name] = bool(dropped or nulls)
    if not items_of:
        raise BadInput("nothing to compare: " + _grouped(not_compared))
    method = rank_method(len(entries), rank_sets)
    if method == K.METHOD:
        pairs, family = _adjacent_pairs(labels, values), 1
        why_method = ((f"{len(entries)} results: past {EXACT_PAIRS_UP_TO}, " if rank_sets == "auto" else
                       "--rank-sets max-t: ") + f"the {len(entries) * (len(entries) - 1) // 2:,} pairs are not "
                      "each tested: the max-t bootstrap over all of them with stepdown gives the rank sets and "
                      "the verdicts; the comparisons listed are the pairs adjacent on a board")
    else:
        pairs = list(itertools.combinations(range(len(entries)), 2))
        family = len(pairs) if len(entries) >= 3 else 1
    rank_info: dict[str, dict[str, Any]] = {}
    comparisons: list[dict[str, Any]] = [{"a": labels[i], "b": labels[j], "metrics": []} for i, j in pairs]
    leaderboards: dict[str, list[dict[str, Any]]] = {}
    for name, items in items_of.items():
        layout, cols = prepared[name]
        ms = [metric_of[(label, name)] for label in labels]
        sets: K.RankSets | None = None
        if method == K.METHOD:
            sets, rank_info[name] = _max_t(name, layout, cols, values[name], alpha, draws, seed, why_method)
            inferences = [K.pair_inference(sets, i, j, values[name][i], values[name][j], layout.g, ms[0].bounds)
                          for i, j in pairs]
        else:
            from benchscore.common.progress import Progress

            inferences = []
            with Progress(f"paired tests of {name} ({resamples:,} resamples)", total=len(pairs)) as bar:
                for i, j in pairs:
                    units = layout.units(cols[i], cols[j], bounds=ms[0].bounds)
                    inferences.append(P.infer_pair(units, resamples=resamples, rng=rng_for(seed, name, labels[i],
                                                                                             labels[j]),
                                                   binary=ms[0].binary))
                    bar.advance()
        floor, components = _floor(name, ms, labels, metric_of, items_of)
        ps = [r.p_value for r in inferences]
        adjusted = P.holm(ps) if family > 1 else None
        level_alpha = P.holm_level(adjusted, alpha) if adjusted is not None else alpha
        for k, ((i, j), r) in enumerate(zip(pairs, inferences, strict=True)):
            holm_p = adjusted[k] if adjusted is not None else None
            verdict, why = _verdict(r.p_value, r.smallest_attainable_p, alpha, family, holm_p, r.n_units)
            if method == K.METHOD:  # the verdict is the rank sets': say so
                why = _max_t_reason(rank_info[name], verdict, why, len(labels), alpha)
            ci, ci_reason = r.interval(level_alpha)
            if floor is not None:  # compare obeys the floor of the number's own interval
                why = f"{why}; and {floor}" if verdict == "cannot_separate_at_this_n" else floor
                verdict, ci, ci_reason = "cannot_separate_at_this_n", None, floor
            mde, mde_reason = (r.minimum_detectable_effect(level_alpha) if detectable_effects else
                               (None, "not computed: the leaderboard publishes no minimum detectable effect"))
            if verdict == "cannot_separate_at_this_n":
                mde, mde_reason = None, why
            fragility, fragility_reason = None, None
            if verdict == "differs" and method == K.METHOD:
                fragility_reason = ("not computed past the exact pairs: the max-t rank sets decide every pair at "
                                    "once")
            elif verdict == "differs":
                fragility = _fragility(layout, cols[i], cols[j], ms[0], r, k, ps, alpha, family, resamples,
                                       rng_for(seed, name, labels[i], labels[j], "fragility"))
            row: dict[str, Any] = {
                "name": name, "a": values[name][i], "b": values[name][j],
                "difference": values[name][i] - values[name][j], "verdict": verdict, "verdict_reason": why,
                "ci95": list(ci) if ci else None, "ci_level": 1.0 - level_alpha,
                "ci_method": {"mcnemar_exact": "mcnemar_inversion", "paired_t": "paired_t_inversion",
                              K.METHOD: "max_t_inversion"}.get(
                    r.test, "sign_flip_inversion"),
                **({"ci_reason": ci_reason} if ci_reason else {}),
                "p_value": r.p_value, **({"p_holm": holm_p} if holm_p is not None else {}), "test": r.test,
                "smallest_attainable_p": r.smallest_attainable_p, "n_items": len(items), "n_units": r.n_units,
                "standard_error": r.standard_error, "minimum_detectable_effect": mde,
                **({"mde_reason": mde_reason} if mde_reason else {}),
                **({"components": components} if floor is not None and components is not None else {}),
                "items_that_differ_most": layout.differ_most(cols[i], cols[j], top),
                **({"counts": {"a": ms[i].counts, "b": ms[j].counts}} if ms[i].counts else {}),
                **({"fragility": fragility} if fragility else {}),
                **({"fragility_reason": fragility_reason} if fragility_reason else {}),
            }
            comparisons[k]["metrics"].append(row)
        if method == K.METHOD:
            own = [(m.ci95, m.ci_reason) if not dropped_of[name] else
                   (None, "compared on the common items only: the output's interval is of all its items")
                   for m in ms]
            leaderboards[name] = _max_t_standings(labels, values[name], own, sets if floor is None else None,
                                                  [m.counts for m in ms])
        elif adjusted is not None or standings:
            deciding = adjusted if adjusted is not None else ps
            sep = {frozenset(pair) for k, pair in enumerate(pairs) if deciding[k] < alpha and floor is None}
            fragile = {frozenset(pair) for pair, c in zip(pairs, comparisons, strict=True)
                       if (c["metrics"][-1].get("fragility") or {}).get("fragile")}
            # on fewer items than the output's own (--intersection), the interval of the items compared
            own = [_interval_on(layout, c, m.bounds) if recomputed[name] else (m.ci95, m.ci_reason, m.ci_method)
                   for m, c in zip(ms, cols, strict=True)]
            leaderboards[name] = _standings(labels, values[name], own, sep, [m.counts for m in ms], fragile)
    doc: dict[str, Any] = {
        "format": "benchscore-compare",
        "kind": entries[0].kind,
        "same": entries[0].same,
        "results": labels,
        "alpha": alpha,
        "level": LEVEL,
        "comparisons": comparisons,
    }
    if leaderboards:
        doc["leaderboards"] = leaderboards
    if rank_info:
        doc["rank_sets"] = rank_info
    doc["not_compared"] = not_compared
    doc["intersection"] = {name: {"items": len(items_of[name]), "dropped": d}
                           for name, d in dropped_of.items() if d} if intersection else None
    return doc


def labels_of(paths: Sequence[Path]) -> list[str]:
    """A short label per file: its name, with as many parent folders as it takes to tell files of one
    name apart (so a comparison does not depend on where the files are)."""
    parts = [Path(os.path.abspath(p)).parts for p in paths]
    depth = 1
    while True:
        labels = ["/".join(x[-depth:]) for x in parts]
        if len(set(labels)) == len(labels) or depth >= max(len(x) for x in parts):
            return labels
        depth += 1


def read_outputs(paths: Sequence[Path]) -> list[tuple[str, Any, str]]:
    """``(label, document, sha256)`` of each output file (strict JSON)."""
    from benchscore.common.provenance import sha256_bytes
    from benchscore.common.readers import loads_json, read_json_bytes

    out = []
    seen: set[str] = set()
    for p, label in zip(paths, labels_of(paths), strict=True):
        real = os.path.realpath(p)  # never raises (a link loop is refused by the reader below)
        if real in seen:
            raise BadInput("given twice", source=p)
        seen.add(real)
        raw = read_json_bytes(p)
        out.append((label, loads_json(raw, p), sha256_bytes(raw)))
    return out


#: how a retried sample x epoch counts, in words (``--retries``; the counts beside every number name it)
RETRIES_WORDS = {"last-attempt": "the last attempt stands (inspect_ai's rule)",
                 "first-attempt": "counted as their first attempt ended: errored (--retries first-attempt)"}
#: how many score edits :func:`counts_text` names before it gives the count
NAMED_EDITS = 3


def _edit_text(e: dict[str, Any]) -> str:
    return (f"sample {e['sample']} epoch {e['epoch']} {e['scorer']} by {e['author'] or '(no author recorded)'} "
            f"({e['reason'] or 'no reason recorded'}): {e['original']!r} -> {e['value']!r}")


def counts_text(counts: dict[str, Any] | None) -> str:
    """What a number of another tool's results stands on, in words: ``12 scored, 1 errored, 0 unscored
    (sample x epochs; errors as-wrong)``, then what else its files record when there is any: missing epochs,
    excluded samples, limits hit, retried attempts with the retries policy, edited scores (who, why, what),
    samples the reducer gave no value, a result with no score at all, and a run that did not finish (NOT
    FINAL). The terminal, compare's report page and the leaderboard page all show this text."""
    if not counts:
        return "-"
    extra = [f"{counts['missing']} missing" if counts.get("missing") else "",
             f"{counts['excluded']} samples excluded" if counts.get("excluded") else "",
             f"{counts['limited']} hit a limit" if counts.get("limited") else "",
             f"{counts['retried']} retried: {RETRIES_WORDS.get(counts.get('retries') or 'last-attempt')}"
             if counts.get("retried") else "",
             f"{counts['undefined']} samples without a value from the epoch reducer" if counts.get("undefined") else ""]
    text = (f"{counts['scored']} scored, {counts['errored']} errored, {counts['unscored']} unscored"
            + "".join(f", {x}" for x in extra if x) + f" (sample x epochs; errors {counts['errors']})")
    if not counts["scored"] and (counts.get("sample_epochs") or counts.get("missing")):
        text += "; no sample x epoch has a score"
    edits = counts.get("score_edits") or ()
    if counts.get("edited"):
        more = len(edits) - NAMED_EDITS
        text += (f"; {counts['edited']} edited after the run, accepted (--accept-score-edits): "
                 + "; ".join(_edit_text(e) for e in edits[:NAMED_EDITS])
                 + (f"; and {more} more (every one in the JSON's counts.score_edits)" if more > 0 else ""))
    if counts.get("status") not in (None, "success", "unknown"):
        text += f"; NOT FINAL: the run ended with status {counts['status']}" + (
            f" ({counts['status_error']})" if counts.get("status_error") else "")
    return text


#: a verdict in words, one per verdict everywhere (help, terminal, report, leaderboard)
VERDICT_WORDS = {"differs": "differs", "not_separated": "not separated",
                 "cannot_separate_at_this_n": "cannot separate at this n"}


#: the fragility search's method, in words
FRAGILITY_METHOD_WORDS = {"exact": "exact: every smaller set of units tried",
                          "leave_one_out_then_greedy": "every single unit tried; past one an upper bound",
                          "greedy": "an upper bound: the units favouring the winner most removed first"}


def fragility_text(row: dict[str, Any]) -> str | None:
    """What a differs verdict rests on, in words (terminal, compare's report page, leaderboard page):
    ``rests on 2 of 20 units (exact: ...): removing t1, t2 changes it; FRAGILE``; None for another verdict."""
    f = row.get("fragility")
    if not f:
        return f"rests on: {row['fragility_reason']}" if row.get("fragility_reason") else None
    names = ", ".join(f["removed"]) + (", ..." if f["units_to_change"] > len(f["removed"]) else "")
    unit = "unit" if f["n_units"] == 1 else "units"
    text = (f"rests on {f['units_to_change']} of {f['n_units']} {unit} ({FRAGILITY_METHOD_WORDS[f['method']]}): "
            f"removing {names} changes it")
    if f["fragile"]:
        text += (f"; FRAGILE (one unit, or under {F.FRAGILE_SHARE:.0%} of the units)")
    return text


def groups_text(groups: list[str] | None) -> str:
    """A result's group labels for reading: separated by commas (``a, b``; ``ab, ac``), never run
    together; ``-`` when the board has none (its rank interval alone)."""
    return ", ".join(groups) if groups else "-"


def print_comparison(doc: dict[str, Any]) -> None:
    """The answer first (each pair's verdict per metric, with the difference and its interval from the
    same test), then the reasons, the leaderboards and the items that differ most; every number of the JSON."""
    from benchscore.common.terminal import PERCENT_METRICS, fmt, pct, print_line, print_table

    def num(v: Any, metric: str = "") -> str:  # rounded for reading (4 significant digits), % for percentages
        return pct(v) if metric in PERCENT_METRICS and v is not None else fmt(v)

    def ci(row: dict[str, Any]) -> str:
        if not row["ci95"]:
            return "-"
        unit = " %" if row["name"] in PERCENT_METRICS else ""
        return f"[{fmt(row['ci95'][0])}, {fmt(row['ci95'][1])}]{unit}"

    print_line(f"compare {doc['kind']}: {len(doc['results'])} results; same {', '.join(doc['same'])}")
    holm = "leaderboards" in doc and not doc.get("rank_sets")
    for name, board in doc.get("leaderboards", {}).items():
        info = (doc.get("rank_sets") or {}).get(name)
        if info is not None:
            print_line(f"{name}: {info['method_reason']}" + (f"; {info['reason']}" if info.get("reason") else
                       f"; critical value {fmt(info['critical_value'])} (Monte-Carlo se "
                       f"{fmt(info['critical_value_mc_standard_error'])}, {info['draws']} draws, "
                       f"{len(info['steps'])} steps; {info['pairs_within_mc_error']} pairs within its "
                       "Monte-Carlo error)"))
        reason = board[0].get("groups_reason") if board else None
        print_table((f"leaderboard {name}: rank intervals (95 %, simultaneous) and groups from the pairs Holm "
                     f"separates at alpha {doc['alpha']}; results sharing a group label are not separated"
                     if info is None else f"leaderboard {name}: rank sets (95 %, simultaneous) from the pairs the "
                     f"max-t stepdown separates at alpha {doc['alpha']}")
                    + (f" ({reason})" if reason else ""),
                    ["rank_range", "groups", "label", "value", "ci95", "indistinguishable_from", "equal_to",
                     *(["counts"] if any("counts" in r for r in board) else []),
                     *(["fragile_separations"] if any("fragile_separations" in r for r in board) else [])],
                    [(f"{r['rank_range'][0]}-{r['rank_range'][1]}", groups_text(r["groups"]), r["label"],
                      num(r["value"], name),
                      ci({"ci95": r["ci95"], "name": name}) if r["ci95"] else f"- ({r.get('ci_reason')})",
                      ", ".join(r["indistinguishable_from"]) or "-", ", ".join(r["equal_to"]) or "-",
                      *([counts_text(r.get("counts"))] if any("counts" in x for x in board) else []),
                      *([", ".join(r.get("fragile_separations") or []) or "-"]
                        if any("fragile_separations" in x for x in board) else []))
                     for r in board])
    for c in doc["comparisons"]:
        levels = sorted({m["ci_level"] for m in c["metrics"]})
        level = " / ".join(f"{100 * x:.4g} %" for x in levels)
        counted = any("counts" in m for m in c["metrics"])
        cols = ["metric", "verdict", "a", "b", "difference", "ci", "p_value", *(["p_holm"] if holm else []), "test",
                "n_items", "n_units", "smallest_attainable_p", "standard_error", "minimum_detectable_effect",
                *(["counts a", "counts b"] if counted else [])]
        print_table(f"a = {c['a']}, b = {c['b']} (difference a - b; ci: the differences the test keeps, at {level}"
                    + (", matching Holm" if holm else "") + ")", cols, [
            (m["name"], VERDICT_WORDS[m["verdict"]], num(m["a"], m["name"]), num(m["b"], m["name"]),
             num(m["difference"], m["name"]), ci(m), num(m["p_value"]), *([num(m.get("p_holm"))] if holm else []),
             m["test"], m["n_items"], m["n_units"], num(m["smallest_attainable_p"]),
             num(m["standard_error"], m["name"]), num(m["minimum_detectable_effect"], m["name"]),
             *([counts_text(m["counts"]["a"]), counts_text(m["counts"]["b"])] if counted else []))
            for m in c["metrics"]])
        for m in c["metrics"]:
            why = [m["verdict_reason"]]
            if m.get("ci_reason") and m["ci_reason"] not in m["verdict_reason"]:
                why.append(f"no interval: {m['ci_reason']}")
            if m.get("mde_reason") and m["mde_reason"] != m["verdict_reason"]:
                why.append(f"no minimum detectable effect: {m['mde_reason']}")
            if fragility_text(m):
                why.append(fragility_text(m))
            print_line(f"  {m['name']}: {VERDICT_WORDS[m['verdict']]} ({'; '.join(why)})")
    for c in doc["comparisons"]:
        for m in c["metrics"]:
            if m["items_that_differ_most"]:
                print_table(f"{m['name']}: the items that differ most ({c['a']} vs {c['b']})",
                            ["item", *(["unit"] if "unit" in m["items_that_differ_most"][0] else []), "a", "b",
                             "difference"],
                            [(r["item"], *([r["unit"]] if "unit" in r else []), num(r["a"], m["name"]),
                              num(r["b"], m["name"]), num(r["difference"], m["name"]))
                             for r in m["items_that_differ_most"]])
    for name, why in doc["not_compared"].items():
        print_line(f"not compared: {name} ({why})")
    if doc["intersection"]:
        for name, info in doc["intersection"].items():
            print_line(f"{name}: compared on {info['items']} common items; dropped "
                       + "; ".join(f"{k}: {len(v)} ({', '.join(map(str, v[:3]))}{', ...' if len(v) > 3 else ''})"
                                   for k, v in info["dropped"].items()))
