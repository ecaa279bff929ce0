"""The shipped model server with several slots on this machine's cores: one server using every thread and
answering one call at a time (k = 1), against N servers sharing the threads, each answering its own call
(k = N, the calls spread over them by the client's ServerPool).

    PYTHONPATH=. .venv/bin/python bench/model_slots.py [--slots 2] [--threads 2] [--until 2026-09-01]

Each run is a cold `driftlab run --extractor model --reader model` through Dagster (an empty DuckDB file,
Fresh, up to --until) against the shipped 0.5B model, in its own process; the server is started afresh
for each. Prints the wall time of each, their ratio, and whether results.csv is the same byte for byte
(temperature 0 on one model file: a server with fewer threads may still sum in another order).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from driftlab_dagster.model_server import MODEL_ALIAS, LlamaServer, slot_threads
from driftlab_dagster.project import PROJECT_ROOT


def one_run(slots: int, threads: int, until: str, work: Path) -> tuple[float, bytes]:
    work.mkdir(parents=True)
    with LlamaServer(threads=threads, slots=slots) as server:
        command = [sys.executable, "-m", "driftlab_dagster", "run", "--extractor", "model", "--reader", "model",
                   "--api", "openai", "--url", server.url, "--model", MODEL_ALIAS, "--timeout", "300",
                   "--database", str(work / "d.duckdb"), "--out", str(work), "--scenario", "Fresh",
                   "--until", until, "--concurrency", str(slots)]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"run failed ({slots} slots): {done.stderr[-2000:]}")
    return wall, (work / "tessaly_freight" / "results.csv").read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--until", default="2026-09-01")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = one_run(1, args.threads, args.until, Path(tmp) / "one")
        print(f"1 server x {args.threads} threads, k = 1: {base[0]:.1f} s", flush=True)
        many = one_run(args.slots, args.threads, args.until, Path(tmp) / "many")
        each = slot_threads(args.threads, args.slots)  # what each of the servers was given
        print(f"{args.slots} servers x {each} thread(s), k = {args.slots}: {many[0]:.1f} s", flush=True)
    print(f"ratio {many[0] / base[0]:.2f}; results.csv {'identical' if many[1] == base[1] else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
