"""The Redis mirror (``redis://host:port/db``, optional ``?prefix=KEYPREFIX``).

Keys of run R (all under the prefix):

- ``swarm:R:pheromone:CAPABILITY``: a sorted set, member = task id, score = P_t;
- ``swarm:R:events``: a Redis Stream carrying every ledger event exactly once, in ledger order: one
  entry per committed transaction (up to 1000 events per entry when the mirror is rebuilt), whose
  stream id is ``SEQ-0`` with SEQ the ledger ``seq`` of its first event, fields ``n`` (event count)
  and ``events`` (a JSON list of ``[seq, task, kind, agent, attempt, value, delta, note, at]``);
- ``swarm:R:mirror``: a hash, ``seq`` (the last ledger seq mirrored), ``events`` and ``entries``
  (events and stream entries mirrored);
- ``swarm:R:mirror:pending``: transactions that reached Redis before their predecessor;
- ``swarm:R:mirror:lock``: held while one process repairs the mirror.

The store (SQLite or PostgreSQL) stays the source of truth; each transaction is published after
its commit with the ``seq`` of the run's previous ledger row (``prev_seq``). One Lua script applies
a transaction atomically and only in ledger order: if ``prev_seq`` is the last seq mirrored, its
events are appended and its pheromones written; a transaction (or the part of it) already mirrored
is dropped; one whose predecessor has not arrived waits in ``pending`` and is applied as soon as
the predecessor is. So publishes from many processes in any order, repeated publishes and a repair
running beside them never duplicate an event, never lose one, and never let an older P_t overwrite
a newer one.

When Redis loses the run's data (a flush, a restart without persistence) the next publish finds the
marker gone; the one process that takes the lock rebuilds the mirror from the store's ledger (the
others keep publishing; their transactions wait in ``pending`` and are applied behind the rebuild).
A gap that lasts (a worker killed between its commit and its publish, a Redis outage) is filled from
the ledger the same way. :meth:`RedisMirror.reconcile` (end of a run, ``swarm status --redis``)
compares the mirror with the store (every P_t, events and seq mirrored against the ledger head) and
rebuilds it when they differ. There is no control key and no message key: agents never talk through
Redis, they only read the pool.

A Redis that stops answering is retried with backoff (reported in the service log); after the
retries the mirror is marked stale, publishing resumes when Redis answers again and the gap is
filled from the ledger; the final reconciliation raises ServiceUnavailable if Redis is still down.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import redis

from benchscore.common.errors import BadInput, ServiceUnavailable

from ..retry import ServiceLog, with_retry

if TYPE_CHECKING:
    from .base import Appended, TaskPool

T = TypeVar("T")
REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError)
#: events per stream entry when the mirror is filled from the ledger
STREAM_CHUNK = 1000
#: transactions waiting for a predecessor before the gap is filled from the ledger
PENDING_LIMIT = 64
#: how long a repair may hold the lock (a crashed holder's lock expires after this)
LOCK_SECONDS = 60.0

#: publish results
APPLIED, WAITING, LOST = 0, 1, 2

APPEND_LUA = """
-- KEYS: marker, stream, pending
-- ARGV: pheromone key prefix, prev_seq, last_seq, the events' seqs (comma-separated),
--       the events (a JSON list), each event's 1-based byte offset in it (comma-separated),
--       the pheromone changes (a JSON list of [seq, capability, task, P_t as text])
local marker, stream, pending = KEYS[1], KEYS[2], KEYS[3]
local zprefix = ARGV[1]
local top_s = redis.call('HGET', marker, 'seq')
local lost = false
if not top_s then
  top_s = '0'
  lost = tonumber(ARGV[2]) > 0 or redis.call('EXISTS', stream) == 1
end
local top = tonumber(top_s)
local events = tonumber(redis.call('HGET', marker, 'events') or '0')
local entries = tonumber(redis.call('HGET', marker, 'entries') or '0')

