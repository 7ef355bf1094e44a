"""SQL of the stores, kept in files as procrastinate does: a schema file and named queries.

A queries file is a sequence of blocks, each starting with a ``-- name: NAME`` line; the Python
side calls a query by its name.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def read_sql(filename: str) -> str:
    return resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")


@cache
def queries(filename: str) -> dict[str, str]:
    """NAME -> SQL text of every ``-- name: NAME`` block of ``filename``."""
    out: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    for line in read_sql(filename).splitlines():
        if line.startswith("-- name:"):
            if name is not None:
                out[name] = "\n".join(lines).strip().rstrip(";")
            name = line.split(":", 1)[1].strip()
            if name in out:
                raise ValueError(f"{filename}: query {name!r} defined twice")
            lines = []
        elif name is not None and not line.startswith("--"):
            lines.append(line)
    if name is not None:
        out[name] = "\n".join(lines).strip().rstrip(";")
    return out


#: (table, column, declaration) added since the first SQLite schema; stores created before get them
SQLITE_UPGRADES = (
    ("swarm_runs", "ledger_head", "BLOB"),
    ("swarm_runs", "ledger_events", "INTEGER NOT NULL DEFAULT 0"),
    ("swarm_runs", "ledger_seq", "INTEGER NOT NULL DEFAULT 0"),
    ("swarm_runs", "ledger_writers", "INTEGER NOT NULL DEFAULT 0"),
    ("swarm_events", "hash", "BLOB"),
    ("swarm_events", "writer_id", "INTEGER"),
    ("swarm_events", "writer_seq", "INTEGER"),
    ("swarm_budget_windows", "reserved", "INTEGER NOT NULL DEFAULT 0"),
)


def upgrade_sqlite(conn) -> None:
    """Add the columns of :data:`SQLITE_UPGRADES` a database lacks (call under the writer lock)."""
    for table, column, declaration in SQLITE_UPGRADES:
        if column not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
