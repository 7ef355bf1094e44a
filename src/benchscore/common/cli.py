"""Click plumbing shared by every domain: one-line errors, exit code 2, no tracebacks."""

from __future__ import annotations

import sys
from typing import Any

import click

from .errors import BenchscoreError


class Group(click.Group):
    """A click group that turns :class:`BenchscoreError` into one line on stderr and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BenchscoreError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except BenchscoreError as exc:  # raised outside invoke (e.g. in a result callback)
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)


def group(name: str | None = None, **kwargs: Any):
    """Decorator: ``@group("tcsexam")`` makes a :class:`Group`."""
    kwargs.setdefault("cls", Group)
    return click.group(name, **kwargs)
