"""Helpers shared by the report tests."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner

from benchscore.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


#: elements inside a line of text: they join what is either side of them (``(<span>--junit</span>)``)
_INLINE = frozenset({"a", "span", "code", "strong", "em", "wbr", "abbr", "b", "i"})


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag not in _INLINE:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag not in _INLINE:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def visible_text(page: str) -> str:
    """The text a reader sees (tags dropped, entities decoded, whitespace collapsed; an inline element
    such as ``<span>`` or ``<wbr>`` does not split a word)."""
    parser = _Text()
    parser.feed(page)
    return " ".join("".join(parser.parts).split())


def scalars(value, skip=frozenset()):
    """Every scalar leaf of a JSON value (keys in ``skip`` left out)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in skip:
                yield from scalars(v, skip)
    elif isinstance(value, list):
        for v in value:
            yield from scalars(v, skip)
    else:
        yield value
