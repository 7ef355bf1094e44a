"""The umbrella ``benchscore`` command: mounts each domain's click group, plus ``demo`` and ``schema``.

Each domain's ``cli`` module provides:

- ``group``: its click group (mounted as ``benchscore DOMAIN``);
- ``FORMATS``: a mapping from format name to pydantic model (for ``benchscore schema``);
- ``demo(out_dir: Path) -> None``: runs the domain's demo on bundled data into ``out_dir``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import click
import orjson

from benchscore import __version__
from benchscore.common.cli import group
from benchscore.common.errors import BadInput
from benchscore.common.report import console

DOMAINS = ("tcsexam", "mira", "rxn", "swarm")


def _domain(name: str) -> ModuleType:
    return importlib.import_module(f"benchscore.{name}.cli")


def _formats() -> dict[str, type]:
    out: dict[str, type] = {}
    for name in DOMAINS:
        out.update(getattr(_domain(name), "FORMATS", {}))
    return out


@group("benchscore", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="benchscore")
def cli() -> None:
    """Scoring contracts implemented exactly: tcsexam, mira, rxn, swarm."""


@cli.command()
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo-out"),
    show_default=True,
    help="Folder for every domain's demo outputs (one sub-folder per domain).",
)
@click.option("--only", type=click.Choice(DOMAINS), multiple=True, help="Run only these domains' demos.")
def demo(output_dir: Path, only: tuple[str, ...]) -> None:
    """Run every domain's demo on bundled data, in turn, into one output folder."""
    for name in only or DOMAINS:
        module = _domain(name)
        run = getattr(module, "demo", None)
        if run is None:
            continue
        console.rule(f"[bold]{name}")
        run(output_dir / name)
    console.rule()
    console.print(f"demo outputs are in [bold]{output_dir}[/bold]")


@cli.command()
@click.argument("name", required=False)
def schema(name: str | None) -> None:
    """Print the JSON Schema of a file format (without NAME: list the formats)."""
    formats = _formats()
    if name is None:
        for key in sorted(formats):
            doc = (formats[key].__doc__ or "").strip().splitlines()
            click.echo(f"{key}\t{doc[0] if doc else ''}")
        return
    if name not in formats:
        raise BadInput(f"unknown format {name!r}; known formats: {', '.join(sorted(formats))}")
    click.echo(orjson.dumps(formats[name].model_json_schema(), option=orjson.OPT_INDENT_2).decode())


for _name in DOMAINS:
    cli.add_command(_domain(_name).group, _name)


def main() -> None:
    cli()
