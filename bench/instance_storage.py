"""Dagster's own cost on SQLite against PostgreSQL storage, side by side: the same headless study
(`driftlab run`, deterministic, a fresh DuckDB file) with DAGSTER_HOME on the project's SQLite instance and on
the local PostgreSQL instance that `make pg-up` starts (driftlab_dagster/local_postgres.py), rounds
interleaved; and the in-memory core (`--engine core`) as the floor.

    PYTHONPATH=. .venv/bin/python bench/instance_storage.py [--rounds 3] [--world data/worlds/tessaly_freight.yaml]

CPU is the run process's user + system time (its children included), plus, for PostgreSQL, what the server
spent meanwhile (the postmaster's own and its reaped backends' time, from /proc). Prints the minimum over
rounds of each, and the ratios to the core.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import yaml

from driftlab_dagster.local_postgres import ROLE, LocalPostgres, instance_settings, throwaway
from driftlab_dagster.project import DEFAULT_WORLD, PROJECT_ROOT

TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu(pg: LocalPostgres) -> float:
    """Seconds of CPU the server has used: the postmaster and the backends it has reaped."""
    pid = int((pg.data / "postmaster.pid").read_text().splitlines()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / TICKS  # utime, stime, cutime, cstime


def postgres_home(pg: LocalPostgres, home: Path, base: Path = PROJECT_ROOT / "dagster.yaml") -> None:
    """An instance folder whose runs and events go to a new database of their own on `pg`: `base`'s settings
    (pools, run monitoring) with the local server's storage."""
    database = f"run_{uuid.uuid4().hex[:12]}"
    subprocess.run(["createdb", "-h", "127.0.0.1", "-p", str(pg.port), "-U", ROLE, database], check=True)
    settings = instance_settings(pg, base, database)
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")


def one_run(home: Path | None, world: Path, work: Path, engine: str) -> tuple[float, float]:
    work.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "DRIFTLAB_CONFIG", "DRIFTLAB_WORLD")}
    if home is not None:
        env["DAGSTER_HOME"] = str(home)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "driftlab_dagster", "run", "--engine", engine, "--world", str(world),
                           "--database", str(work / "d.duckdb"), "--out", str(work)], env=env, cwd=PROJECT_ROOT,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--world", type=Path, default=DEFAULT_WORLD)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {"core": [], "sqlite": [], "postgres": []}
    with throwaway() as pg:
        state = pg.state
        sqlite_home = state / "sqlite_home"
        sqlite_home.mkdir()
        shutil.copy(PROJECT_ROOT / "dagster.yaml", sqlite_home / "dagster.yaml")
        for r in range(args.rounds):
            results["core"].append(one_run(None, args.world, state / f"core{r}", "core"))
            results["sqlite"].append(one_run(sqlite_home, args.world, state / f"sqlite{r}", "dagster"))
            spent = server_cpu(pg)
            wall, cpu = one_run(pg.home, args.world, state / f"pg{r}", "dagster")
            results["postgres"].append((wall, cpu + server_cpu(pg) - spent))
    core_cpu = min(c for _, c in results["core"])
    print(f"{args.world.name}, {args.rounds} rounds interleaved (minimum of each)")
    print(f"{'route':<28}{'wall s':>8}{'CPU s':>8}{'CPU / core':>12}")
    for name, label in (("core", "in-memory core"), ("sqlite", "Dagster, SQLite instance"),
                        ("postgres", "Dagster, PostgreSQL instance")):
        wall, cpu = min(w for w, _ in results[name]), min(c for _, c in results[name])
        print(f"{label:<28}{wall:>8.1f}{cpu:>8.2f}{cpu / core_cpu:>12.2f}")


if __name__ == "__main__":
    main()
