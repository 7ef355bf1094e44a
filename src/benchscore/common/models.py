"""Base pydantic model for every file format: strict, no extra keys, finite floats only."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Format(BaseModel):
    """Base of all input/output formats. Unknown keys and NaN/Infinity are rejected."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, populate_by_name=True)


class Interval(Format):
    """A 95 % interval written beside a number (``benchscore.common.stats.beside``; docs/statistics.md)."""

    ci95: list[float] | None = Field(min_length=2, max_length=2,
                                     description="[low, high], or null when the data cannot support one")
    ci_method: Literal["exact_mid_p", "cluster_wilson", "units_wilson", "skew_corrected_t", "mover"] | None = Field(
        description="how the interval was made (the method of a null interval: the one the number would have had)")
    ci_reason: str | None = Field(None, description="why ci95 is null")
