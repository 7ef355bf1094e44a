"""The umbrella ``benchscore`` command: mounts each domain's click group, plus ``demo``, ``schema`` and ``list``.

Each domain's ``cli`` module provides:

- ``group``: its click group (mounted as ``benchscore DOMAIN``, imported only when used);
- ``FORMATS``: a mapping from format name to pydantic model (for ``benchscore schema``);
- ``demo(out_dir: Path) -> None``: runs the domain's demo on bundled data into ``out_dir``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import click

from benchscore import __version__
from benchscore.common.cli import LazyGroup
from benchscore.common.errors import BadInput

#: domain -> the one-line help ``benchscore --help`` shows without importing the domain
DOMAINS: dict[str, str] = {
    "tcsexam": "TCSExam composite index (30P+30S+30C+10O), fixed-reference Solver scores.",
    "mira": "Mira agent benchmark: repetitions, timing credit, reliability, judge.",
    "rxn": "Reaction-condition testset V6: build question sets, score predictions.",
    "swarm": "swarm-minimal: pheromone task pool, acceptance S07-S10, L01/L02.",
}


def _domain(name: str) -> ModuleType:
    return importlib.import_module(f"benchscore.{name}.cli")


def _formats() -> dict[str, type]:
    out: dict[str, type] = {}
    for name in DOMAINS:
        out.update(getattr(_domain(name), "FORMATS", {}))
    return out


@click.group(
    "benchscore",
    cls=LazyGroup,
    lazy={name: (f"benchscore.{name}.cli", "group", help_line) for name, help_line in DOMAINS.items()},
    context_settings={"help_option_names": ["-h", "--help"]},
)
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
@click.option("--only", type=click.Choice(list(DOMAINS)), multiple=True, help="Run only these domains' demos.")
def demo(output_dir: Path, only: tuple[str, ...]) -> None:
    """Run every domain's demo on bundled data, in turn, into one output folder (replaced as a whole)."""
    from benchscore.common.atomic import replaced_directory
    from benchscore.common.report import console

    with replaced_directory(output_dir):
        for name in only or DOMAINS:
            console.rule(f"[bold]{name}")
            _domain(name).demo(output_dir / name)
        _demo_report(output_dir, only or tuple(DOMAINS))
    console.rule()
    console.print(f"demo outputs are in [bold]{output_dir}[/bold]; the report is [bold]{output_dir / 'index.html'}"
                  "[/bold]")


# ---- the HTML report (each domain's ``figures`` module draws its outputs) -------------------------
def _figures(name: str) -> ModuleType:
    return importlib.import_module(f"benchscore.{name}.figures")


def _read_outputs(paths: list[tuple[Path, str]], *, strict: bool) -> dict[str, list]:
    """domain -> its outputs (in the order given); an output of no known kind is refused (``strict``)
    or skipped."""
    from benchscore.common import html

    found: dict[str, list] = {name: [] for name in DOMAINS}
    seen: set[Path] = set()
    for path, label in paths:
        if path.resolve() in seen:  # the same file given twice is one output
            continue
        seen.add(path.resolve())
        sha256, doc = html.read_output(path)
        for name in DOMAINS:
            kind = _figures(name).kind_of(doc)
            if kind is not None:
                found[name].append(html.Output(path=path, label=label, sha256=sha256, doc=doc, kind=kind))
                break
        else:
            if strict:
                raise html.unknown_kind(path, doc, [f"{k} ({cmd})" for n in DOMAINS
                                                    for k, cmd in _figures(n).KINDS.items()])
    return found


def _report_page(found: dict[str, list], title: str, *, back: str | None = None) -> str:
    from benchscore.common import html

    sections = [html.Section(name, _figures(name).TITLE, _figures(name).render(outs))
                for name, outs in found.items() if outs]
    return html.page(title, sections, [o for outs in found.values() for o in outs], back=back)


@cli.command()
@click.argument("outputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write (one self-contained file).")
@click.option("--title", default="benchscore report", show_default=True, help="The page's title.")
def report(outputs: tuple[Path, ...], output: Path, title: str) -> None:
    """Draw the JSON OUTPUTS of benchscore commands as one self-contained HTML page (figures and tables)."""
    from benchscore.common.atomic import atomic_write_text
    from benchscore.common.report import print_line

    found = _read_outputs([(p, str(p)) for p in outputs], strict=True)
    atomic_write_text(output, _report_page(found, title))
    for name, outs in found.items():
        for o in outs:
            print_line(f"{name} {o.kind}: {o.label}")
    print_line(f"report: {output}")


def _demo_report(out: Path, names: tuple[str, ...]) -> None:
    """``OUT/index.html`` and ``OUT/<domain>.html``: every demo output of a kind the report draws."""
    from benchscore.common import html
    from benchscore.common.atomic import atomic_write_text

    entries = []
    for name in names:
        paths = sorted((out / name).rglob("*.json"))
        found = _read_outputs([(p, str(p.relative_to(out))) for p in paths], strict=False)
        atomic_write_text(out / f"{name}.html", _report_page(found, f"benchscore demo: {name}", back="index.html"))
        entries.append((name, _figures(name).TITLE, f"{name}.html", found[name]))
    atomic_write_text(out / "index.html", html.index_page("benchscore demo report", entries))


@cli.command()
@click.argument("name", required=False)
def schema(name: str | None) -> None:
    """Print the JSON Schema of a file format (without NAME: list the formats)."""
    import orjson

    formats = _formats()
    if name is None:
        for key in sorted(formats):
            doc = (formats[key].__doc__ or "").strip().splitlines()
            click.echo(f"{key}\t{doc[0] if doc else ''}")
        return
    if name not in formats:
        raise BadInput(f"unknown format {name!r}; known formats: {', '.join(sorted(formats))}")
    click.echo(orjson.dumps(formats[name].model_json_schema(), option=orjson.OPT_INDENT_2).decode())


def main() -> None:
    cli()
