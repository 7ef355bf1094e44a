"""CLI of benchscore.swarm (being built)."""

from benchscore.common.cli import group as _group

FORMATS: dict[str, type] = {}


@_group("swarm")
def group() -> None:
    """swarm commands."""
