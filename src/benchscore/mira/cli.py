"""CLI of benchscore.mira (being built)."""

from benchscore.common.cli import group as _group

FORMATS: dict[str, type] = {}


@_group("mira")
def group() -> None:
    """mira commands."""
