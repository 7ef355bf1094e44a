"""Reading results files side by side (``--jobs``): one function maps the per-file step over the files.

:func:`map_files` runs ``fn(item)`` for each item, one after another (``jobs`` 1) or in a pool of worker
processes, and gives the results in the order of the items whatever order they finish in, so what is
read is the same for any ``jobs``. A file refused (:class:`~benchscore.common.errors.BadInput`) is refused
as a serial read refuses it: the first refused file in the items' order, once every file before it has been
read (the rest are not waited for). ``fn`` must be picklable (a top-level function, or a
:func:`functools.partial` of one) and so must what it returns.

Workers are forked (the platform's default on Linux: they inherit the settings of the process, e.g. a
lowered size limit) before any thread of the caller's progress bar starts. Ctrl-C reaches the workers too:
each ends at once, quietly (SystemExit in place of a traceback per worker), and the pool is terminated and
joined before the interrupt goes on; workers never ignore it.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from benchscore.common.errors import BadInput


def jobs_of(jobs: int | None) -> int:
    """The number of processes ``--jobs`` asks for: None is one per core."""
    return max(1, jobs if jobs is not None else (os.cpu_count() or 1))


def _interrupted(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _worker_start() -> None:
    """A worker ends quietly on Ctrl-C (the parent terminates the pool and reports the interrupt)."""
    signal.signal(signal.SIGINT, _interrupted)


def _indexed(fn: Callable[[Any], Any], pair: tuple[int, Any]) -> tuple[int, bool, Any]:
    """``fn`` of one item, with its index; a refusal comes back as its parts (a BadInput pickles as its text
    alone: the parent raises it again with its source, record and field)."""
    i, item = pair
    try:
        return i, True, fn(item)
    except BadInput as exc:
        return i, False, (exc.detail, exc.source, exc.record, exc.field)


def map_files(fn: Callable[[Any], Any], items: Iterable[Any], *, jobs: int | None = 1,
              on_done: Callable[[Any, Any], None] | None = None) -> list[Any]:
    """``[fn(item) for item in items]``, in ``jobs`` processes (None: one per core); ``on_done(item, result)``
    is called in this process as each item is done (in the order they finish)."""
    items = list(items)
    n = min(jobs_of(jobs), len(items))
    if n <= 1:
        out = []
        for item in items:
            got = fn(item)
            if on_done is not None:
                on_done(item, got)
            out.append(got)
        return out
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    results: list[Any] = [None] * len(items)
    done = [False] * len(items)
    refused: dict[int, tuple[str, Any, Any, Any]] = {}
    pool = ctx.Pool(n, initializer=_worker_start)
    try:
        for i, ok, got in pool.imap_unordered(partial(_indexed, fn), enumerate(items)):
            done[i] = True
            if ok:
                results[i] = got
                if on_done is not None:
                    on_done(items[i], got)
            else:
                refused[i] = got
            if refused:
                first = min(refused)
                if all(done[:first]):
                    detail, source, record, field = refused[first]
                    raise BadInput(detail, source=source, record=record, field=field)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
    return results


__all__ = ["jobs_of", "map_files"]
