"""Group labels (``stats/paired.py`` ``letters``) that cannot be misread (issue 35, point 3).

Over every separation graph of 2 to 6 results and over random graphs of 30 to 60 results, two results
share a displayed label if and only if they are not separated: in the labels (the JSON's ``groups``
lists) and in the text every page and terminal shows (``groups_text``, read back by splitting it).
The groups are exactly the maximal sets of results no two of which are separated, checked against a
brute-force enumeration (small graphs) and against Piepho's insert-absorb written out here. Past 26
groups every label has two letters; past 676, there are none, and the reason says the rank interval
stands alone.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchscore.stats import paired as P
from benchscore.stats.compare import groups_text


def _displayed(marks: dict[int, list[str]]) -> dict[int, set[str]]:
    """What a reader sees, read back: the shown text split at its separators."""
    return {r: set(groups_text(labels).split(", ")) for r, labels in marks.items()}


def _check_iff(n: int, separated, marks: dict[int, list[str]]) -> None:
    shown = _displayed(marks)
    for i in range(n):
        assert marks[i], f"result {i} has no group"
        assert len(set(marks[i])) == len(marks[i]), marks[i]
        for j in range(i + 1, n):
            assert bool(set(marks[i]) & set(marks[j])) == (not separated(i, j)), (i, j, marks)
            assert bool(shown[i] & shown[j]) == (not separated(i, j)), (i, j, marks)
    names = {x for v in marks.values() for x in v}
    width = {len(x) for x in names}
    assert width == ({1} if len(names) <= 26 else {2}), names  # one letter each, or two letters each


def _maximal_cliques_brute(n: int, separated) -> set[frozenset[int]]:
    """Every largest set of results no two of which are separated, by enumerating all subsets."""
    cliques = [frozenset(c) for k in range(1, n + 1) for c in itertools.combinations(range(n), k)
               if all(not separated(i, j) for i, j in itertools.combinations(c, 2))]
    return {c for c in cliques if not any(c < d for d in cliques)}


def _insert_absorb(order: list[int], separated) -> list[set[int]]:
    """Piepho's (2004) insert-absorb, as the code computed letters before: split every column holding a
    separated pair, then drop columns inside others."""
    columns: list[set[int]] = [set(order)]
    for x in range(len(order)):
        for y in range(x + 1, len(order)):
            i, j = order[x], order[y]
            if not separated(i, j):
                continue
            grown: list[set[int]] = []
            for col in columns:
                grown.extend([col - {i}, col - {j}] if i in col and j in col else [col])
            kept: list[set[int]] = []
            for c in sorted((c for c in grown if c), key=len, reverse=True):
                if not any(c <= k for k in kept):
                    kept.append(c)
            columns = kept
    return columns


def _groups_of(marks: dict[int, list[str]]) -> set[frozenset[int]]:
    by_label: dict[str, set[int]] = {}
    for r, labels in marks.items():
        for x in labels:
            by_label.setdefault(x, set()).add(r)
    return {frozenset(v) for v in by_label.values()}


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_every_separation_graph_of_2_to_6_results(n):
    """All 2^(n(n-1)/2) graphs (32,768 at six results): labels shared exactly when not separated, and
    the groups are the maximal cliques of "not separated", labelled in the order of their best member."""
    pairs = list(itertools.combinations(range(n), 2))
    for mask in range(1 << len(pairs)):
        sep = {frozenset(p) for k, p in enumerate(pairs) if mask >> k & 1}

        def separated(i, j, sep=sep):
            return frozenset((i, j)) in sep

        marks = P.letters(list(range(n)), separated)
        _check_iff(n, separated, marks)
        if n <= 5 or mask % 37 == 0:  # the brute force over subsets is the slow part at six
            assert _groups_of(marks) == _maximal_cliques_brute(n, separated)
        # labelled in order: a's group holds the best result, and the groups by label run from the top down
        members = [sorted(r for r, v in marks.items() if name in v) for name in sorted({x for v in marks.values()
                                                                                          for x in v})]
        assert members == sorted(members) and members[0][0] == 0


def _value_graph(rng: np.random.Generator, n: int):
    """A board as data make one: values with standard errors, separated when apart by more than a
    threshold times their combined standard error (a different threshold per board)."""
    values = np.sort(rng.normal(0.6, rng.uniform(0.02, 0.2), n))[::-1]
    se = rng.uniform(0.005, 0.03, n)
    c = rng.uniform(1.0, 4.0)
    far = np.abs(values[:, None] - values[None, :]) > c * np.hypot(se[:, None], se[None, :])
    rows = far.tolist()
    return lambda i, j: rows[i][j]


@settings(max_examples=150, deadline=None)
@given(st.integers(30, 60), st.integers(0, 2**32 - 1))
def test_random_boards_of_30_to_60_results(n, seed):
    rng = np.random.default_rng(seed)
    separated = _value_graph(rng, n)
    order = list(range(n))
    marks = P.letters(order, separated)  # boards of this size are always labelled
    _check_iff(n, separated, marks)
    assert _groups_of(marks) == {frozenset(c) for c in _insert_absorb(order, separated)}


@settings(max_examples=60, deadline=None)
@given(st.integers(30, 60), st.integers(0, 2**32 - 1), st.sampled_from([0.02, 0.1, 0.5, 0.9, 0.98]))
def test_random_graphs_of_30_to_60_results(n, seed, density):
    """Separations drawn at random (no order behind them): labelled, shared exactly when not
    separated; or, where they form more groups than labels name, none and the reason."""
    rng = np.random.default_rng(seed)
    far = np.triu(rng.random((n, n)) < density, 1)
    far = far | far.T

    def separated(i, j):
        return bool(far[i, j])

    order = list(rng.permutation(n))
    try:
        marks = P.letters(order, separated)
    except P.TooManyGroups as exc:
        assert "rank interval alone" in str(exc)
        return
    _check_iff(n, separated, marks)


def test_past_26_groups_every_label_has_two_letters():
    """A chain of 28 results, each separated from all but its neighbours: 27 groups, aa .. ba; the
    issue's misreading (``aaab`` read as sharing ``a`` with a result far above) cannot happen."""
    n = 28

    def separated(i, j):
        return abs(i - j) > 1

    marks = P.letters(list(range(n)), separated)
    assert marks[0] == ["aa"] and marks[1] == ["aa", "ab"] and marks[27] == ["ba"]
    _check_iff(n, separated, marks)
    assert groups_text(marks[1]) == "aa, ab"
    # 26 groups still get one letter each
    marks = P.letters(list(range(27)), separated)
    assert marks[0] == ["a"] and marks[26] == ["z"]


def test_past_676_groups_there_are_no_labels_and_the_reason_says_so():
    """Twenty results in ten separated pairs form 2^10 = 1,024 groups: more than two-letter labels name."""
    def separated(i, j):
        return i // 2 == j // 2

    with pytest.raises(P.TooManyGroups, match="more than 676 groups.*the rank interval alone"):
        P.letters(list(range(20)), separated)
    # nine pairs (512 groups) are still labelled, two letters each
    marks = P.letters(list(range(18)), separated)
    assert len({x for v in marks.values() for x in v}) == 512
    _check_iff(18, separated, marks)


def test_a_board_of_2000_results_is_handled_in_bounded_work():
    """A large board labels what two letters can name, else says why: never a search without end."""
    rng = np.random.default_rng(7)
    separated = _value_graph(rng, 2000)
    with pytest.raises(P.TooManyGroups):
        P.letters(list(range(2000)), separated)
