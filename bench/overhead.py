"""Where the study's CPU goes, through Dagster and in the core, side by side in one run: what is left of
issue 11's 1.5x target, by cause.

    PYTHONPATH=. .venv/bin/python bench/overhead.py [--copies 1 100] [--out bench/out/overhead]

Needs py-spy (`pip install -e '.[bench]'`), a sampling profiler that reads the process from outside, so the
code under test runs unchanged (cProfile's per-call hook inflates Python-heavy parts several-fold and
misleads the split). For each size, `driftlab generate-world` scales the Tessaly world, then each of
`driftlab run --engine core` and `driftlab run` (Dagster, on-disk SQLite instance, a real DuckDB file, as
`make run`) runs twice: once alone, for its CPU seconds (user + sys from wait4), and once under py-spy, whose
samples split that CPU into the buckets below. Every sample goes to the first bucket whose frames it holds,
in this order:

- imports: loading modules (Dagster, SQLAlchemy, pandas, matplotlib...), wherever it happens;
- event log: Dagster storing its events (materialisations, check evaluations, step events) in SQLite;
- run setup: the instance, and each run's creation (its plan, the planned-materialisation events);
- world file: parsing the world;
- reports: results.csv / costs.csv and the report assets' tables and plots;
- writes: putting partitions' rows into DuckDB (building the frames, DELETE + INSERT);
- read-back: reading partitions back from DuckDB and rebuilding stores from them;
- checks: the drift checks' SQL;
- DuckDB file: opening it (its schema, the call cache), committing (the write-ahead log) and closing it
  (DuckDB's checkpoint);
- study: the study's own logic (rendering pages, extraction, patches, retrieval, answering), what the core
  does too;
- asset bodies: the assets' own lines around it (turning objects into rows, metadata);
- other: everything else (Dagster's executor, step and context handling, interpreter start).

Prints each bucket's CPU seconds for both engines and the difference: what Dagster adds, by cause.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from scale import generate_world, run_process  # noqa: E402

from driftlab_dagster.project import DEFAULT_WORLD  # noqa: E402

# (bucket, substrings of a frame "function (file:line)"), first match wins, so order is meaning.
BUCKETS: list[tuple[str, tuple[str, ...]]] = [
    ("imports", ("_find_and_load (<frozen importlib._bootstrap>",)),
    ("event log", ("EventLogStorage.store_event (",)),
    ("run setup", ("DagsterInstance.get (", "create_run_for_job (", "DagsterInstance.ephemeral (")),
    ("world file", ("load_world (", "cached_parse (")),
    ("reports", ("core/reports.py", "defs/reports/")),
    ("writes", ("replace_slices (", "slice_frame (", "SliceBatch.", "copy_slices (", "save_call_cache (",
                "Store.rows (", "Store.snapshot (")),
    ("read-back", ("stored_layer (", "core/layer_changes.py", "_store_rows (", "_governed_rows (", "_governed_store (",
                   "stored_page_history (", ".from_rows (", "_resume_point (")),
    ("checks", ("core/drift.py", "_findings (")),
    ("DuckDB file", ("WarehouseResource.get_connection (", "core/warehouse.py")),
    ("study", ("driftlab_dagster/core/",)),
    ("asset bodies", ("driftlab_dagster/defs/",)),
]
ORDER = [name for name, _ in BUCKETS] + ["other"]


def bucket_of(frames: list[str]) -> str:
    for name, needles in BUCKETS:
        if any(needle in frame for frame in frames for needle in needles):
            return name
    return "other"


def split(raw: Path) -> Counter:
    """py-spy's raw output (one `frame;frame;... count` line per distinct stack) -> samples per bucket."""
    samples: Counter = Counter()
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if count.isdigit():  # an empty stack (a thread caught between frames) is CPU all the same: "other"
            samples[bucket_of(stack.split(";")) if stack.strip() else "other"] += int(count)
    return samples


def measure(argv: list[str], env: dict[str, str], folder: Path, name: str, py_spy: str) -> tuple[float, Counter]:
    """The process's CPU seconds alone, and its samples per bucket from a second, sampled run."""
    fresh(folder, env)
    cpu = run_process(argv, env, folder / f"{name}.log")["cpu"]
    fresh(folder, env)
    raw = folder / f"{name}.raw"
    run_process([py_spy, "record", "--rate", "100", "--nonblocking", "--format", "raw", "--output", str(raw),
                 "--", *argv], env, folder / f"{name}-sampled.log")
    return cpu, split(raw)


def fresh(folder: Path, env: dict[str, str]) -> None:
    """An empty instance, DuckDB file, world cache and output: every run starts cold, as the first does."""
    for name in ("dagster_home", "world_cache", "out", "core"):
        shutil.rmtree(folder / name, ignore_errors=True)
    (folder / "dagster_home").mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", folder / "dagster_home" / "dagster.yaml")
    for stale in ("driftlab.duckdb", "driftlab.duckdb.wal"):
        (folder / stale).unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--source", type=Path, default=DEFAULT_WORLD)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "overhead")
    args = parser.parse_args()
    py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if py_spy is None:
        raise SystemExit("bench/overhead.py needs py-spy: pip install -e '.[bench]'")
    args.out = args.out.resolve()
    for copies in args.copies:
        folder = args.out / f"x{copies}"
        world_file = generate_world(args.source, copies, folder)
        env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
        env.update(DAGSTER_HOME=str(folder / "dagster_home"), DRIFTLAB_WORLD_CACHE=str(folder / "world_cache"))
        cli = [sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world_file)]
        core = measure(cli + ["--engine", "core", "--out", str(folder / "core")], env, folder, "core", py_spy)
        dagster = measure(cli + ["--database", str(folder / "driftlab.duckdb"), "--out", str(folder / "out")],
                          env, folder, "dagster", py_spy)
        report(copies * 40, core, dagster)


def report(pages: int, core: tuple[float, Counter], dagster: tuple[float, Counter]) -> None:
    def seconds(cpu: float, samples: Counter) -> dict[str, float]:
        total = sum(samples.values()) or 1
        return {name: cpu * samples[name] / total for name in ORDER}

    c, d = seconds(*core), seconds(*dagster)
    print(f"\n== {pages:,} pages: core {core[0]:.1f} s CPU, Dagster {dagster[0]:.1f} s CPU "
          f"({dagster[0] / core[0]:.2f}x) ==")
    print(f"  {'bucket':<12}{'core s':>9}{'Dagster s':>11}{'Dagster - core':>16}{'share of the gap':>18}")
    gap = dagster[0] - core[0]
    for name in ORDER:
        extra = d[name] - c[name]
        print(f"  {name:<12}{c[name]:9.1f}{d[name]:11.1f}{extra:16.1f}{100 * extra / gap if gap else 0:17.0f}%")
    print(f"  (samples: core {sum(core[1].values())}, Dagster {sum(dagster[1].values())}; each engine's CPU is split "
          "by its own samples' shares)")


if __name__ == "__main__":
    main()
