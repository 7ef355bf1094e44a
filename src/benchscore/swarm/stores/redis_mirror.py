"""The Redis mirror (``redis://host:port/db``, optional ``?prefix=KEYPREFIX``).

Keys of run R (all under the prefix):

- ``swarm:R:pheromone:CAPABILITY``: a sorted set, member = task id, score = P_t;
- ``swarm:R:events``: a Redis Stream carrying every ledger event: one stream entry per committed
  transaction (up to 1000 events), fields ``n`` (event count) and ``events`` (a JSON list of
  ``[task, kind, agent, attempt, value, delta, note, at]``). One entry per transaction rather than per
  event keeps the mirror off the critical path of batched claims;
- ``swarm:R:mirror``: a marker written when the mirror was last rebuilt.

The store (SQLite or PostgreSQL) stays the source of truth; the mirror is written after each
commit. Every publish also checks the marker: if Redis has lost its data (a flush, a restart
without persistence), the mirror is rebuilt from the store, pheromones and event stream alike.
There is no control key and no message key: agents never talk through Redis, they only read the
pool.

A Redis that stops answering is retried with backoff (reported in the service log); after the
retries the mirror is marked stale and rebuilt at the next publish that gets through, and the final
reconciliation of a run raises ServiceUnavailable if Redis is still down.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import redis

from benchscore.common.errors import BadInput, ServiceUnavailable

from ..retry import ServiceLog, with_retry

if TYPE_CHECKING:
    from .base import TaskPool

REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError)
STREAM_CHUNK = 1000


def split_prefix(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    rest, prefix = [], ""
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        if k == "prefix":
            prefix = v
        else:
            rest.append((k, v))
    return urlunsplit(parts._replace(query=urlencode(rest))), prefix


class RedisMirror:
    def __init__(self, client: redis.Redis, run_id: str, log: ServiceLog, *, prefix: str = "", url: str = "",
                 retries: int = 6) -> None:
        self.client = client
        self.run_id = run_id
        self.log = log
        self.prefix = prefix
        self.url = url
        self.retries = retries
        self.stale = False
        self.rebuilds = 0
        base = f"{prefix}swarm:{run_id}:"
        self.pheromone_prefix = base + "pheromone:"
        self.events_key = base + "events"
        self.marker_key = base + "mirror"

    @classmethod
    def connect(cls, url: str, run_id: str, log: ServiceLog) -> RedisMirror:
        if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise BadInput(f"redis URL {url!r}: expected redis://host:port/db")
        plain, prefix = split_prefix(url)
        try:
            client = redis.Redis.from_url(plain, socket_connect_timeout=3, socket_timeout=10)
        except ValueError as exc:
            raise BadInput(f"redis URL {url!r}: {exc}") from None
        mirror = cls(client, run_id, log, prefix=prefix, url=plain)
        try:
            with_retry(client.ping, service="redis", errors=REDIS_ERRORS, log=log, retries=3, what=f"at {plain}")
        except ServiceUnavailable:
            client.close()
            raise
        return mirror

    def key(self, capability: str) -> str:
        return self.pheromone_prefix + capability

    # ---- writing ---------------------------------------------------------------------------
    def _write(self, changes: Sequence[tuple], events: Sequence[tuple]) -> bool:
        """One pipeline: marker check, then the writes. True if the marker was there."""
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(self.marker_key)
        by_cap: dict[str, dict[str, float]] = defaultdict(dict)
        for task_id, capability, p in changes:
            by_cap[capability][str(task_id)] = p
        for capability, mapping in by_cap.items():
            pipe.zadd(self.key(capability), mapping)
        for fields in _stream_entries(events):
            pipe.xadd(self.events_key, fields)
        return bool(pipe.execute()[0])

    def publish(self, changes: Sequence[tuple], events: Sequence[tuple], pool: TaskPool) -> None:
        """Mirror committed changes; rebuild from ``pool`` if Redis lost its data."""
        retries = 0 if self.stale else self.retries
        try:
            had_marker = with_retry(lambda: self._write(changes, events), service="redis", errors=REDIS_ERRORS,
                                    log=self.log, retries=retries, what="mirror")
        except ServiceUnavailable as exc:
            if not self.stale:
                self.log.incidents.append({"service": "redis", "error": f"mirror marked stale: {exc}"})
            self.stale = True
            return
        if not had_marker or self.stale:
            self.rebuild(pool)

    def reconcile(self, pool: TaskPool, *, force: bool = False) -> bool:
        """Rebuild the mirror from the store if its marker is missing (or ``force``); True if rebuilt."""
        present = with_retry(lambda: self.client.exists(self.marker_key), service="redis", errors=REDIS_ERRORS,
                             log=self.log, retries=self.retries, what="reconcile")
        if (present and not force and not self.stale) or not pool.run_exists():
            return False
        self.rebuild(pool)
        return True

    def rebuild(self, pool: TaskPool) -> None:
        """Rewrite every pheromone sorted set and the event stream of the run from the store."""
        pheromones = pool.pheromones()
        events = pool.event_rows()

        def write() -> None:
            old = list(self.client.scan_iter(match=self.pheromone_prefix + "*", count=1000))
            pipe = self.client.pipeline(transaction=False)
            if old:
                pipe.delete(*old)
            pipe.delete(self.events_key)
            by_cap: dict[str, dict[str, float]] = defaultdict(dict)
            for task_id, capability, p in pheromones:
                by_cap[capability][str(task_id)] = p
            for capability, mapping in by_cap.items():
                items = list(mapping.items())
                for i in range(0, len(items), 10000):
                    pipe.zadd(self.key(capability), dict(items[i:i + 10000]))
            for fields in _stream_entries([row[1:] for row in events]):
                pipe.xadd(self.events_key, fields)
            pipe.set(self.marker_key, f"rebuilt {time.time():.3f} tasks={len(pheromones)} events={len(events)}")
            pipe.execute()

        with_retry(write, service="redis", errors=REDIS_ERRORS, log=self.log, retries=self.retries,
                   what="rebuild")
        self.stale = False
        self.rebuilds += 1
        self.log.incidents.append({"service": "redis", "error": "mirror rebuilt from the store",
                                   "tasks": len(pheromones), "events": len(events)})

    # ---- reading ---------------------------------------------------------------------------
    def pheromones(self, capability: str) -> dict[int, float]:
        """task id -> P_t in the mirror for one capability."""
        return {int(m): s for m, s in self.client.zrange(self.key(capability), 0, -1, withscores=True)}

    def top(self, capability: str, n: int = 1) -> list[tuple[int, float]]:
        """The ``n`` tasks with the highest P_t of a capability (the mirror's view of the trail)."""
        return [(int(m), s) for m, s in self.client.zrevrange(self.key(capability), 0, n - 1, withscores=True)]

    def stream_length(self) -> int:
        """Entries in the event stream (one per committed transaction)."""
        return int(self.client.xlen(self.events_key))

    def stream_event_count(self) -> int:
        """Ledger events carried by the stream."""
        return sum(int(fields[b"n"]) for _id, fields in self.client.xrange(self.events_key))

    def stream_events(self) -> list[tuple]:
        """Every event of the stream as ``(task, kind, agent, attempt, value, delta, note, at)``."""
        out: list[tuple] = []
        for _id, fields in self.client.xrange(self.events_key):
            out.extend(tuple(e) for e in orjson.loads(fields[b"events"]))
        return out

    def keys(self) -> list[str]:
        """Every Redis key of the run (to check there is no control or message key)."""
        pattern = f"{self.prefix}swarm:{self.run_id}:*"
        return sorted(k.decode() for k in self.client.scan_iter(match=pattern, count=1000))

    def delete(self) -> None:
        keys = self.keys()
        if keys:
            self.client.delete(*keys)

    def close(self) -> None:
        self.client.close()


def _stream_entries(events: Sequence[tuple]) -> list[dict[str, bytes | int]]:
    """Stream entries for events ``(run_id, task_id, kind, agent, attempt, value, delta, note, at)``."""
    out = []
    for i in range(0, len(events), STREAM_CHUNK):
        chunk = [e[1:] for e in events[i:i + STREAM_CHUNK]]
        out.append({"n": len(chunk), "events": orjson.dumps(chunk)})
    return out
