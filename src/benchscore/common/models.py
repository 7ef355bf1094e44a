"""Base pydantic model for every file format: strict, no extra keys, finite floats only."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Format(BaseModel):
    """Base of all input/output formats. Unknown keys and NaN/Infinity are rejected."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, populate_by_name=True)
