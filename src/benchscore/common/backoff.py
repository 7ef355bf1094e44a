"""Exponential backoff, shared by every retry loop (the model client, the swarm's services)."""

from __future__ import annotations


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """Delay before retry number ``attempt`` (1-based): ``min(cap, base * 2**(attempt-1))``."""
    return min(cap, base * (2 ** (attempt - 1)))
