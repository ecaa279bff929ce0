"""Model calls in flight: `--concurrency 8` against `--concurrency 1`, on a loopback OpenAI-compatible server
that answers every chat call after DELAY seconds, and on the same server without the delay. The time spent
waiting on the model is a run's wall time minus that of the same run against the undelayed server.

    PYTHONPATH=. .venv/bin/python bench/concurrency.py [--delay 0.5] [--k 8] [--reader model|deterministic]

Each run is a cold `driftlab run --extractor model` through Dagster (empty DuckDB file, Fresh, the first day)
in its own process; the four runs of a round are interleaved, and the rows of every run are compared with
those of k = 1 (results.csv, byte for byte). The server is the test double of the fault tests
(driftlab_dagster/loopback_server.py): it reads perfectly and answers the reader "unknown".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.loopback_server import LoopbackModelServer
from driftlab_dagster.project import DEFAULT_WORLD, PROJECT_ROOT


def one_run(url: str, k: int, reader: str, work: Path) -> tuple[float, bytes]:
    work.mkdir(parents=True)
    command = [sys.executable, "-m", "driftlab_dagster", "run", "--extractor", "model",
               "--reader", reader, "--api", "openai", "--url", url, "--model", "fake-model", "--timeout", "30",
               "--database", str(work / "d.duckdb"), "--out", str(work), "--scenario", "Fresh",
               "--until", "2026-09-01", "--concurrency", str(k)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"run failed (k={k}): {done.stderr[-2000:]}")
    return wall, (work / "tessaly_freight" / "results.csv").read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--reader", choices=["model", "deterministic"], default="model")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    ontology = load_world(DEFAULT_WORLD).ontology
    walls: dict[tuple[float, int], list[float]] = {}
    calls: dict[float, int] = {}
    reference = None
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for delay in (0.0, args.delay):
                with LoopbackModelServer(ontology, latency=delay) as server:
                    for k in (1, args.k):
                        wall, rows = one_run(server.url, k, args.reader, Path(tmp) / f"r{r}-d{delay}-k{k}")
                        reference = reference or rows
                        if rows != reference:
                            raise SystemExit(f"rows differ at k={k}, delay={delay}")
                        walls.setdefault((delay, k), []).append(wall)
                    calls[delay] = server.chat_requests // 2  # both runs made the same calls
    best = {key: min(v) for key, v in walls.items()}
    print(f"reader {args.reader}; {calls[args.delay]} chat calls per cold run; every run's rows equal k = 1's")
    for k in (1, args.k):
        print(f"k = {k}: wall {best[(args.delay, k)]:.1f} s at {args.delay} s per call, {best[(0.0, k)]:.1f} s "
              f"undelayed; waiting on the model {best[(args.delay, k)] - best[(0.0, k)]:.1f} s")
    waiting = [best[(args.delay, k)] - best[(0.0, k)] for k in (1, args.k)]
    print(f"waiting at k = {args.k} / waiting at k = 1: {waiting[1] / waiting[0]:.2f}")


if __name__ == "__main__":
    main()
