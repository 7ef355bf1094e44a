"""The HTML report's page machinery: escaping, tables, figures with their provenance, layout, CSS.

A report page is one self-contained file: inline SVG figures (see :mod:`benchscore.common.plot`),
inline CSS, no script, no external resource (a Content-Security-Policy forbids any), so it opens
offline and the same on every machine. Every value taken from an output is escaped here.

Each domain's ``figures`` module turns that domain's outputs (:class:`Output`) into blocks of HTML
with the helpers below; :func:`numbers` shows every scalar of an output as tables without knowing
its format, so a field a command adds appears in the report without new code. This module imports
no domain and no plotting library.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchscore import __version__

from .errors import BadInput
from .provenance import created_at, sha256_bytes
from .readers import loads_json, read_json_bytes

#: values shown in red with class ``fail`` / green ``pass`` / orange ``warn`` wherever they appear
FAIL_WORDS = frozenset({"FAIL", "FAILED", "fail", "failed", "hard_fail", "refuted"})
PASS_WORDS = frozenset({"PASS", "PASSED", "pass"})
WARN_WORDS = frozenset({"incomplete", "provisional", "not_run", "replay", "reduced", "missing", "invalid"})

#: a nested dict with at most this many scalar leaves becomes columns of its parent's row
_INLINE_LEAVES = 6
#: a list of scalars longer than this (as text) gets a table of its own instead of one cell
_CELL_CHARS = 80
#: a record table with more columns than this is split into one table per record
_MAX_COLUMNS = 10
#: a "numbers" block with more rows than this starts folded (one click opens it; no script needed)
_OPEN_ROWS = 80


@dataclass(frozen=True)
class Output:
    """One JSON output given to the report: where it came from, its bytes' sha256, its kind."""

    path: Path
    label: str
    sha256: str
    doc: Any
    kind: str

    @property
    def provenance(self) -> Mapping[str, Any]:
        prov = self.doc.get("provenance") if isinstance(self.doc, dict) else None
        return prov if isinstance(prov, dict) else {}

    @property
    def anchor(self) -> str:
        """A page-unique id: two files with the same bytes still get their own."""
        return "o-" + sha256_bytes(f"{self.label}\0{self.sha256}".encode())[:12]


class Raw(str):
    """HTML that is already safe (built by this module); never escaped again."""


def esc(value: Any) -> str:
    return _html.escape(str(value), quote=True)


#: a command-line option (``--quick``, ``--base-url``) in running text: never broken across lines
_OPTION = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*)")
#: where a long identifier may break when its column is narrow: after an underscore or a slash, and after
#: a dot that follows a letter (``scores_after_evaporation.approve``; never inside a number such as 0.53)
_BREAK_AFTER = re.compile(r"(_|/|(?<=[A-Za-z])\.)(?=\w)")


def prose(value: Any) -> str:
    """Escaped text for an element's content (never an attribute): each option it names
    (``--quick``) kept on one line, so a reader never sees ``--`` / ``quick``, and a long identifier
    (``S07_live_external_github_code_reasoning``) allowed to break at its parts, not inside a word."""
    parts = _OPTION.split(str(value))
    return "".join(f'<span class="opt">{esc(x)}</span>' if i % 2 else _BREAK_AFTER.sub(r"\1<wbr>", esc(x))
                   for i, x in enumerate(parts))


#: a header cell or a row's name is prose too
name_html = prose


