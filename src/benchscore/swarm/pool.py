"""Open a task pool by URL.

- ``sqlite:///run.db`` (relative path), ``sqlite:////abs/run.db`` (absolute); ``?synchronous=FULL``
  for power-loss durability. The default store.
- ``postgresql://user@host:port/db`` (``?schema=NAME`` puts the tables in that schema): the source
  of truth when agents run on many machines.
- ``redis_url`` (``redis://host:port/db``, ``?prefix=KEY_PREFIX``): an optional mirror of the
  pheromones (one sorted set per capability) and of the event stream (a Redis Stream), attached
  to either store and reconciled from it whenever Redis has lost its data.

A store or mirror that cannot be reached at opening is a
:class:`~benchscore.common.errors.ServiceUnavailable` (one line, exit 2) after a few quick retries;
once open, a store that goes away is retried with backoff for up to ``max_outage`` seconds
(:data:`~benchscore.swarm.defaults.DEFAULT_MAX_OUTAGE`) before that error.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from benchscore.common.errors import BadInput, BenchscoreError

from .defaults import DEFAULT_MAX_OUTAGE, DEFAULT_STORE_URL
from .stores.base import RunExists, RunNotFound, StaleClaim, StoreCorrupt, StoreFull, TaskPool

__all__ = ["DEFAULT_STORE_URL", "RunExists", "RunNotFound", "StaleClaim", "StoreCorrupt", "StoreFull", "TaskPool",
           "open_pool", "sqlite_path"]


def sqlite_path(url: str) -> tuple[Path, dict[str, str]]:
    """The file path and options of a ``sqlite:///`` URL."""
    parts = urlsplit(url)
    if parts.scheme != "sqlite" or parts.netloc not in ("",):
        raise BadInput(f"store URL {url!r}: expected sqlite:///PATH (three slashes)")
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    if not path:
        raise BadInput(f"store URL {url!r}: no database path")
    options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(options) - {"synchronous"}
    if unknown:
        raise BadInput(f"store URL {url!r}: unknown option(s) {', '.join(sorted(unknown))}")
    return Path(path), options


def open_pool(url: str, run_id: str, *, redis_url: str | None = None, max_outage: float = DEFAULT_MAX_OUTAGE,
              wait: bool = False) -> TaskPool:
    """The pool of run ``run_id`` in the store at ``url``, with a Redis mirror if ``redis_url``.

    Once open, the store is retried through an outage of up to ``max_outage`` seconds (PostgreSQL
    restarting, SQLite locked by someone else). Opening fails at once (a few quick retries) when the
    store cannot be reached, unless ``wait``: then the opening rides out the outage too (the
    worker processes of a run under way)."""
    if not run_id or len(run_id) > 200 or any(c.isspace() for c in run_id):
        raise BadInput(f"run id {run_id!r}: expected 1-200 characters without spaces")
    scheme = urlsplit(url).scheme
    pool: TaskPool
    if scheme == "sqlite":
        from .stores.sqlite import SQLitePool

        path, options = sqlite_path(url)
        if path.exists() and path.is_dir():
            raise BadInput(f"store URL {url!r}: {path} is a folder")
        try:
            pool = SQLitePool(url, run_id, path, **options, max_outage=max_outage)
        except BenchscoreError:
            raise
        except (OSError, ValueError) as exc:
            raise BadInput(f"store URL {url!r}: {exc}") from None
        except Exception as exc:  # sqlite3.DatabaseError: not a database, ...
            raise BadInput(f"store URL {url!r}: {type(exc).__name__}: {exc}") from None
    elif scheme in ("postgresql", "postgres"):
        from .stores.postgres import PostgresPool

        pool = PostgresPool.connect(url, run_id, max_outage=max_outage, wait=wait)
    else:
        raise BadInput(f"store URL {url!r}: expected sqlite:///PATH or postgresql://...")
    if redis_url:
        from .stores.redis_mirror import RedisMirror

        try:
            pool.attach_mirror(RedisMirror.connect(redis_url, run_id, pool.service_log))
        except BaseException:
            pool.close()
            raise
    return pool
