"""``--scheduler ADDRESS``: read results on a Dask distributed cluster (docs/results.md).

:func:`dask_map` gives :func:`benchscore.results.reading.read` its ``map_units``: each unit (one result's files:
an inspect_ai run and model's logs, an lm-eval run, an Every Eval Ever record, a table of scores) is read and
made an evaluation by ``reading.read_unit`` on a worker; the evaluations come back in the order of the units, so
the comparison, made here on the client, is the local run's. Files are read where the workers see them: a local
path must be on storage the workers share (the same path), an fsspec URL (``s3://``) is read by the worker from
the URL. Dask is the optional ``dask`` extra; without it ``--scheduler`` is refused in one line saying how to
install it.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from benchscore.common.errors import BadInput

INSTALL = "pip install 'benchscore[dask]'"
#: seconds to wait for the scheduler to answer
CONNECT_TIMEOUT = 30


def dask_client_class() -> Any:
    """distributed's ``Client``; refused in one line when Dask is not installed."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise BadInput(f"--scheduler needs Dask's distributed scheduler, which is not installed ({exc}): {INSTALL}") \
            from None
    return Client


_FIELDS = ("task", "sample_id", "epoch", "identity", "metadata", "error", "limit", "retried_errors", "edits", "raw")


def pack(evaluations: list[Any]) -> list[tuple[Any, tuple[Any, ...]]]:
    """Evaluations as they travel from a worker: each one's per-sample records as columns (a list per field, the
    values as one list per metric when every record has the same metrics), which pickle and unpickle several
    times faster than the records themselves (:func:`unpack` makes the same records again)."""
    out = []
    for e in evaluations:
        samples, e.samples = e.samples, []
        try:
            columns = tuple([getattr(s, f) for s in samples] for f in _FIELDS)
            keys = tuple(samples[0].values) if samples else ()
            if all(tuple(s.values) == keys for s in samples):
                values: Any = (keys, [[s.values[k] for s in samples] for k in keys])
            else:
                values = (None, [s.values for s in samples])
            shell = copy.copy(e)
        finally:
            e.samples = samples
        out.append((shell, (columns, values)))
    return out


def unpack(packed: list[tuple[Any, tuple[Any, ...]]]) -> list[Any]:
    """The evaluations :func:`pack` packed, with their per-sample records as they were."""
    from .formats import SampleResult

    out = []
    for shell, (columns, (keys, values)) in packed:
        task, sid, epoch, identity, metadata, error, limit, retried, edits, raw = columns
        rows = [dict(zip(keys, row, strict=True)) for row in zip(*values, strict=True)] if keys is not None else values
        if keys == () and not rows:
            rows = [{} for _ in task]
        shell.samples = [SampleResult(*r) for r in zip(task, sid, epoch, rows, identity, metadata, error, limit,
                                                        retried, edits, raw, strict=True)]
        out.append(shell)
    return out


def _packed_call(fn: Callable[[Any], list[Any]], item: Any) -> list[tuple[Any, tuple[Any, ...]]]:
    return pack(fn(item))


def dask_map(address: str) -> Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[Any]]:
    """A ``map(fn, items)`` that runs each ``fn(item)`` (a list of evaluations: packed on the worker, unpacked here)
    on the Dask cluster whose scheduler is at ``address`` (``tcp://HOST:PORT``) and yields the results in the order
    of ``items``; an exception raised by ``fn`` on a
    worker (a refusal: :class:`BadInput`) is raised here as it was there."""
    client_class = dask_client_class()

    def run(fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        items = list(items)
        try:
            client = client_class(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise BadInput(f"--scheduler {address}: no Dask scheduler answers there "
                           f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None
        with client:
            futures = client.map(functools.partial(_packed_call, fn), items, pure=False)
            try:
                for future in futures:
                    yield unpack(future.result())
            finally:
                client.cancel(futures)

    return run


__all__ = ["CONNECT_TIMEOUT", "INSTALL", "dask_client_class", "dask_map", "pack", "unpack"]