def fmt(value: Any) -> str:
    """A value as text: floats to 4 significant digits without float noise (the terminal's
    :func:`benchscore.common.terminal.number`), None as '-', lists joined by commas."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        from .terminal import number as reading

        return reading(value)
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value) if value else "(none)"
    return str(value)


def state_class(value: Any, key: str = "") -> str:
    """``fail`` / ``pass`` / ``warn`` / '' for a value (``*_PASS: false`` and ``"FAIL (why)"`` are fails)."""
    if isinstance(value, bool):
        if key.endswith(("_PASS", "passed", "_pass")) or key in ("converged", "every_task_accounted_for"):
            return "pass" if value else "fail"
        return ""
    if isinstance(value, str):
        if value in FAIL_WORDS or value.startswith(("FAIL ", "FAIL:", "FAIL (")):
            return "fail"
        if value in PASS_WORDS:
            return "pass"
        if value in WARN_WORDS:
            return "warn"
    return ""


#: a run of this many characters with no space, underscore, slash or dot in it (a sha256, a long URL
#: fragment) may break anywhere; any shorter word stays whole and sets its column's narrowest width
_LONG_TOKEN = re.compile(r"[^\s_/.]{25,}")


def cell(value: Any, key: str = "") -> str:
    """One ``<td>``: escaped, formatted, the exact float in a tooltip, state words marked (not by colour alone)."""
    if isinstance(value, Raw):
        return f"<td>{value}</td>"
    if value == "":  # nothing to say: shown as a missing value is
        return "<td>-</td>"
    shown = prose(fmt(value))
    cls = state_class(value, key)
    if _LONG_TOKEN.search(fmt(value)) and not isinstance(value, int | float):
        if not cls:
            return f'<td class="long">{shown}</td>'
        return f'<td class="{cls} long"><span class="mark">{shown}</span></td>'
    title = f' title="{esc(format(value, ".12g"))}"' if isinstance(value, float) else ""  # noise-free
    num = " num" if isinstance(value, int | float) and not isinstance(value, bool) else ""
    if cls:
        if isinstance(value, bool) or value in FAIL_WORDS | PASS_WORDS | WARN_WORDS:  # one word, one line
            return f'<td class="{cls}{num}"{title}><span class="mark word">{esc(fmt(value))}</span></td>'
        return f'<td class="{cls}{num}"{title}><span class="mark">{shown}</span></td>'
    return f'<td class="{num.strip()}"{title}>{shown}</td>' if num or title else f"<td>{shown}</td>"


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str | None = None,
          keys: Sequence[str] | None = None, below: Sequence[str] = ()) -> Raw:
    """A table; ``keys`` (default: the column names) tell :func:`state_class` what each column holds.
    ``below`` names columns of long text (a derivation, a reason) shown instead on a line of their own
    under each row, across the whole table (left out where '-' or empty), so they wrap at the page's
    width and the other columns stay on screen."""
    keys = list(keys or columns)
    under = [list(columns).index(b) for b in below]
    if under:
        columns = [c for i, c in enumerate(columns) if i not in under]
        keys = [k for i, k in enumerate(keys) if i not in under]
    head = "".join(f'<th scope="col">{name_html(c)}</th>' for c in columns)
    body = []
    for row in rows:
        extra = "".join(
            f'<tr class="below"><td colspan="{len(columns)}"><span class="below-name">{esc(below[k])}:</span> '
            f"{row[i] if isinstance(row[i], Raw) else prose(fmt(row[i]))}</td></tr>"
            for k, i in enumerate(under) if row[i] not in (None, "", "-"))
        row = [v for i, v in enumerate(row) if i not in under]
        cells = [cell(v, keys[i] if i < len(keys) else "") for i, v in enumerate(row)]
        if cells:
            first = row[0]
            plain = isinstance(first, str) and not isinstance(first, Raw)
            if plain and not state_class(first, keys[0] if keys else ""):
                cells[0] = f'<th scope="row">{name_html(first)}</th>'
            else:
                cells[0] = cells[0].replace("<td", '<th scope="row"', 1).replace("</td>", "</th>")
        body.append("<tr>" + "".join(cells) + "</tr>" + extra)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return Raw(f'<div class="scroll"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
               f"</table></div>")


def banner(text: str, level: str = "info") -> Raw:
    """A boxed line: ``fail`` (red, with the word FAIL), ``warn`` (orange) or ``info``."""
    label = {"fail": "FAIL", "warn": "NOTE", "info": "INFO"}[level]
    return Raw(f'<p class="banner {level}"><strong>{label}</strong> {prose(text)}</p>')


def not_drawn(what: str, why: str) -> Raw:
    """Say plainly that a figure is not drawn and why (usually: the output does not carry the data)."""
    return Raw(f'<p class="banner warn not-drawn"><strong>NOT DRAWN</strong> {esc(what)}: {prose(why)}</p>')


def paragraph(text: str) -> Raw:
    return Raw(f"<p>{prose(text)}</p>")


def heading(text: str, level: int = 4) -> Raw:
    return Raw(f"<h{level}>{esc(text)}</h{level}>")


def bullet_list(items: Iterable[Any], cls: str = "") -> Raw:
    lis = "".join(f"<li>{x if isinstance(x, Raw) else prose(x)}</li>" for x in items)
    return Raw(f'<ul class="{cls}">{lis}</ul>' if cls else f"<ul>{lis}</ul>")


def fail_reason(verdict: Any, reason: Any) -> Raw:
    """A verdict with its reason beside it; a FAIL without a recorded reason says so, in red. A reason
    that opens with the verdict itself ('FAIL (replay): ...') does not repeat it."""
    cls = state_class(verdict, "verdict")
    word = f'<span class="mark {cls}">{esc(fmt(verdict))}</span>' if cls else esc(fmt(verdict))
    if isinstance(reason, str) and reason.startswith(f"{fmt(verdict)} "):
        reason = reason[len(fmt(verdict)) + 1:]
    if cls == "fail":
        why = prose(reason) if reason else "<em>no reason recorded in the output</em>"
        return Raw(f'{word} <span class="reason">{why}</span>')
    return Raw(word + (f' <span class="note">{prose(reason)}</span>' if reason else ""))


# ---- provenance ---------------------------------------------------------------------------------
def _prov_line(out: Output) -> str:
    """One line: the file and its sha256, the metric, contract and reference ids, every input's sha256.

    The whole ``provenance`` block (with any other keys) is in the output's tables.
    """
    prov = out.provenance
    doc = out.doc if isinstance(out.doc, dict) else {}
    parts = [f'<a href="#{out.anchor}">{esc(out.label)}</a> sha256 <code>{esc(out.sha256)}</code>']
    if "metric_id" in prov:
        parts.append(f"metric <code>{esc(prov['metric_id'])}</code>")
    if isinstance(doc.get("contract_sha256"), str):
        parts.append(f"contract sha256 <code>{esc(doc['contract_sha256'])}</code>")
    ref = prov.get("reference") if isinstance(prov.get("reference"), dict) else {}
    ref_id = ref.get("reference_id", doc.get("reference_id"))
    ref_sha = ref.get("sha256", doc.get("reference_sha256"))
    if ref_id is not None or ref_sha is not None:
        name = f" ({esc(ref['name'])})" if ref.get("name") else ""
        sha = f" sha256 <code>{esc(ref_sha)}</code>" if ref_sha else ""
        parts.append(f"reference <code>{esc(fmt(ref_id))}</code>{name}{sha}")
    inputs = prov.get("inputs") if isinstance(prov.get("inputs"), dict) else {}
    for role, meta in inputs.items():
        meta = meta if isinstance(meta, dict) else {}
        name = f" ({esc(meta['name'])})" if meta.get("name") and meta.get("name") != role else ""
        parts.append(f"input {esc(role)}{name} sha256 <code>{esc(meta.get('sha256', '-'))}</code>")
    if not inputs:
        parts.append("no input files recorded")
    if "seed" in prov:
        parts.append(f"seed <code>{esc(fmt(prov['seed']))}</code>")
    parts.append(f"created {esc(prov.get('created_at', '-'))} by benchscore {esc(prov.get('benchscore_version', '-'))}")
    return " &middot; ".join(parts)


def provenance_block(sources: Sequence[Output]) -> Raw:
    """What a figure was drawn from, folded (one click opens it): per output file (each once) its
    sha256, metric/contract/reference ids, its inputs."""
    unique = list({o.anchor: o for o in sources}.values())
    items = "".join(f"<li>{_prov_line(o)}</li>" for o in unique)
    names = ", ".join(o.label for o in unique[:3]) + (f" and {len(unique) - 3} more" if len(unique) > 3 else "")
    return Raw(f'<details class="prov"><summary><span class="prov-title">Drawn from</span> {esc(names)} '
               f"(sha256 and inputs)</summary><ul>{items}</ul></details>")


# ---- figures -------------------------------------------------------------------------------------
def _own_ids(svg: str, key: str) -> str:
    """Prefix every ``id`` in an SVG, and every reference to one, with a hash of the drawing and of
    ``key``, so inline figures never share an id on a page (two equal drawings of different sources
    included) and the page stays byte-for-byte reproducible."""
    prefix = "s" + sha256_bytes(f"{key}\0{svg}".encode())[:10] + "-"
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', svg)
    svg = re.sub(r'(xlink:href|href)="#([^"]+)"', rf'\1="#{prefix}\2"', svg)
    return re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}\1)", svg)


def figure(svg: str, title: str, explanation: str, sources: Sequence[Output], *,
           counts: tuple[str, str] | None = None) -> Raw:
    """A ``<figure>``: the inline SVG, a title, a short explanation of what it shows, its provenance
    (folded). ``counts = (row column, series column)`` says that the figure's count labels
    (:func:`benchscore.common.plot.data_label` with ``count``) count the rows of the table below it
    by those two columns; the report's browser test checks that they agree."""
    svg = _own_ids(svg, "\0".join([title, *(o.anchor for o in sources)]))
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{esc(title)}" ', 1)
    attr = f' data-counts="{esc(counts[0])}|{esc(counts[1])}"' if counts else ""
    return Raw(f'<figure{attr}><div class="plot">{svg}</div><figcaption><strong>{esc(title)}</strong> '
               f"{esc(explanation)}{provenance_block(sources)}</figcaption></figure>")


