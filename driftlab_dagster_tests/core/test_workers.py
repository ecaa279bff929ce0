"""Worker processes for a step's model-free pieces: results in the pieces' order, from other processes, errors
carried back, and the one-process route as lazy as a loop."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal

import pytest

from driftlab_dagster.core.workers import WorkerDied, in_order, runs_apart

pytestmark = pytest.mark.skipif(not runs_apart(2, 2), reason="needs fork (not on Windows)")


def _square_with_pid(n: int):
    yield n * n, os.getpid()


# Pieces 0 and 1 each wait until the other has started: they can only both finish in two processes at once
# (a fast worker may otherwise take every piece of a small test before the others start).
_BOTH_STARTED = multiprocessing.get_context("fork").Barrier(2) if runs_apart(2, 2) else None


def _square_with_pid_two_at_once(n: int):
    if n < 2:
        assert _BOTH_STARTED is not None
        _BOTH_STARTED.wait(timeout=30)
    yield n * n, os.getpid()


def test_results_come_back_in_order_from_other_processes_at_once():
    got = [(item, list(result)) for item, result in in_order(_square_with_pid_two_at_once, list(range(7)), workers=3)]
    assert [item for item, _ in got] == list(range(7))
    assert [r[0][0] for _, r in got] == [n * n for n in range(7)]
    pids = {r[0][1] for _, r in got}
    assert os.getpid() not in pids and 2 <= len(pids) <= 3


def test_one_worker_runs_here_and_lazily():
    taken = []

    def piece(n: int):
        taken.append(n)
        yield n, os.getpid()

    pieces = in_order(piece, [1, 2, 3], workers=1)
    item, result = next(pieces)
    assert item == 1 and taken == []  # nothing computed before the caller takes the result
    assert list(result) == [(1, os.getpid())] and taken == [1]
    assert [list(r) for _, r in pieces] == [[(2, os.getpid())], [(3, os.getpid())]]


def test_a_closure_needs_no_pickling():
    offset = object()

    def piece(n: int):  # a local function cannot be pickled; a forked child has it in memory
        yield n, offset is not None

    assert [list(r) for _, r in in_order(piece, [1, 2], workers=2)] == [[(1, True)], [(2, True)]]


def _fails_on_two(n: int):
    if n == 2:
        raise ValueError("piece 2 is broken")
    yield n


def test_an_error_in_a_worker_reaches_the_caller():
    with pytest.raises(ValueError, match="piece 2 is broken"):
        for _ in in_order(_fails_on_two, [1, 2, 3], workers=2):
            pass


def test_not_reentrant():
    def nested(n: int):
        yield from (r for _, r in in_order(_square_with_pid, [n, n], workers=2))

    with pytest.raises(RuntimeError, match="not reentrant"):
        for _ in in_order(lambda n: [n], [1, 2], workers=2):
            list(in_order(nested, [1, 2], workers=2))


def test_runs_apart_only_with_several_workers_and_pieces():
    assert not runs_apart(1, 5) and not runs_apart(4, 1) and runs_apart(2, 2)


def _frozen_in_the_worker(n: int):
    yield gc.get_freeze_count() > 0


def test_workers_start_with_the_heap_frozen_and_the_parent_gets_it_back():
    assert gc.get_freeze_count() == 0
    assert [list(r) for _, r in in_order(_frozen_in_the_worker, [1, 2], workers=2)] == [[True], [True]]
    assert gc.get_freeze_count() == 0


def _killed_on_two(n: int):
    if n == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer would
    yield n


def test_a_killed_worker_is_a_clear_error_not_a_hang():
    with pytest.raises(WorkerDied, match="killed, or out of memory"):
        for _ in in_order(_killed_on_two, [1, 2, 3], workers=2):
            pass
    assert [list(r) for _, r in in_order(_square_with_pid, [3], workers=2)][0][0][0] == 9  # usable again