local function split(csv)
  local out = {}
  for x in string.gmatch(csv, '%d+') do out[#out + 1] = x end
  return out
end

-- apply one transaction in ledger order (only its events after the last seq mirrored); false when
-- its predecessor has not been applied yet
local function apply(prev_s, last_s, seqs_csv, body, offsets_csv, changes)
  local last = tonumber(last_s)
  if last <= top then return true end
  if tonumber(prev_s) > top then return false end
  local seqs = split(seqs_csv)
  local k = 1
  while tonumber(seqs[k]) <= top do k = k + 1 end
  if k > 1 then body = '[' .. string.sub(body, tonumber(split(offsets_csv)[k])) end
  redis.call('XADD', stream, seqs[k] .. '-0', 'n', #seqs - k + 1, 'events', body)
  local by = {}
  for _, c in ipairs(cjson.decode(changes)) do
    if c[1] > top then
      local key = zprefix .. c[2]
      local t = by[key]
      if not t then t = {}; by[key] = t end
      t[#t + 1] = c[4]
      t[#t + 1] = c[3]
    end
  end
  for key, t in pairs(by) do
    for j = 1, #t, 1000 do
      redis.call('ZADD', key, unpack(t, j, math.min(j + 999, #t)))
    end
  end
  top, top_s, events, entries = last, last_s, events + #seqs - k + 1, entries + 1
  return true
end

local state = 0
if lost or not apply(ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]) then
  redis.call('HSET', pending, ARGV[2] .. ':' .. ARGV[3],
             cmsgpack.pack({ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]}))
  state = lost and 2 or 1
else
  local progress = redis.call('HLEN', pending) > 0
  while progress do
    progress = false
    local all = redis.call('HGETALL', pending)
    for i = 1, #all, 2 do
      local e = cmsgpack.unpack(all[i + 1])
      if apply(e[1], e[2], e[3], e[4], e[5], e[6]) then
        redis.call('HDEL', pending, all[i])
        progress = true
      end
    end
  end
  redis.call('HSET', marker, 'seq', top_s, 'events', events, 'entries', entries)
end
return {state, top_s, redis.call('HLEN', pending)}
"""

UNLOCK_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


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
        self.gap_fills = 0
        base = f"{prefix}swarm:{run_id}:"
        self.pheromone_prefix = base + "pheromone:"
        self.events_key = base + "events"
        self.marker_key = base + "mirror"
        self.pending_key = base + "mirror:pending"
        self.lock_key = base + "mirror:lock"
        self._append_script = client.register_script(APPEND_LUA)
        self._unlock_script = client.register_script(UNLOCK_LUA)

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

    def _call(self, fn: Callable[[], T], what: str, retries: int | None = None) -> T:
        return with_retry(fn, service="redis", errors=REDIS_ERRORS, log=self.log,
                          retries=self.retries if retries is None else retries, what=what)

    # ---- writing ---------------------------------------------------------------------------
    def _append(self, appended: Appended, retries: int | None = None) -> tuple[int, int, int]:
        """Apply one transaction with the append script: (state, last seq mirrored, transactions pending)."""
        parts = [orjson.dumps(e) for e in appended.events]
        offsets, at = [], 2  # Lua strings are 1-based; the list starts with "["
        for part in parts:
            offsets.append(at)
            at += len(part) + 1
        args = [self.pheromone_prefix, appended.prev_seq, appended.events[-1][0],
                ",".join(str(e[0]) for e in appended.events), b"[" + b",".join(parts) + b"]",
                ",".join(map(str, offsets)),
                orjson.dumps([(seq, cap, str(task_id), repr(float(p))) for seq, cap, task_id, p in appended.changes])]
        state, top, pending = self._call(
            lambda: self._append_script(keys=[self.marker_key, self.events_key, self.pending_key], args=args,
                                        client=self.client),
            "mirror", retries)
        return int(state), int(top), int(pending)

    def publish(self, appended: Appended, pool: TaskPool) -> None:
        """Mirror one committed transaction; fill a gap or rebuild from ``pool`` when Redis lost data."""
        try:
            state, _top, pending = self._append(appended, retries=0 if self.stale else None)
            if state == LOST or (state == WAITING and (self.stale or pending > PENDING_LIMIT)):
                self.repair(pool)
            elif state == APPLIED:
                self.stale = False
        except ServiceUnavailable as exc:
            if not self.stale:
                self.log.incidents.append({"service": "redis", "error": f"mirror marked stale: {exc}"})
            self.stale = True

    def repair(self, pool: TaskPool, *, full: bool = False, wait: bool = False) -> bool:
        """Fill the mirror from the store's ledger: from the last seq mirrored on, or from scratch when
        the marker is gone or ``full``. One process at a time (a lock in Redis): returns False when
        another holds it and ``wait`` is off."""
        token = uuid.uuid4().hex
        deadline = time.monotonic() + (LOCK_SECONDS if wait else 0.0)
        while not self._call(lambda: self.client.set(self.lock_key, token, nx=True, px=int(LOCK_SECONDS * 1000)),
                             "lock"):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        try:
            for _ in range(3):
                top = self._call(lambda: self.client.hget(self.marker_key, "seq"), "repair")
                rebuild = full or top is None
                if rebuild:
                    self._reset()
                if self._fill(pool, 0 if rebuild else int(top)):
                    break
                full = True  # Redis lost the data again while it was being filled
            self.stale = False
            self.rebuilds += rebuild
            self.gap_fills += not rebuild
            return True
        finally:
            self._call(lambda: self._unlock_script(keys=[self.lock_key], args=[token], client=self.client), "unlock")

    def _reset(self) -> None:
        """Delete the mirrored pheromones, stream and marker (transactions waiting in pending stay)."""
        def reset() -> None:
            keys = list(self.client.scan_iter(match=self.pheromone_prefix + "*", count=1000))
            self.client.delete(self.events_key, self.marker_key, *keys)

        self._call(reset, "rebuild")

    def _fill(self, pool: TaskPool, top: int) -> bool:
        """Append the ledger rows after ``top`` in chunks; False if the mirror was lost meanwhile."""
        from .base import Appended

        rows = pool.event_rows_after(top)
        capability = {r[2]: r[8] for r in rows if r[3] == "create"}
        if any(r[3] == "pheromone" and r[2] not in capability for r in rows):
            capability.update({task_id: cap for task_id, cap, _p in pool.pheromones() if task_id not in capability})
        prev = top
        for i in range(0, len(rows), STREAM_CHUNK):
            chunk = rows[i:i + STREAM_CHUNK]
            events = [(r[0], *r[2:10]) for r in chunk]
            changes = [(r[0], capability[r[2]], r[2], r[6]) for r in chunk if r[3] in ("create", "pheromone")]
            state, _top, _pending = self._append(Appended(prev, events, changes))
            if state == LOST:
                return False
            prev = chunk[-1][0]
        if rows:
            self.log.incidents.append({"service": "redis", "error": "mirror filled from the store's ledger",
                                       "from_seq": top, "events": len(rows)})
        return True

    def sync(self, pool: TaskPool) -> None:
        """Bring the mirror up to the store's ledger head if it is behind (cheap when it is not)."""
        if not pool.run_exists():
            return
        head = pool.ledger_head()
        top = self._call(lambda: self.client.hget(self.marker_key, "seq"), "sync")
        if (top is None and head.seq > 0) or (top is not None and int(top) < head.seq) or self.stale:
            self.repair(pool, wait=True)

    def compare(self, pool: TaskPool) -> dict[str, Any]:
        """The mirror against the store: ledger head vs seq/events mirrored, stream entries vs the
        marker, and every task's P_t (a task missing, extra or with another value is a mismatch)."""
        head = pool.ledger_head()
        expected: dict[str, dict[int, float]] = {}
        for task_id, cap, p in pool.pheromones():
            expected.setdefault(cap, {})[task_id] = p

        def read() -> tuple[dict, int, dict[str, dict[int, float]]]:
            marker = {k.decode(): int(v) for k, v in self.client.hgetall(self.marker_key).items()}
            caps = {k.decode()[len(self.pheromone_prefix):]
                    for k in self.client.scan_iter(match=self.pheromone_prefix + "*", count=1000)}
            return marker, int(self.client.xlen(self.events_key)), {c: self.pheromones(c) for c in caps}

        marker, entries, mirrored = self._call(read, "compare")
        mismatches = 0
        for cap in set(expected) | set(mirrored):
            want, got = expected.get(cap, {}), mirrored.get(cap, {})
            mismatches += sum(1 for t in set(want) | set(got) if want.get(t) != got.get(t))
        out = {
            "ledger_events": head.events, "mirrored_events": marker.get("events", 0),
            "ledger_seq": head.seq, "mirrored_seq": marker.get("seq", 0),
            "stream_entries": entries, "marker_entries": marker.get("entries", 0),
            "tasks": sum(len(v) for v in expected.values()), "pheromone_mismatches": mismatches,
        }
        out["consistent"] = (out["ledger_events"] == out["mirrored_events"] and out["ledger_seq"] == out["mirrored_seq"]
                             and entries == out["marker_entries"] and mismatches == 0)
        return out

    def reconcile(self, pool: TaskPool) -> dict[str, Any]:
        """Catch up, compare with the store, rebuild when they differ. Returns the comparison after
        the repair (``repaired``: whether a rebuild was needed; ``before``: what differed)."""
        if not pool.run_exists():
            return {}
        self.sync(pool)
        before = self.compare(pool)
        if before["consistent"]:
            return {**before, "repaired": False, "rebuilds": self.rebuilds, "gap_fills": self.gap_fills}
        self.log.incidents.append({"service": "redis", "error": "mirror differs from the store: rebuilt",
                                   **{k: v for k, v in before.items() if k != "consistent"}})
        self.repair(pool, full=True, wait=True)
        after = self.compare(pool)
        return {**after, "repaired": True, "before": before, "rebuilds": self.rebuilds, "gap_fills": self.gap_fills}

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

    def _entries(self) -> Sequence[tuple]:
        out: list[tuple] = []
        start = "-"
        while True:
            page = self.client.xrange(self.events_key, min=start, count=500)
            out.extend(page)
            if len(page) < 500:
                return out
            start = "(" + page[-1][0].decode()

    def stream_event_count(self) -> int:
        """Ledger events carried by the stream."""
        return sum(int(fields[b"n"]) for _id, fields in self._entries())

    def stream_events(self) -> list[tuple]:
        """Every event of the stream as ``(seq, task, kind, agent, attempt, value, delta, note, at)``."""
        out: list[tuple] = []
        for _id, fields in self._entries():
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
