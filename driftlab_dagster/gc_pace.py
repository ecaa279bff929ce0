"""How often the garbage collector sweeps in a process that runs the study.

CPython sweeps the young objects every 700 net allocations and, once enough of them survive, every tracked
object in the process. A study step allocates millions of short-lived rows (pages, facts, triples, events)
while the parsed world and Dagster's modules stay alive throughout, so with the default pace the full sweeps
re-walk a heap that grows with the corpus, more often as the corpus grows: measured at 4,000 pages they took
12 of the run's 52 CPU seconds, and the share grows faster than the corpus. Sweeping the young generation
every 100,000 allocations instead keeps the same guarantees (cycles are still collected, only later; the
heap's peak did not move) at a fraction of the walks. BENCHMARKS.md "Scale" has the measurements.

The same processes skip the collector's sweeps of the old heap when the interpreter shuts down. After the last
line has run, finalisation sweeps every tracked object again while it tears the modules down:
1.8 of the 18 CPU seconds of a whole 40-page run through Dagster, time spent finding cycles in a heap the
kernel is about to take back in one piece. Freezing the heap at exit (the collector's permanent generation)
leaves those objects to the kernel; everything still runs its exit handlers and closes what it holds by
reference count, and what the study writes is committed before its step ends, never left to a finaliser.

Both are set by the two entry points that run the study: the `driftlab` command, and `definitions.py`, the code
location Dagster imports in its code server and run workers. Importing the package itself sets nothing, so a
notebook or host process that imports it keeps its own pace.
"""

from __future__ import annotations

import atexit
import gc

YOUNG_EVERY = 100_000  # net allocations between sweeps of the youngest generation (CPython's default: 700)
MIDDLE_EVERY = 50  # young sweeps between sweeps of the middle generation (default 10)
OLD_EVERY = 100  # middle sweeps before a full sweep is considered (default 10; CPython also waits for 25% growth)


_exit_registered = False


def pace_for_batch() -> None:
    global _exit_registered
    gc.set_threshold(YOUNG_EVERY, MIDDLE_EVERY, OLD_EVERY)
    if not _exit_registered:
        # Exit handlers run last-registered first, so this runs after any registered later (logging's flush,
        # Dagster's): freezing only stops the sweeps, objects made after it are collected as usual.
        atexit.register(gc.freeze)
        _exit_registered = True