# ---- the summary table: every output's answer first ---------------------------------------------
#: statuses that need no reason beside them
DONE_STATUSES = frozenset({"complete", "PASS"})


@dataclass(frozen=True)
class Headline:
    """One headline number of an output: its name, value, unit ('%' or '') and 95 % interval record
    (``{"ci95": [low, high], "ci_method": ...}`` or ``{"ci95": None, "ci_reason": ...}``, or None)."""

    name: str
    value: Any
    unit: str = ""
    interval: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SummaryRow:
    """One row of the summary table that opens every page: what an output scores, its headline
    numbers, its status and, for anything short of complete or PASS, the one-line reason.

    Each domain's ``figures.summary_rows(output)`` gives an output's rows (the report's hook)."""

    output: Output
    scores: str
    headline: Sequence[Headline]
    status: str
    reason: str | None = None
    what: str = ""
    domain: str = ""
    #: the reason as a short list (one item per failed part), shown as a list under ``reason`` on a page
    items: Sequence[str] = ()


def number(value: Any, unit: str = "") -> str:
    """A number for reading: 4 significant digits (integers whole), '-' for None: the terminal's rule
    (:func:`benchscore.common.terminal.number`), so a page and the command's output print one value alike."""
    from .terminal import number as reading

    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return fmt(value)
    text = str(value) if isinstance(value, int) else reading(value)
    return f"{text}{' ' if unit and unit != '%' else ''}{unit}" if unit else text


