"""issue 35, point 5: the vendored Every Eval Ever schemas are the upstream files at the commits their README
names, and the export follows the current one.

Offline, each file's git blob id (sha1 of ``blob <size>\\0`` + its bytes, as ``git hash-object`` and upstream's
``git ls-tree`` give it) must be the one the README's table records for that upstream commit; where the network
reaches GitHub, the bytes are also compared with the upstream file at that commit (skipped, saying why, where it
does not; ``BENCHSCORE_REQUIRE_NETWORK=1`` makes that a failure).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from benchscore.publish.leaderboard import EEE_VERSION
from benchscore.sources import every_eval_ever as E

FOLDER = Path(E.__file__).resolve().parent / "data" / "every_eval_ever"
UPSTREAM = "evaleval/every_eval_ever"


def table() -> list[dict[str, str]]:
    rows = []
    for line in (FOLDER / "README.md").read_text().splitlines():
        m = re.fullmatch(r"\| `([^`]+)` \| `([^`]+)` \| ([0-9a-f]{40}) \| ([0-9a-f]{40}) \|(.*)\|", line)
        if m:
            rows.append({"file": m[1], "upstream": m[2], "commit": m[3], "blob": m[4], "version": m[5].strip()})
    return rows


def git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_every_vendored_file_is_the_upstream_file_its_readme_names():
    rows = table()
    assert {r["file"] for r in rows} == {p.name for p in FOLDER.iterdir() if p.name != "README.md"}
    for r in rows:
        assert git_blob((FOLDER / r["file"]).read_bytes()) == r["blob"], r["file"]


def test_the_export_follows_the_newest_vendored_schema_and_reads_both():
    rows = {r["file"]: r for r in table()}
    newest = max(E.AGGREGATE_SCHEMAS, key=lambda v: tuple(map(int, v.split("."))))
    assert EEE_VERSION == newest == "0.3.0"
    assert rows[E.AGGREGATE_SCHEMAS[EEE_VERSION]]["version"].startswith(EEE_VERSION)
    assert rows[E.AGGREGATE_SCHEMAS[EEE_VERSION]]["commit"] == rows["LICENSE"]["commit"]  # the current commit
    import json

    for version, name in E.AGGREGATE_SCHEMAS.items():
        assert json.loads((FOLDER / name).read_text())["version"] == version


def test_the_vendored_files_equal_upstream_at_their_commit():
    import os

    import httpx
    import pytest

    def _missing(reason: str, switch: str) -> None:  # as tests/conftest.py's: skip, or fail when CI asks for it
        if os.environ.get(switch) == "1":
            pytest.fail(f"{reason} ({switch}=1)")
        pytest.skip(reason)

    for r in table():
        url = f"https://raw.githubusercontent.com/{UPSTREAM}/{r['commit']}/{r['upstream']}"
        try:
            got = httpx.get(url, timeout=20, follow_redirects=True)
        except httpx.HTTPError as exc:
            _missing(f"GitHub is not reachable from here ({type(exc).__name__}); the blob ids are checked offline",
                     "BENCHSCORE_REQUIRE_NETWORK")
            return
        assert got.status_code == 200, (url, got.status_code)
        assert got.content == (FOLDER / r["file"]).read_bytes(), url
