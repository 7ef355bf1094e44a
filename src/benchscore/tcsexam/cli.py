"""CLI of benchscore.tcsexam (being built)."""

from benchscore.common.cli import group as _group

FORMATS: dict[str, type] = {}


@_group("tcsexam")
def group() -> None:
    """tcsexam commands."""


def main() -> None:
    group()
