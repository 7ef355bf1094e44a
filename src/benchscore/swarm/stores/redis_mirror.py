"""The Redis mirror (``redis://host:port/db``, optional ``?prefix=KEYPREFIX``).

Keys of run R (all under the prefix):

- ``swarm:R:pheromone:CAPABILITY``: a sorted set, member = task id, score = P_t;
- ``swarm:R:events``: a Redis Stream carrying every ledger event exactly once: one entry per
  publish (one or more consecutive committed transactions of one writer; up to 1000 events per
  entry when the mirror is filled from the ledger),
  fields ``w`` (the writer whose chain the transaction extended), ``n`` (event count) and ``events``
  (a JSON list of ``[seq, task, kind, agent, attempt, value, delta, note, at]``); the entries of one
  writer are in its chain order, :meth:`RedisMirror.stream_events` returns them in ``seq`` order;
- ``swarm:R:mirror``: a hash, ``w:W`` (the last row of writer W's chain mirrored, its writer_seq),
  ``q:W`` (that row's ledger seq), ``events`` and ``entries`` (events and stream entries mirrored);
- ``swarm:R:mirror:task``: per task, the ledger seq of the last pheromone change mirrored;
- ``swarm:R:mirror:pending``: transactions that reached Redis before their writer's previous one;
- ``swarm:R:mirror:lock``: held while one process repairs the mirror.

The store (SQLite or PostgreSQL) stays the source of truth; each transaction is published after
its commit with its writer and the number of rows that writer's chain held before it (``prev``).
One Lua script applies a transaction atomically and in its writer's order: if ``prev`` is the last
row mirrored of that writer, its events are appended and its pheromones written; a transaction (or
the part of it) already mirrored is dropped; one whose predecessor of the same writer has not
arrived waits in ``pending`` and is applied as soon as it has. Writers are independent (there is no
run-wide order to wait for, so publishing adds no serial section across workers); a P_t is written
only when its change's ledger seq is above the last one mirrored for that task (the seqs of one
task's events follow its commits, see :mod:`benchscore.swarm.ledger`), so an older P_t never
overwrites a newer one whichever writer's publish arrives first. So publishes from many processes
in any order, repeated publishes and a repair running beside them never duplicate an event, never
lose one, and never let an older P_t overwrite a newer one.

When Redis loses the run's data (a flush, a restart without persistence) the next publish finds the
marker gone (only the first transaction of writer 1, the run's creator, may start a mirror); the
one process that takes the lock rebuilds the mirror from the store's ledger (the others keep
publishing; their transactions wait in ``pending`` and are applied behind the rebuild). A gap that
lasts (a worker killed between its commit and its publish, a Redis outage) is filled from the
ledger the same way. :meth:`RedisMirror.reconcile` (end of a run, ``swarm status --redis``)
compares the mirror with the store (every P_t, and every writer's rows mirrored against its chain
head) and rebuilds it when they differ. There is no control key and no message key: agents never
talk through Redis, they only read the pool.

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
-- KEYS: marker, stream, pending, task seqs
-- ARGV: pheromone key prefix, writer, prev (the writer's rows before), last (its rows after), the
--       events (a JSON list), each event's 1-based byte offset in it (comma-separated), the pheromone
--       changes (a JSON list of [seq, writer_seq, capability, task, P_t as text]), last event's seq,
--       '1' when this transaction may start the mirror (the run's first, or a fill from the ledger)
local marker, stream, pending, taskseq = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local zprefix = ARGV[1]
local lost = false
if redis.call('EXISTS', marker) == 0 then
  lost = not (ARGV[9] == '1' and redis.call('EXISTS', stream) == 0)
end
local events = tonumber(redis.call('HGET', marker, 'events') or '0')
local entries = tonumber(redis.call('HGET', marker, 'entries') or '0')
local tops = {}
local function top_of(w)
  if tops[w] == nil then tops[w] = tonumber(redis.call('HGET', marker, 'w:' .. w) or '0') end
  return tops[w]
end

-- apply one transaction in its writer's order (only its events after the writer's last mirrored);
-- false when the writer's previous transaction has not been applied yet
local function apply(w, prev_s, last_s, body, offsets_csv, changes, lastseq)
  local top = top_of(w)
  local last, prev = tonumber(last_s), tonumber(prev_s)
  if last <= top then return true end
  if prev > top then return false end
  local k = top - prev + 1
  if k > 1 then
    local offsets = {}
    for x in string.gmatch(offsets_csv, '%d+') do offsets[#offsets + 1] = x end
    body = '[' .. string.sub(body, tonumber(offsets[k]))
  end
  redis.call('XADD', stream, '*', 'w', w, 'n', last - top, 'events', body)
  local by, seqs = {}, {}
  for _, c in ipairs(cjson.decode(changes)) do
    if c[2] > top then
      local task = c[4]
      local known = seqs[task] or tonumber(redis.call('HGET', taskseq, task) or '0')
      if c[1] > known then
        seqs[task] = c[1]
        local key = zprefix .. c[3]
        local t = by[key]
        if not t then t = {}; by[key] = t end
        t[#t + 1] = c[5]
        t[#t + 1] = task
      end
    end
  end
  for key, t in pairs(by) do
    for j = 1, #t, 1000 do
      redis.call('ZADD', key, unpack(t, j, math.min(j + 999, #t)))
    end
  end
  local flat = {}
  for task, q in pairs(seqs) do
    flat[#flat + 1] = task
    flat[#flat + 1] = string.format('%d', q)
    if #flat >= 1000 then redis.call('HSET', taskseq, unpack(flat)); flat = {} end
  end
  if #flat > 0 then redis.call('HSET', taskseq, unpack(flat)) end
  tops[w] = last
  events, entries = events + last - top, entries + 1
  redis.call('HSET', marker, 'w:' .. w, last_s, 'q:' .. w, lastseq)
  return true
end

local state = 0
if lost or not apply(ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]) then
  redis.call('HSET', pending, ARGV[2] .. ':' .. ARGV[3] .. ':' .. ARGV[4],
             cmsgpack.pack({ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]}))
  state = lost and 2 or 1
else
  local progress = redis.call('HLEN', pending) > 0
  while progress do
    progress = false
    local all = redis.call('HGETALL', pending)
    for i = 1, #all, 2 do
      local e = cmsgpack.unpack(all[i + 1])
      if apply(e[1], e[2], e[3], e[4], e[5], e[6], e[7]) then
        redis.call('HDEL', pending, all[i])
        progress = true
      end
    end
  end
  redis.call('HSET', marker, 'events', events, 'entries', entries)
end
return {state, top_of(ARGV[2]), redis.call('HLEN', pending)}
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
        self.task_seq_key = base + "mirror:task"
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
    def _append(self, appended: Appended, retries: int | None = None, *, start: bool = False
                ) -> tuple[int, int, int]:
        """Apply one transaction with the append script: (state, rows of its writer mirrored,
        transactions pending). Only the run's first transaction (writer 1's first) or ``start`` (a
        fill from the ledger) may find no mirror without that meaning Redis lost it."""
        parts = [orjson.dumps(e) for e in appended.events]
        offsets, at = [], 2  # Lua strings are 1-based; the list starts with "["
        for part in parts:
            offsets.append(at)
            at += len(part) + 1
        args = [self.pheromone_prefix, appended.writer_id, appended.prev, appended.prev + len(appended.events),
                b"[" + b",".join(parts) + b"]", ",".join(map(str, offsets)),
                orjson.dumps([(seq, wseq, cap, str(task_id), repr(float(p)))
                              for seq, wseq, cap, task_id, p in appended.changes]),
                appended.events[-1][0],
                "1" if start or (appended.writer_id == 1 and appended.prev == 0) else "0"]
        state, top, pending = self._call(
            lambda: self._append_script(keys=[self.marker_key, self.events_key, self.pending_key, self.task_seq_key],
                                        args=args, client=self.client),
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
                marker = self._marker()
                rebuild = full or not marker
                if rebuild:
                    self._reset()
                if self._fill(pool, {} if rebuild else marker):
                    break
                full = True  # Redis lost the data again while it was being filled
            self.stale = False
            self.rebuilds += rebuild
            self.gap_fills += not rebuild
            return True
        finally:
            self._call(lambda: self._unlock_script(keys=[self.lock_key], args=[token], client=self.client), "unlock")

    def _marker(self) -> dict[str, int]:
        """The marker hash (``w:W``, ``q:W``, ``events``, ``entries``) as ints; {} when it is gone."""
        raw = self._call(lambda: self.client.hgetall(self.marker_key), "marker")
        return {k.decode(): int(v) for k, v in raw.items()}

    def _reset(self) -> None:
        """Delete the mirrored pheromones, stream, marker and task seqs (transactions waiting in
        pending stay)."""
        def reset() -> None:
            keys = list(self.client.scan_iter(match=self.pheromone_prefix + "*", count=1000))
            self.client.delete(self.events_key, self.marker_key, self.task_seq_key, *keys)

        self._call(reset, "rebuild")

    def _fill(self, pool: TaskPool, marker: dict[str, int]) -> bool:
        """Append each writer's ledger rows after the last one mirrored (per ``marker``) in chunks;
        False if the mirror was lost meanwhile."""
        from .base import Appended

        head = pool.ledger_head()
        behind = [w for w in head.writers if marker.get(f"w:{w.writer_id}", 0) < w.events]
        if not behind:
            return True
        since = min(marker.get(f"q:{w.writer_id}", 0) if marker.get(f"w:{w.writer_id}") else 0 for w in behind)
        rows = [r for r in pool.event_rows_after(since) if r[11] is not None]
        capability = {r[2]: r[8] for r in rows if r[3] == "create"}
        if any(r[3] == "pheromone" and r[2] not in capability for r in rows):
            capability.update({task_id: cap for task_id, cap, _p in pool.pheromones() if task_id not in capability})
        by_writer: dict[int, list[tuple]] = {}
        for r in rows:
            if r[12] > marker.get(f"w:{r[11]}", 0):
                by_writer.setdefault(r[11], []).append(r)
        count = 0
        first = not marker  # only the first chunk of a rebuild may start the mirror
        for writer, mine in sorted(by_writer.items()):
            mine.sort(key=lambda r: r[12])
            for i in range(0, len(mine), STREAM_CHUNK):
                chunk = mine[i:i + STREAM_CHUNK]
                events = [(r[0], *r[2:10]) for r in chunk]
                changes = [(r[0], r[12], capability[r[2]], r[2], r[6]) for r in chunk
                           if r[3] in ("create", "pheromone")]
                state, _top, _pending = self._append(Appended(writer, chunk[0][12] - 1, events, changes),
                                                     start=first)
                first = False
                if state == LOST:
                    return False
            count += len(mine)
        if count:
            self.log.incidents.append({"service": "redis", "error": "mirror filled from the store's ledger",
                                       "from_seq": since, "events": count})
        return True

    def _behind(self, pool: TaskPool) -> bool:
        head = pool.ledger_head()
        marker = self._call(lambda: self.client.hgetall(self.marker_key), "sync")
        if not marker:
            return head.events > 0
        return any(int(marker.get(f"w:{w.writer_id}".encode(), 0)) < w.events for w in head.writers)

    def sync(self, pool: TaskPool) -> None:
        """Bring the mirror up to the store's chain heads if it is behind (cheap when it is not)."""
        if not pool.run_exists():
            return
        if self.stale or self._behind(pool):
            self.repair(pool, wait=True)

    def compare(self, pool: TaskPool) -> dict[str, Any]:
        """The mirror against the store: every writer's chain head vs its rows mirrored, events and
        stream entries vs the marker, and every task's P_t (a task missing, extra or with another
        value is a mismatch)."""
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
        writers_behind = sum(1 for w in head.writers if marker.get(f"w:{w.writer_id}", 0) != w.events)
        out = {
            "ledger_events": head.events, "mirrored_events": marker.get("events", 0),
            "ledger_seq": head.seq,
            "mirrored_seq": max((v for k, v in marker.items() if k.startswith("q:")), default=0),
            "ledger_writers": len(head.writers), "writers_behind": writers_behind,
            "stream_entries": entries, "marker_entries": marker.get("entries", 0),
            "tasks": sum(len(v) for v in expected.values()), "pheromone_mismatches": mismatches,
        }
        out["consistent"] = (out["ledger_events"] == out["mirrored_events"] and out["ledger_seq"] == out["mirrored_seq"]
                             and writers_behind == 0 and entries == out["marker_entries"] and mismatches == 0)
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
        """Every event of the stream as ``(seq, task, kind, agent, attempt, value, delta, note, at)``,
        in ledger ``seq`` order."""
        out: list[tuple] = []
        for _id, fields in self._entries():
            out.extend(tuple(e) for e in orjson.loads(fields[b"events"]))
        return sorted(out, key=lambda e: e[0])

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