def headline_parts(h: Headline) -> tuple[str, str, str]:
    """(name, value, interval) of a headline number as every summary shows it: the value with its unit,
    the interval as ``[low, high]``, ``[no interval]`` when the output says why there is none, else ''."""
    rec = h.interval or {}
    if rec.get("ci95"):
        low, high = rec["ci95"]
        interval = f"[{number(low)}, {number(high)}]"
    elif rec.get("ci_reason"):
        interval = "[no interval]"
    else:
        interval = ""
    return h.name, number(h.value, h.unit), interval


def summary_facts(row: SummaryRow) -> tuple[str, str, str, str]:
    """(result, headline numbers, status, reason) of a summary row: what the summary table of a page shows
    and what ``benchscore demo`` prints, from one place. The result is the output's label, what it is and
    what it scores; the reason is empty for complete or PASS without a note."""
    result = f"{row.output.label} ({row.what + ': ' if row.what else ''}{row.scores})"
    heads = "; ".join(" ".join(p for p in headline_parts(h) if p) for h in row.headline)
    reason = row.reason or ("" if row.status in DONE_STATUSES else "no reason recorded in the output")
    if row.items:
        reason = f"{reason} " + " ".join(f"({i}) {item}" for i, item in enumerate(row.items, 1))
    return result, heads, row.status, reason


def _headline_html(h: Headline) -> str:
    name, number_text, interval = headline_parts(h)
    value = f'<span class="value">{esc(number_text)}</span>'
    rec = h.interval or {}
    if interval:
        title = f"95 % interval, {rec.get('ci_method', '')}" if rec.get("ci95") else str(rec.get("ci_reason"))
        interval = f' <span class="ci" title="{esc(title)}">{esc(interval)}</span>'
    return f'<span class="headline-item">{esc(name)} {value}{interval}</span>'


