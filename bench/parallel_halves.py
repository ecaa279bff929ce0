"""How far runs in parallel, whole, could take the study's wall time on this machine: the whole deterministic
study through Dagster (`driftlab run`, as `make run`) against its scenarios split in two halves run at the same
time, each `driftlab run --scenario ...` with an instance and a DuckDB file of its own, rounds interleaved.

    PYTHONPATH=. .venv/bin/python bench/parallel_halves.py [--copies 100] [--rounds 3] [--out bench/out/halves]

A half is a slice: its study run only (the maintenance run and the cost report need every scenario), and
nothing merges the two files afterwards. So the two halves' wall time is a floor for any design that runs
groups of scenarios in parallel processes, not a design; what the whole run does beyond the halves (its
maintenance run, the reports, a merge) comes on top. Per run: wall and CPU seconds (wait4, children included).
Prints the minimum over rounds of each and each against the whole run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scale import generate_world  # noqa: E402
from driftlab_dagster.core.world.loader import load_world  # noqa: E402
from driftlab_dagster.project import DEFAULT_WORLD  # noqa: E402


def start(world: Path, folder: Path, scenarios: list[str]) -> tuple[int, Path]:
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "dagster_home").mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", folder / "dagster_home" / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    env.update(DAGSTER_HOME=str(folder / "dagster_home"), DRIFTLAB_WORLD_CACHE=str(folder.parent / "world_cache"))
    argv = [sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world), "--database",
            str(folder / "driftlab.duckdb"), "--out", str(folder / "out")]
    for scenario in scenarios:
        argv += ["--scenario", scenario]
    with open(folder / "run.log", "w") as log:
        pid = os.posix_spawn(sys.executable, argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, log.fileno(), 1), (os.POSIX_SPAWN_DUP2, log.fileno(), 2)])
    return pid, folder


def timed(groups: list[list[str]], world: Path, folders: list[Path]) -> dict:
    """Start one run per group of scenarios at once ([] is the whole study) and wait for all: the wall time
    until the last ended, and their CPU together."""
    began, cpu = time.perf_counter(), 0.0
    for pid, folder in [start(world, folder, group) for group, folder in zip(groups, folders)]:
        _, status, usage = os.wait4(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"a run failed; see {folder / 'run.log'}")
        cpu += usage.ru_utime + usage.ru_stime
    return {"wall": time.perf_counter() - began, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=100, help="copies of the Tessaly world (100: 4,000 pages)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "halves")
    args = parser.parse_args()
    out = args.out.resolve()
    world = generate_world(DEFAULT_WORLD, args.copies, out / "world")
    scenarios = load_world(world).scenario_names
    halves = [scenarios[: len(scenarios) // 2], scenarios[len(scenarios) // 2:]]
    runs: dict[str, list[dict]] = {"whole": [], "halves": [], "half": []}
    for round_ in range(args.rounds):
        runs["whole"].append(timed([[]], world, [out / "whole"]))
        runs["halves"].append(timed(halves, world, [out / "half0", out / "half1"]))
        runs["half"].append(timed(halves[:1], world, [out / "half0"]))
        print(f"round {round_ + 1}: " + ", ".join(f"{k} {v[-1]['wall']:.1f} s" for k, v in runs.items()), flush=True)
    best = {k: {m: min(r[m] for r in v) for m in ("wall", "cpu")} for k, v in runs.items()}
    print(f"\n{40 * args.copies:,} pages, minimum of {args.rounds} rounds; halves: {' + '.join(halves[0])} | "
          f"{' + '.join(halves[1])}\n")
    print("| run | wall s | CPU s | wall / whole |\n|---|---|---|---|")
    for key, label in (("whole", "the whole study (study run, maintenance run, reports)"),
                       ("halves", "two halves at once, each its own instance and file (study runs only)"),
                       ("half", "one half alone")):
        print(f"| {label} | {best[key]['wall']:.1f} | {best[key]['cpu']:.1f} | "
              f"**{best[key]['wall'] / best['whole']['wall']:.2f}** |")


if __name__ == "__main__":
    main()
