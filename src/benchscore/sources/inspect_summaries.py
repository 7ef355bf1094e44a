"""The per-sample summaries of an inspect_ai ``.eval`` log, and the raw bytes of its sample members.

inspect_ai writes, beside each sample member (``samples/<id>_epoch_<n>.json``), a summary of every sample
x epoch (``EvalSampleSummary``): in ``summaries.json`` when the log is finished, in
``_journal/summaries/<n>.json`` while it runs (a later file replaces an earlier summary of the same id and
epoch). A summary holds the id, epoch, input, target, choices, metadata, every score's value, the error's
message, the limit's type and the number of retries, but thinned (``EvalSampleSummary.thin_data``): texts
of the input and target over 5,120 characters cut with ``...\\n(content truncated)``, an image or other
non-text content replaced by ``(Image)`` and the like, metadata strings shortened (whitespace collapsed,
1,024 characters), metadata values over 1 KB replaced, and no score's edit history. What a reader may take
from a summary, and when it must read the sample instead, is the reader's to say
(``benchscore.results.inspect_adapter``); this module only reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from .inspect_logs import LogHeader, _central_directory, _loads, _member_bytes

SUMMARIES = "summaries.json"
_JOURNAL = re.compile(r"^_journal/summaries/(\d+)\.json$")


def sample_member(sample_id: str | int, epoch: int) -> str:
    """The zip member inspect_ai writes a sample x epoch to (``samples/{id}_epoch_{epoch}.json``)."""
    return f"samples/{sample_id}_epoch_{epoch}.json"


def members(header: LogHeader, fp: BinaryIO) -> dict[str, Any]:
    """The ``.eval`` zip's members by name (those read with the header, else the central directory again)."""
    from .inspect_logs import _members, _zip

    return header.members or _central_directory(fp) or _members(_zip(fp, header.location.url))


def read_summaries(header: LogHeader, fp: BinaryIO, index: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Every sample summary of the log, in the order inspect_ai lists them; None when the log holds none to
    read (a ``.json`` log, a log written without them, or one whose summaries are not a list of objects)."""
    source = header.location.url
    if SUMMARIES in index:
        doc = _loads(_member_bytes(fp, index[SUMMARIES], source), SUMMARIES, source)
        return doc if isinstance(doc, list) and all(type(s) is dict for s in doc) else None
    journal = sorted((int(m.group(1)), name) for name in index if (m := _JOURNAL.match(name)))
    if not journal:
        return None
    merged: dict[tuple[Any, Any], dict[str, Any]] = {}
    for _, name in journal:
        doc = _loads(_member_bytes(fp, index[name], source), name, source)
        if not isinstance(doc, list) or not all(type(s) is dict for s in doc):
            return None
        for s in doc:
            key = (s.get("id"), s.get("epoch"))
            merged.pop(key, None)  # a later summary of a sample x epoch replaces the earlier one
            merged[key] = s
    return list(merged.values())


def sample_bytes(header: LogHeader, fp: BinaryIO, info: Any) -> bytes:
    """One sample member's JSON bytes: read, decompressed and CRC-checked, not parsed."""
    return _member_bytes(fp, info, header.location.url)


def sample_members(index: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The sample members in the order the log stores them (the order the full read yields them)."""
    for name, info in index.items():
        if name.startswith("samples/") and name.endswith(".json"):
            yield name, info


__all__ = ["SUMMARIES", "members", "read_summaries", "sample_bytes", "sample_member", "sample_members"]