def summary_table(rows: Sequence[SummaryRow], *, href: Mapping[str, str] | None = None) -> Raw:
    """The table that opens a page: a row per result (``href``: domain -> the page holding it, for the
    index). A status short of complete or PASS always shows its reason (or says none was recorded)."""
    if not rows:
        return paragraph("No output of a kind the report draws.")
    body = []
    domain = None
    for r in rows:
        if r.domain != domain and r.domain:
            domain = r.domain
            body.append(f'<tr class="group"><th scope="rowgroup" colspan="4">{esc(domain)}</th></tr>')
        link = f"{(href or {}).get(r.domain, '')}#{r.output.anchor}"
        kind = f"{r.what}: " if r.what else ""
        cls = state_class(r.status) or ("pass" if r.status in DONE_STATUSES else "warn")
        status = f'<td class="{cls} status"><span class="mark">{esc(r.status)}</span></td>'
        why = summary_facts(r)[3]  # the reason benchscore demo prints too
        if r.status in DONE_STATUSES:
            reason = f'<td class="note">{prose(why)}</td>' if why else "<td></td>"
        else:
            said = (prose(r.reason) + ' <ol class="items">'  # numbered as the terminal's line numbers them
                    + "".join(f"<li>({i}) {prose(item)} </li>" for i, item in enumerate(r.items, 1)) + "</ol>") \
                if r.items else prose(why) if r.reason else f"<em>{esc(why)}</em>"
            reason = f'<td class="{"reason" if cls == "fail" else "note-warn"}">{said}</td>'
        heads = "<br>".join(_headline_html(h) for h in r.headline) or "-"
        body.append(f'<tr><th scope="row"><a href="{esc(link)}">{esc(r.output.label)}</a>'
                    f'<br><span class="scores">{esc(kind)}{esc(r.scores)}</span></th>'
                    f'<td class="headline">{heads}</td>{status}{reason}</tr>')
    head = "".join(f'<th scope="col">{c}</th>' for c in
                   ("result: the output, what it scores", "headline numbers [95 % interval]", "status",
                    "reason (for anything short of complete or PASS)"))
    return Raw(f'<div class="scroll summary"><table class="summary"><caption>Summary: every result on this page '
               f"(the figures and every value follow)</caption><colgroup><col class=\"c-result\"><col class=\"c-head\">"
               f'<col class="c-status"><col class="c-reason"></colgroup><thead><tr>{head}</tr></thead>'
               f"<tbody>{''.join(body)}</tbody></table></div>")


