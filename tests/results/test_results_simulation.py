"""The results room's numbers by simulation (issue 31, "Done means": a hand computation on a small case is in
test_results_leaderboard.py; this is the larger one): seeded draws of whole evaluations, as the room holds them
after reading (samples x epochs, errored epochs, a metadata field as the unit), through the room's ``entries`` and
``compare``'s one inference. Each check can fail: a test that rejects too often under the null, rank intervals that
miss the true ranks, or per-result intervals that undercover all show up as a rate outside its band.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchscore.results.comparison import Options, entries
from benchscore.results.formats import Evaluation, MetricInfo, SampleResult
from benchscore.stats.compare import compare

METRIC = "quiz/match"


def evaluation(model: str, outcomes: np.ndarray, errored: np.ndarray, topics: list[str]) -> Evaluation:
    """One model's evaluation: ``outcomes[s, e]`` the 0/1 value of sample s in epoch e (an errored epoch has
    no value: the errors policy decides what it counts as)."""
    samples = [
        SampleResult("quiz", f"s{s}", e + 1, {METRIC: None if errored[s, e] else float(outcomes[s, e])},
                     identity=f"id{s}", metadata={"topic": topics[s]},
                     error="RuntimeError('boom')" if errored[s, e] else None)
        for s in range(outcomes.shape[0]) for e in range(outcomes.shape[1])]
    return Evaluation(tool="inspect_ai", tool_version="0.3.285", model=model, source=Path(f"{model}.eval"),
                      settings={"quiz": {"task args": {}, "epochs": outcomes.shape[1]}},
                      metrics={METRIC: MetricInfo(METRIC, "quiz", higher_is_better=True)}, samples=samples,
                      files=[Path(f"{model}.eval")], identity_method="sha256 of each sample's input and target",
                      epochs=outcomes.shape[1], status="success", run="run-1")


@pytest.mark.parametrize(("cluster", "holds"), [("topic", True), (None, False)])
def test_under_the_null_with_topics_as_units_the_test_rejects_at_most_its_level(cluster, holds):
    """Two models with the same per-sample success probabilities (drawn per topic and sample, so samples of a
    topic are correlated), 3 epochs, 3 % of epochs errored (as-wrong), the topic the unit (8 units of 3): the
    verdict 'differs' in at most 5 % of draws (+ 2.5 standard errors), and the interval excludes 0 exactly when
    the verdict is 'differs' (one inference). The same data with each sample its own unit (no --cluster) must
    reject too often: the simulation sees a wrong unit."""
    rng = np.random.default_rng(20261204)
    n_topics, per_topic, n_epochs, draws = 8, 3, 3, 400
    topics = [f"t{s // per_topic}" for s in range(n_topics * per_topic)]
    rejected = 0
    for _ in range(draws):
        topic_level = rng.normal(0.0, 1.0, n_topics)
        logits = np.repeat(topic_level, per_topic) + rng.normal(0.0, 0.7, n_topics * per_topic)
        evs = []
        for model in ("a", "b"):
            # a model x topic interaction (mean zero: the null holds): samples of a topic are not independent
            # units for the difference, so treating samples as units would reject far too often
            own = 1.0 / (1.0 + np.exp(-(logits + np.repeat(rng.normal(0.0, 1.5, n_topics), per_topic))))
            outcomes = rng.random((own.size, n_epochs)) < own[:, None]
            errored = rng.random((own.size, n_epochs)) < 0.03
            evs.append(evaluation(f"mockllm/{model}", outcomes, errored, topics))
        got, _ = entries(evs, Options(metrics=(METRIC,), cluster=cluster))
        doc = compare(got, resamples=1000, seed=int(rng.integers(1 << 30)), detectable_effects=False)
        (row,) = doc["comparisons"][0]["metrics"]
        assert row["n_units"] == (n_topics if cluster else n_topics * per_topic)
        excludes_zero = row["ci95"] is not None and not (row["ci95"][0] <= 0.0 <= row["ci95"][1])
        assert excludes_zero == (row["verdict"] == "differs"), row
        rejected += row["verdict"] == "differs"
    rate = rejected / draws
    assert (rate <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / draws)) == holds, rate


@pytest.mark.parametrize("per_model", [(0.45, 0.6, 0.6, 0.85)])
def test_rank_intervals_hold_the_true_ranks_and_each_interval_its_true_mean(per_model):
    """Four models of known accuracy over 40 samples x 2 epochs (sample difficulty shared by every model, so
    results are paired), errors as-wrong at 2 %: each model's rank interval holds its true rank (tied models:
    either tied rank) for all four models at once in at least 95 % of draws (minus 2.5 standard errors), and
    each result's own 95 % interval covers its expected score in 95 % of draws (minus 2.5 standard errors, at
    most 99.5 %)."""
    rng = np.random.default_rng(31)
    n_samples, n_epochs, draws, error_rate = 40, 2, 400, 0.02
    means = np.array(per_model)
    true_ranks = [{1 + int(np.sum(means > m)) + k for k in range(int(np.sum(means == m)))} for m in means]
    topics = [f"t{s}" for s in range(n_samples)]
    grid = np.random.default_rng(0).normal(0.0, 0.8, 200_000)
    offsets = []  # per model, the logit offset that makes its expected accuracy `mean` over the difficulty law
    for mean in means:
        lo, hi = -6.0, 6.0
        for _ in range(50):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if np.mean(1 / (1 + np.exp(-(mid + grid)))) < mean else (lo, mid)
        offsets.append((lo + hi) / 2)
    held = 0
    covered = np.zeros(len(means))
    for _ in range(draws):
        shift = rng.normal(0.0, 0.8, n_samples)  # the sample's difficulty, shared by every model
        evs = []
        expected = []
        for i, mean in enumerate(means):
            p = 1 / (1 + np.exp(-(offsets[i] + shift)))
            expected.append(mean * (1 - error_rate))  # as-wrong: an errored epoch scores 0
            outcomes = rng.random((n_samples, n_epochs)) < p[:, None]
            errored = rng.random((n_samples, n_epochs)) < error_rate
            evs.append(evaluation(f"mockllm/m{i}", outcomes, errored, topics))
        got, _ = entries(evs, Options(metrics=(METRIC,)))
        doc = compare(got, resamples=1000, seed=int(rng.integers(1 << 30)), detectable_effects=False)
        board = {r["label"]: r for r in doc["leaderboards"][METRIC]}
        ok = True
        for i in range(len(means)):
            row = board[f"mockllm/m{i}"]
            low, high = row["rank_range"]
            ok &= any(low <= t <= high for t in true_ranks[i])
            if row["ci95"] is not None and row["ci95"][0] <= expected[i] <= row["ci95"][1]:
                covered[i] += 1
        held += ok
    floor = 0.95 - 2.5 * np.sqrt(0.05 * 0.95 / draws)
    assert held / draws >= floor, held / draws
    assert np.all(covered / draws >= floor), covered / draws
    assert np.all(covered / draws <= 0.995), covered / draws
