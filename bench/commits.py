"""The whole deterministic study through Dagster at two commits, side by side: what a change did to Dagster's
cost, measured against the in-memory core in the same rounds (the machines are shared and noisy, so a change
is judged by the ratios of one run, not by seconds from two).

    PYTHONPATH=. .venv/bin/python bench/commits.py BASE [--copies 1000] [--rounds 2] [--instance postgres]
                                                         [--out bench/out/commits]

BASE is any commit (a `git worktree` of it is made under --out); the other side is this work tree. Per round,
interleaved: the core at this work tree (`driftlab run --engine core`), then `driftlab run` (Dagster, as `make
run` runs it: an on-disk SQLite instance, a fresh DuckDB file) at BASE and here, each with a cold world cache.
Prints the minimum over rounds of each one's wall and CPU seconds (user + system from wait4, children
included), and each Dagster CPU over the core's. Stops if the two commits' results.csv or costs.csv differ by
a byte. With `--instance postgres` the Dagster runs store their runs and events in the local PostgreSQL that
`make pg-up` starts (a fresh database per run), and their CPU includes the server's meanwhile.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.instance_storage import postgres_home, server_cpu  # noqa: E402
from bench.scale import generate_world, run_process  # noqa: E402
from driftlab_dagster.local_postgres import LocalPostgres, throwaway  # noqa: E402
from driftlab_dagster.project import DEFAULT_WORLD  # noqa: E402


def worktree(commit: str, folder: Path) -> Path:
    """A checkout of `commit` (made once, reused while it is that commit)."""
    path = folder / "base"
    sha = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    if path.exists():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True).stdout
        if head == sha:
            return path
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=True)
    subprocess.run(["git", "worktree", "add", "--detach", "--force", str(path), sha.strip()], cwd=ROOT, check=True,
                   capture_output=True)
    return path


def dagster_run(code: Path, world_file: Path, folder: Path, pg: LocalPostgres | None = None) -> dict:
    """One cold `driftlab run` of the code at `code`, in `folder` (emptied first); on `pg` when given."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "dagster_home").mkdir(parents=True)
    if pg is None:
        shutil.copy(code / "dagster.yaml", folder / "dagster_home" / "dagster.yaml")
    else:
        postgres_home(pg, folder / "dagster_home", code / "dagster.yaml")
        spent = server_cpu(pg)
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    env.update(PYTHONPATH=str(code), DAGSTER_HOME=str(folder / "dagster_home"),
               DRIFTLAB_WORLD_CACHE=str(folder / "world_cache"))
    found = run_process([sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world_file), "--database",
                         str(folder / "driftlab.duckdb"), "--out", str(folder / "out")], env, folder / "run.log",
                        cwd=code)  # `python -m` puts the working directory first on the path: the code run is `code`'s
    if pg is not None:
        found["cpu"] += server_cpu(pg) - spent
    return found


def core_run(world_file: Path, folder: Path) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), DRIFTLAB_WORLD_CACHE=str(folder / "world_cache"))
    return run_process([sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world_file), "--engine",
                        "core", "--out", str(folder / "out")], env, folder / "run.log")


def same_reports(a: Path, b: Path) -> None:
    """results.csv and costs.csv, byte for byte (timings.csv holds what each pass took: it differs by nature)."""
    reports = sorted(p for name in ("results.csv", "costs.csv") for p in a.rglob(name))
    if not reports:
        raise SystemExit(f"no results.csv under {a}")
    for report in reports:
        other = b / report.relative_to(a)
        if not other.is_file() or other.read_bytes() != report.read_bytes():
            raise SystemExit(f"{report.relative_to(a)} differs between the two commits: not the same rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the commit to compare this work tree with")
    parser.add_argument("--copies", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--instance", choices=["sqlite", "postgres"], default="sqlite",
                        help="where the Dagster runs store their runs and events")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "commits")
    args = parser.parse_args()
    out = args.out.resolve()
    base = worktree(args.base, out)
    world_file = generate_world(DEFAULT_WORLD, args.copies, out / f"x{args.copies}")
    runs: dict[str, list[dict]] = {"core": [], "base": [], "here": []}
    with throwaway() if args.instance == "postgres" else nullcontext() as pg:
        for _ in range(args.rounds):
            runs["core"].append(core_run(world_file, out / "core"))
            runs["base"].append(dagster_run(base, world_file, out / "at_base", pg))
            runs["here"].append(dagster_run(ROOT, world_file, out / "here", pg))
            same_reports(out / "at_base" / "out", out / "here" / "out")
    best = {name: {m: min(r[m] for r in rs) for m in ("wall", "cpu")} for name, rs in runs.items()}
    print(f"\n== {args.copies * 40:,} pages, {args.rounds} rounds (minimum of each), base {args.base}, "
          f"{args.instance} instance ==")
    print(f"  {'run':<24}{'wall s':>9}{'CPU s':>9}{'CPU / core':>12}")
    for name, label in (("core", "in-memory core (here)"), ("base", f"Dagster at {args.base}"),
                        ("here", "Dagster, this work tree")):
        print(f"  {label:<24}{best[name]['wall']:9.1f}{best[name]['cpu']:9.1f}"
              f"{best[name]['cpu'] / best['core']['cpu']:12.2f}")
    print(f"  this work tree / base: wall {best['here']['wall'] / best['base']['wall']:.2f}, "
          f"CPU {best['here']['cpu'] / best['base']['cpu']:.2f}; results.csv and costs.csv identical")


if __name__ == "__main__":
    main()