def status_sentence(rows: Sequence[SummaryRow], on_purpose: str = "") -> str:
    """One sentence that counts results by status (``28 results: 19 complete, 2 incomplete, 4 FAIL, 3 PASS``)
    and names the rows short of complete or PASS; ``on_purpose`` says why they are there (the demo: refusals
    shown on purpose). What the index page opens with and ``benchscore demo`` prints first."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    text = f"{len(rows)} result{'s' * (len(rows) != 1)}: " + ", ".join(f"{n} {status}" for status, n in counts.items())
    short = [r for r in rows if r.status not in DONE_STATUSES]
    if not short:
        return text + "."
    names = "; ".join(dict.fromkeys(f"{r.output.label} ({r.status}{', ' + r.what if r.what else ''})"
                                    for r in short))  # an output with two rows of one status is named once
    return f"{text}. {on_purpose or 'Short of complete or PASS'}: {names}."


def big_number(value: Any, label: str, detail: str = "", level: str = "info") -> Raw:
    """A score shown large (e.g. the swarm's compliance score), with what it is beside it."""
    extra = f' <span class="note">{prose(detail)}</span>' if detail else ""
    return Raw(f'<p class="big-number {esc(level)}"><span class="big">{esc(number(value))}</span> '
               f"<strong>{esc(label)}</strong>{extra}</p>")


# ---- every scalar of an output, as tables ------------------------------------------------------
def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def _scalarish(v: Any) -> bool:
    """A scalar, or a short list of scalars (shown in one cell)."""
    if _scalar(v):
        return True
    return (isinstance(v, list | tuple) and all(_scalar(x) for x in v)
            and sum(len(fmt(x)) + 2 for x in v) <= _CELL_CHARS)


def _leaves(d: Mapping[str, Any], limit: int, omit: frozenset[str]) -> list[tuple[str, Any]] | None:
    """The scalar leaves of a nested dict as dotted keys, or None when it is not small and flat."""
    out: list[tuple[str, Any]] = []
    for k, v in d.items():
        if k in omit:
            continue
        if _scalarish(v):
            out.append((str(k), v))
        elif (where := _output_argument(v)) is not None:
            out.append((str(k), where))
        elif isinstance(v, dict):
            sub = _leaves(v, limit, omit)
            if sub is None:
                return None
            out.extend((f"{k}.{sk}", sv) for sk, sv in sub)
        else:
            return None
        if len(out) > limit:
            return None
    return out


def _output_argument(value: Any) -> str | None:
    """What a command's recorded output argument (``{"output": "file"}``, see
    :mod:`benchscore.common.provenance`) means, in words; None for any other value."""
    if isinstance(value, dict) and len(value) == 1 and value.get("output") in ("file", "folder"):
        return f"an output {value['output']} (where it was written is no part of the recipe)"
    return None


def _columns(item: Mapping[str, Any], omit: frozenset[str]) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(columns, nested) of a record: scalars and small flat dicts inline, the rest nested."""
    cols: list[tuple[str, Any]] = []
    nested: list[tuple[str, Any]] = []
    for k, v in item.items():
        if k in omit:
            continue
        if _scalarish(v):
            cols.append((str(k), v))
        elif (where := _output_argument(v)) is not None:
            cols.append((str(k), where))
        elif isinstance(v, dict) and v and _records(v) is None and (sub := _leaves(v, _INLINE_LEAVES, omit)) is not None:
            cols.extend((f"{k}.{sk}", sv) for sk, sv in sub)
        elif isinstance(v, dict | list) and not v:
            cols.append((str(k), "(none)" if isinstance(v, list) else "(empty)"))
        else:
            nested.append((str(k), v))
    return cols, nested


def _records(value: Any) -> list[tuple[str, Mapping[str, Any]]] | None:
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [(str(i), v) for i, v in enumerate(value)]
    return None


def _walk(value: Any, path: str, omit: frozenset[str], out: list[tuple[str, Raw, int]]) -> None:
    records = _records(value) if path else None  # the document itself is never one table of records
    if records is not None:
        per = [(rid, *_columns(item, omit)) for rid, item in records]
        names: list[str] = []
        for _, cols, _ in per:
            for k, _v in cols:
                if k not in names:
                    names.append(k)
        if 0 < len(names) <= _MAX_COLUMNS:
            first = "index" if isinstance(value, list) else "key"
            # a record holding only nested values has no row here (an empty row says nothing): its tables follow
            rows = [[rid, *(dict(cols).get(n, Raw("")) for n in names)] for rid, cols, _ in per if cols]
            out.append((path, table([first, *names], rows, keys=["", *names]), len(rows)))
            for rid, _, nested in per:
                for k, v in nested:
                    _walk(v, f"{path}[{rid}].{k}", omit, out)
        else:
            for rid, item in records:
                _walk(item, f"{path}[{rid}]", omit, out)
        return
    if isinstance(value, dict):
        cols, nested = _columns(value, omit)
        if cols:
            out.append((path or "(top level)", table_kv(cols), len(cols)))
        for k, v in nested:
            _walk(v, f"{path}.{k}" if path else k, omit, out)
    elif isinstance(value, list) and all(_scalar(v) for v in value):
        out.append((path, table(["index", "value"], list(enumerate(value)), keys=["", ""]), len(value)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk(v, f"{path}[{i}]", omit, out)
    elif _scalar(value):
        out.append((path, table_kv([("value", value)]), 1))


def table_kv(pairs: Sequence[tuple[str, Any]]) -> Raw:
    """A two-column field/value table; each value is marked by its own field name."""
    body = "".join(f'<tr><th scope="row">{name_html(k)}</th>{cell(v, k)}</tr>' for k, v in pairs)
    return Raw(f'<div class="scroll"><table class="kv"><thead><tr><th scope="col">field</th>'
               f'<th scope="col">value</th></tr></thead><tbody>{body}</tbody></table></div>')


def numbers(out: Output, *, omit: Iterable[str] = (), note: str = "", folded: bool = False) -> Raw:
    """Every scalar of an output as tables, by JSON path, without knowing its format.

    Records (a list of objects, or an object of objects) become one table with a row each; small
    nested objects become dotted columns; long lists get a table of their own. ``omit`` names keys
    never copied into the report (``note`` says why). The block starts folded when it is large, or
    when ``folded`` (a page with many outputs of one kind).
    """
    skip = frozenset(omit)
    blocks: list[tuple[str, Raw, int]] = []
    doc = {k: v for k, v in out.doc.items() if k not in skip} if isinstance(out.doc, dict) else out.doc
    _walk(doc, "", skip, blocks)
    total = sum(n for _, _, n in blocks)
    inner = "".join(f'<div class="path"><h5><code>{esc(p)}</code></h5>{t}</div>' for p, t, _ in blocks)
    extra = f"<p>{esc(note)}</p>" if note else ""
    opened = " open" if total <= _OPEN_ROWS and not folded else ""
    return Raw(f'<details class="numbers"{opened}><summary>Every value in <code>{esc(out.label)}</code> '
               f"({total} rows in {len(blocks)} tables, by JSON path)</summary>{extra}{inner}</details>")


# ---- layout --------------------------------------------------------------------------------------
def article(title: str, blocks: Iterable[str], *, anchor: str = "", sources: Sequence[Output] = ()) -> Raw:
    """One part of a domain's section (an output, or a group of outputs of one kind)."""
    ids = "".join(f'<span id="{s.anchor}"></span>' for s in sources)
    aid = f' id="{esc(anchor)}"' if anchor else ""
    return Raw(f"<article{aid}>{ids}<h3>{esc(title)}</h3>{''.join(blocks)}</article>")


@dataclass(frozen=True)
class Section:
    """One domain's part of a page."""

    domain: str
    title: str
    blocks: Sequence[str]


CSS = """
:root { color-scheme: light; --fail: #b3261e; --pass: #1b6e3a; --warn: #8a5300; --ink: #1d1d1f; --muted: #555;
  --line: #d0d0d0; --bg-fail: #fdecea; --bg-warn: #fff4e0; --bg-info: #eaf2fb; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
  color: var(--ink); background: #fff; margin: 0; }
header, main, footer { max-width: 1100px; margin: 0 auto; padding: 0 1.2rem; }
header { padding-top: 1rem; border-bottom: 2px solid var(--ink); }
h1 { font-size: 1.6rem; margin: .3rem 0; }
h2 { font-size: 1.35rem; margin: 2rem 0 .5rem; padding: .3rem .5rem; background: #f0f0f0; border-left: 6px solid #0072B2; }
h3 { font-size: 1.12rem; margin: 1.4rem 0 .4rem; border-bottom: 1px solid var(--line); }
h4 { font-size: 1rem; margin: 1rem 0 .3rem; }
h5 { font-size: .85rem; margin: .8rem 0 .2rem; font-weight: normal; color: var(--muted); }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; }
a { color: #0b57a4; }
figure { margin: 1rem 0 1.4rem; padding: .6rem; border: 1px solid var(--line); border-radius: 4px; }
.plot svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { font-size: .9rem; margin-top: .4rem; }
.prov { font-size: .75rem; color: var(--muted); margin-top: .4rem; overflow-wrap: anywhere; }
.prov > summary { cursor: pointer; }
.prov ul { margin: .1rem 0 .1rem 1rem; padding: 0; }
.prov-title { font-weight: bold; }
table.summary { font-size: .85rem; width: 100%; table-layout: fixed; }
table.summary col.c-result { width: 36%; } table.summary col.c-head { width: 27%; }
table.summary col.c-status { width: 8em; } table.summary col.c-reason { width: 28%; }
table.summary th[scope="row"] { font-weight: normal; overflow-wrap: anywhere; }
table.summary th[scope="row"] a { font-weight: bold; }
table.summary .scores { color: var(--muted); font-size: .8rem; }
table.summary tr.group th { background: #f0f0f0; font-size: .9rem; }
table.summary td.headline { overflow-wrap: anywhere; }
.headline-item { display: inline-block; }
table.summary td.status { white-space: nowrap; }
.headline-item .value { font-weight: bold; font-variant-numeric: tabular-nums; }
.ci { color: var(--muted); font-variant-numeric: tabular-nums; }
.note-warn { color: #5a3700; }
p.answer { font-size: 1.05rem; font-weight: bold; }
ol.items { list-style: none; margin: .2rem 0 0; padding: 0; } ol.items li { margin: .15rem 0; }
.big-number { margin: .6rem 0; padding: .4rem .8rem; border-left: 6px solid #0072B2; background: var(--bg-info); }
.big-number.fail { border-color: var(--fail); background: var(--bg-fail); }
.big-number.warn { border-color: #E69F00; background: var(--bg-warn); }
.big-number .big { font-size: 2.6rem; font-weight: bold; line-height: 1; vertical-align: middle; margin-right: .4rem; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .3rem 0 .8rem; font-size: .85rem; max-width: 100%; }
th, td { overflow-wrap: break-word; }
td.long { overflow-wrap: anywhere; }
td.num { overflow-wrap: normal; white-space: nowrap; }
tr.below td { border-top: none; padding-left: 1.2rem; color: #333; }
.below-name { color: var(--muted); font-style: italic; }
.opt, .word, span.mark.fail, span.mark.pass, span.mark.warn { white-space: nowrap; }
caption { text-align: left; font-weight: bold; padding: .2rem 0; }
th, td { border: 1px solid var(--line); padding: .15rem .45rem; text-align: left; vertical-align: top; }
thead th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.fail, .mark.fail { color: var(--fail); font-weight: bold; }
td.fail .mark::before, .mark.fail::before { content: "\\2716\\00a0"; }
td.pass, .mark.pass { color: var(--pass); }
td.warn, .mark.warn { color: var(--warn); font-weight: bold; }
.reason { color: var(--fail); }
.note { color: var(--muted); }
.banner { padding: .4rem .6rem; border-radius: 4px; border-left: 6px solid; }
.banner.fail { background: var(--bg-fail); border-color: var(--fail); color: var(--fail); }
.banner.warn { background: var(--bg-warn); border-color: #E69F00; color: #5a3700; }
.banner.info { background: var(--bg-info); border-color: #0072B2; }
details.numbers { margin: .6rem 0 1.2rem; }
details.numbers > summary { cursor: pointer; font-weight: bold; }
.deviation { background: var(--bg-warn); border: 2px solid #E69F00; padding: .4rem .8rem; border-radius: 4px; }
footer { margin-top: 3rem; padding: 1rem 1.2rem 2rem; color: var(--muted); font-size: .8rem; border-top: 1px solid var(--line); }
@media print { details.numbers, details.prov { display: block; } }
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _document(title: str, body: str, generator: str = "benchscore report") -> str:
    """The page around ``body``; ``generator`` names the command that writes it (what tells an earlier output
    of that command from a file it may not replace: :func:`benchscore.common.atomic.written_by`)."""
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="{esc(generator)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
            '<link rel="icon" href="data:,">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{body}</body></html>\n")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def page(title: str, sections: Sequence[Section], outputs: Sequence[Output], *, back: str | None = None,
         summary: str = "") -> str:
    """A whole report page: header with a table of contents, the summary table (``summary``, see
    :func:`summary_table`), one section per domain, a footer."""
    toc = "".join(f'<li><a href="#{_slug(s.domain)}">{esc(s.title)}</a></li>' for s in sections)
    up = f'<p><a href="{esc(back)}">&larr; all domains</a></p>' if back else ""
    header = (f"<header>{up}<h1>{esc(title)}</h1><p>Built from {len(outputs)} JSON output(s) of benchscore "
              "commands. Every figure names the files it was drawn from (sha256) under it; every value of "
              "every output is in the tables below the figures. FAIL is shown in red with its reason; "
              "incomplete and provisional results are marked.</p>"
              f"<nav aria-label=\"contents\"><ul>{toc}</ul></nav></header>")
    body = "".join(f'<section id="{_slug(s.domain)}"><h2>{esc(s.title)}</h2>{"".join(s.blocks)}</section>'
                   for s in sections)
    return _document(title, f"{header}<main>{summary}{body}</main>{_footer()}")


def index_page(title: str, entries: Sequence[tuple[str, str, str, Sequence[Output]]], summary: str = "",
               answer: str = "") -> str:
    """The demo's index: one sentence that answers (``answer``: :func:`status_sentence`), the summary table
    of every result (``summary``), then per domain (name, title, href, outputs) a link and the outputs it
    draws."""
    items = []
    for domain, heading_text, href, outs in entries:
        kinds = bullet_list([Raw(f"<code>{esc(o.label)}</code> ({esc(o.kind)})") for o in outs]) if outs else \
            paragraph("no output of a kind the report draws")
        items.append(f'<section id="{_slug(domain)}"><h2><a href="{esc(href)}">{esc(heading_text)}</a></h2>{kinds}'
                     "</section>")
    links = " &middot; ".join(f'<a href="{esc(href)}">{esc(domain)}</a>' for domain, _, href, _ in entries)
    first = f'<p class="answer">{prose(answer)}</p>' if answer else ""
    header = (f"<header><h1>{esc(title)}</h1>{first}<p>One page per domain ({links}), each built by <code>benchscore "
              "report</code> from the JSON outputs the demo wrote. The table below gives every result's answer; "
              "a row's link opens it on its domain's page.</p></header>")
    return _document(title, f"{header}<main>{summary}{''.join(items)}</main>{_footer()}", "benchscore demo")


def _footer() -> str:
    return (f"<footer>benchscore {esc(__version__)} &middot; written {esc(created_at())} (UTC; "
            "SOURCE_DATE_EPOCH pins it) &middot; a self-contained file: no script, no network.</footer>")


# ---- reading outputs -----------------------------------------------------------------------------
def read_output(path: Path) -> tuple[str, Any]:
    """``(sha256 of the bytes, the parsed document)`` of one output, read once with the strict readers."""
    data = read_json_bytes(path)
    return sha256_bytes(data), loads_json(data, path)


def unknown_kind(path: Path, doc: Any, known: Iterable[str]) -> BadInput:
    """The one line that refuses an output the report cannot draw."""
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    metric = prov.get("metric_id") if isinstance(prov, dict) else None
    what = f"provenance.metric_id {metric!r}" if metric else "no provenance.metric_id"
    return BadInput(f"not an output the report knows ({what}); it draws: {', '.join(known)}", source=path)
