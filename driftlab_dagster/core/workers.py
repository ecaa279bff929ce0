"""One step's independent, model-free pieces of work (a scenario's replay, a partition's questions) spread
over worker processes, their results handed back in the pieces' order, so the rows written are those of one
process, byte for byte.

Workers are forked: a child starts with the parent's memory (the parsed world, the loaded modules, the
inputs the parent has read from DuckDB), so it pays no start-up, reads no file, and touches nothing shared; it
only computes and sends its result back. The parent alone reads and writes DuckDB. Where fork is not
available (Windows), or with one worker or one piece, the work runs in the calling process as a lazy
iteration, exactly as a loop would.

Model calls never go through workers: the call cache, the spend accounting and the failure streak belong to
one process (calls in flight are the `concurrency` setting's job, threads in that process).
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.pool
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# The work a pool's children run: set just before the pool forks them, so each child finds it in the memory
# it was born with, and only an index (and the result) cross the pipe. Closures and unpicklable inputs are fine.
_WORK: tuple[Callable, Sequence] | None = None


def _run_one(index: int) -> list:
    assert _WORK is not None, "a worker started outside in_order"
    fn, items = _WORK
    return list(fn(items[index]))


def _quiet_worker() -> None:
    # A child inherits the parent's signal handlers (Dagster's turn SIGTERM into an exception with a
    # traceback). Ctrl-C is the parent's to handle (it stops the pool); a stopped pool ends its children quietly.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def runs_apart(workers: int, items: int) -> bool:
    """Whether `in_order` computes that many items in worker processes (else here, one after another)."""
    return workers > 1 and items > 1 and "fork" in multiprocessing.get_all_start_methods()


def in_order(fn: Callable[[Item], Iterable[Result]], items: Sequence[Item],
             workers: int) -> Iterator[tuple[Item, Iterable[Result]]]:
    """(item, fn(item)) for each item, in the items' order. With workers > 1 (and more than one item, and
    fork available) up to `workers` items are computed at once in forked children, each result a list; else
    each fn(item) runs here when its turn comes, and its iterable is handed over as it is (lazy).
    Not reentrant: fn must not call in_order itself."""
    global _WORK
    if not runs_apart(workers, len(items)):
        for item in items:
            yield item, fn(item)
        return
    if _WORK is not None:
        raise RuntimeError("in_order is not reentrant")
    _WORK = (fn, items)
    try:
        pool = _forked_pool(min(workers, len(items)))
        try:
            yield from zip(items, pool.imap(_run_one, range(len(items))))
            pool.close()  # every result is in: let the children exit on their own
        finally:
            pool.terminate()  # a no-op after close(); else (an error, the caller stopped early) stop them now
            pool.join()
    finally:
        _WORK = None


def _forked_pool(size: int) -> multiprocessing.pool.Pool:
    # A child shares the parent's memory until it writes a page of it, and the collector writes into every
    # object it walks: a full sweep in a child would copy the whole heap. Frozen objects are never walked, so
    # the children start with everything frozen and the parent takes its objects back (measured at 4,000
    # pages: the workers' time -23%). A heap someone else froze is left as it is.
    ours = gc.get_freeze_count() == 0
    if ours:
        gc.freeze()
    try:
        return multiprocessing.get_context("fork").Pool(size, initializer=_quiet_worker)
    finally:
        if ours:
            gc.unfreeze()
