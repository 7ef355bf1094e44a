"""CLI of benchscore.rxn (being built)."""

from benchscore.common.cli import group as _group

FORMATS: dict[str, type] = {}


@_group("rxn")
def group() -> None:
    """rxn commands."""
