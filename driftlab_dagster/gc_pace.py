"""How often the garbage collector sweeps in a process that runs the study.

CPython sweeps the young objects every 700 net allocations and, once enough of them survive, every tracked
object in the process. A study step allocates millions of short-lived rows (pages, facts, triples, events)
while the parsed world and Dagster's modules stay alive throughout, so with the default pace the full sweeps
re-walk a heap that grows with the corpus, more often as the corpus grows: measured at 4,000 pages they took
12 of the run's 52 CPU seconds, and the share grows faster than the corpus. Sweeping the young generation
every 100,000 allocations instead keeps the same guarantees (cycles are still collected, only later; the
heap's peak did not move) at a fraction of the walks. BENCHMARKS.md "Scale" has the measurements.

Set by the two entry points that run the study: the `driftlab` command, and `definitions.py`, the code
location Dagster imports in its code server and run workers. Importing the package itself sets nothing, so a
notebook or host process that imports it keeps its own pace.
"""

from __future__ import annotations

import gc

YOUNG_EVERY = 100_000  # net allocations between sweeps of the youngest generation (CPython's default: 700)
MIDDLE_EVERY = 50  # young sweeps between sweeps of the middle generation (default 10)
OLD_EVERY = 100  # middle sweeps before a full sweep is considered (default 10; CPython also waits for 25% growth)


def pace_for_batch() -> None:
    gc.set_threshold(YOUNG_EVERY, MIDDLE_EVERY, OLD_EVERY)
