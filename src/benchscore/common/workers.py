"""Work spread over forked worker processes that never outlive a Ctrl-C.

:func:`forked_map` is ``[fn(*args) for args in calls]`` in up to ``workers`` forked processes. The
workers ignore SIGINT (Ctrl-C in a terminal reaches the whole process group: it is the parent's to
handle, with one line and exit 130). When the parent stops early (Ctrl-C, an error of a worker), every
worker still running is killed and reaped before the exception goes on: none can write a file after
the parent has put an output folder back, none is left behind, and nothing waits for a page being
drawn. No thread and no exit hook is involved (``concurrent.futures`` joins its workers at exit).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from typing import Any

from .interrupts import sigint_held


def _child(conn: Connection, fn: Callable[..., Any], args: tuple) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        result: tuple[bool, Any] = (True, fn(*args))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
        result = (False, exc)
    try:
        conn.send(result)
    except Exception as exc:  # noqa: BLE001 - a result or error that does not pickle
        conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def start_without_sigint(proc: Any) -> None:
    """Start a worker process with SIGINT blocked across the fork: the worker (which ignores SIGINT and unblocks
    it first thing) never gets one before it can ignore it; the parent alone answers Ctrl-C."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        proc.start()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _start(ctx: Any, fn: Callable[..., Any], args: tuple) -> tuple[Any, Connection]:
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    try:
        start_without_sigint(proc)
    finally:
        send.close()
    return proc, receive


def _kill(running: dict[Connection, tuple[int, Any]]) -> None:
    for _, proc in running.values():
        proc.kill()
    for receive, (_, proc) in running.items():
        proc.join()
        receive.close()
    running.clear()


def forked_map(fn: Callable[..., Any], calls: Sequence[tuple], workers: int) -> list[Any]:
    """``[fn(*args) for args in calls]``, in up to ``workers`` forked processes (results in order). An
    exception of ``fn`` is raised here (the first one, after every other worker was killed); a worker
    that dies is a ``RuntimeError``."""
    ctx = get_context("fork")
    results: list[Any] = [None] * len(calls)
    pending = list(enumerate(calls))
    running: dict[Connection, tuple[int, Any]] = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                i, args = pending.pop(0)
                proc, receive = _start(ctx, fn, args)
                running[receive] = (i, proc)
            for receive in wait(list(running)):
                i, proc = running[receive]
                try:
                    ok, value = receive.recv()
                except EOFError:
                    ok, value = False, RuntimeError(f"a worker process died (exit code {proc.exitcode})")
                receive.close()
                proc.join()
                del running[receive]
                if not ok:
                    raise value
                results[i] = value
    except BaseException:
        with sigint_held(reraise=False):  # already on the way out; a second Ctrl-C must not stop this half-way
            _kill(running)
        raise
    return results
