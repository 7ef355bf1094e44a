"""Small statistics shared by the domains."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def phi(z):
    """Standard normal CDF, Phi(z) = P(Z <= z), by ``scipy.special.ndtr`` (imported on first use)."""
    from scipy.special import ndtr

    return ndtr(z)


def sample_std(values: Sequence[float] | np.ndarray) -> float:
    """Sample standard deviation s = sqrt(sum((x - mean)^2) / (n - 1)); needs n >= 2."""
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        raise ValueError("sample_std needs at least two values")
    return float(np.std(arr, ddof=1))


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean of a non-empty sequence (math.fsum for exactness)."""
    if len(values) == 0:
        raise ValueError("mean of an empty sequence")
    return math.fsum(values) / len(values)
