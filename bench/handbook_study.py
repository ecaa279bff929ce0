"""The whole drift study on a prose handbook with years of git history, on the shipped 0.5B model: a real
one (`--world data/handbooks/18f/handbook.yaml`, 18F's handbook; see its README for the repository), or
by default the Thistlecombe prose fixture (data/fixtures/thistlecombe/) built into a fresh git
repository, run through the documented path (`driftlab run --world handbook.yaml --extractor model
--reader model`), through Dagster and DuckDB, exactly as a user runs their own wiki.

    PYTHONPATH=. .venv/bin/python bench/handbook_study.py [--world W.yaml] [--out bench/out/handbook] [--url URL]
        [--scenarios S ...] [--until DAY] [--keep] [--governed-when-silent abstain] [--calls FILE]

Starts the shipped model (llama-cpp-python's server) unless --url is given. Prints, from the run's own
files: All / Drifted accuracy per design and scenario, abstention where the handbook does not say
("none"), wrong answers hedged and right answers hedged, and the cost of patching the changed pages versus
re-extracting every page at each checkpoint (pages read, tokens, seconds). Takes about 35 minutes cold on
2 cores; replies are cached in the run's DuckDB file, so a rerun with --keep only pays for what changed.

`--calls FILE` keeps the paid replies in a file that outlives the DuckDB file and the machine (commit it): the
run's cache is seeded from it before the run, and every reply the file or the cache then holds is written back
after it, also when the run failed or was interrupted, sorted by key so that the file's diff shows only new
calls. The study's hours of model time are then paid once, not once per machine. (Each line is a `model_calls`
row, tokens and latency kept; `driftlab run --api replay --replay-file FILE` reads the same file.) The calls whose
reply was unusable are kept beside it (`x.failures.jsonl` for `x.jsonl`), so that a resumed run asks them again as
known trouble with their prompt, not as news that the server is down (`core/stored_calls.py`).
The study then also prints what the file's replies cost when each was paid: a cold run's calls, tokens and
model time, summed over the sessions that paid them.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from contextlib import closing, nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftlab_dagster.core.duckdb_file import connect  # noqa: E402
from driftlab_dagster.core.stored_calls import export_calls, import_calls, read_calls_file  # noqa: E402
from driftlab_dagster.core.warehouse import ensure_schema  # noqa: E402
from driftlab_dagster.core.world.loader import load_world  # noqa: E402
from driftlab_dagster.fixture_repo import build_handbook  # noqa: E402
from driftlab_dagster.model_server import MODEL_ALIAS, LlamaServer  # noqa: E402


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def by_design(rows: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """The result rows per (design, scenario), in the order the run wrote them."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["design"], r["scenario"])].append(r)
    return groups


def right(rows: list[dict]) -> int:
    return sum(r["outcome"] == "correct" for r in rows)


def accuracy_table(rows: list[dict]) -> list[str]:
    lines = ["| Design | Scenario | All | Drifted | Abstained on none | Wrong hedged | Right hedged |",
             "|---|---|---|---|---|---|---|"]
    for (design, scenario), group in by_design(rows).items():
        drifted = [r for r in group if r["drifted"] == "True"]
        none = [r for r in group if r["expected"] == "none"]
        wrong = [r for r in group if r["outcome"] == "wrong"]
        hedged_right = [r for r in group if r["outcome"] == "correct" and r["hedged"] == "True"]
        lines.append(f"| {design} | {scenario} | {pct(right(group), len(group))} | "
                     f"{pct(right(drifted), len(drifted))} | {pct(right(none), len(none))} ({len(none)}) | "
                     f"{sum(r['hedged'] == 'True' for r in wrong)} of {len(wrong)} | "
                     f"{len(hedged_right)} of {right(group)} |")
    return lines


def checkpoint_table(rows: list[dict]) -> list[str]:
    """Right answers per design and checkpoint (step), all and drifted: where a design gains or loses as the
    handbook's history goes on."""
    steps = sorted({int(r["step"]) for r in rows})
    lines = ["| Design | Scenario | " + " | ".join(f"step {s}: all, drifted" for s in steps) + " |",
             "|---|---|" + "---|" * len(steps)]
    for (design, scenario), group in by_design(rows).items():
        cells = []
        for step in steps:
            here = [r for r in group if int(r["step"]) == step]
            drifted = [r for r in here if r["drifted"] == "True"]
            cells.append(f"{right(here)}/{len(here)}, {right(drifted)}/{len(drifted)}")
        lines.append(f"| {design} | {scenario} | " + " | ".join(cells) + " |")
    return lines


def cost_table(costs: list[dict], timings: list[dict]) -> list[str]:
    ms = {(t["approach"], t["event"]): int(t["ms"]) for t in timings}  # timings.csv: this run's stopwatch
    lines = ["| Checkpoint | Approach | Pages read | Input tokens | Output tokens | Tokens paid | Seconds |",
             "|---|---|---|---|---|---|---|"]
    for c in sorted(costs, key=lambda c: (int(c["event"]), c["approach"])):
        paid = int(c.get("spent_input_tokens") or 0) + int(c.get("spent_output_tokens") or 0)
        seconds = ms.get((c["approach"], c["event"]))
        lines.append(f"| {c['event']} | {c['approach']} | {c['docs']} | {c['input_tokens']} | {c['output_tokens']} | "
                     f"{paid} | {'-' if seconds is None else f'{seconds / 1000:.1f}'} |")
    return lines


def seed_calls(database: Path, path: Path) -> tuple[int, int]:
    with closing(connect(str(database))) as conn:
        ensure_schema(conn)
        return import_calls(conn, path)


def keep_calls(database: Path, path: Path) -> tuple[int, int]:
    with closing(connect(str(database), read_only=True)) as conn:
        return export_calls(conn, path)


def paid_for(path: Path) -> str:
    """What the calls file's replies cost when each was paid: the cold run's model time, summed over sessions
    and machines (each call's latency as recorded, so calls paid beside other jobs count slower)."""
    entries, _ = read_calls_file(path)
    seconds = sum(e.latency_ms for e in entries.values()) / 1000
    tokens = sum(e.input_tokens + e.output_tokens for e in entries.values())
    return f"{len(entries)} replies, {tokens} tokens, {seconds:.0f} s of model time as paid"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "handbook")
    parser.add_argument("--url", help="an OpenAI-compatible server already serving the model (default: start one)")
    parser.add_argument("--keep", action="store_true", help="keep the DuckDB file (and its cached replies)")
    parser.add_argument("--scenarios", nargs="*", help="only these scenarios (default: all)")
    parser.add_argument("--world", type=Path, help="a corpus world file (default: build the Thistlecombe fixture)")
    parser.add_argument("--until", help="run the checkpoints through this day only")
    parser.add_argument("--model", default=MODEL_ALIAS, help="which shipped model to start (qwen2.5-coder-1.5b: the "
                                                             "llm-large extra), or the id --url serves")
    parser.add_argument("--governed-when-silent", choices=("auto", "abstain", "pages"),
                        help="what Governed does where its graph holds nothing (default: the study setting of that "
                             "name in driftlab.yaml, whose auto reads a wiki's pages)")
    parser.add_argument("--calls", type=Path, help="seed the call cache from this file of paid replies and write "
                                                   "the cache's replies back to it after the run")
    args = parser.parse_args()
    if not args.keep:
        shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.world:
        world = args.world.resolve()
    else:
        world = args.out / "fixture" / "handbook.yaml"
        if not world.exists():
            built = build_handbook(args.out / "fixture")
            print(f"built {built.repo}: {len(built.commits)} commits, checkpoints "
                  f"{', '.join(d.isoformat() for d in built.checkpoints)}", flush=True)
    world_id = load_world(world).id
    database = args.out / "driftlab.duckdb"
    if args.calls:
        replies, failures = seed_calls(database, args.calls)
        print(f"seeded the call cache from {args.calls}: {replies} replies, {failures} calls known unusable",
              flush=True)

    with (nullcontext() if args.url else LlamaServer(alias=args.model)) as server:
        url = args.url or server.url  # type: ignore[union-attr]
        started = time.perf_counter()
        command = [sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world),
                   "--extractor", "model", "--reader", "model", "--api", "openai", "--url", url,
                   "--model", args.model, "--max-failed-share", "1",  # report the failed share, never drop the tables
                   "--progress",
                   *(["--governed-when-silent", args.governed_when_silent] if args.governed_when_silent else []),
                   "--database", str(database), "--out", str(args.out),
                   *[flag for s in args.scenarios or [] for flag in ("--scenario", s)],
                   *(["--until", args.until] if args.until else [])]
        log = args.out / "stderr.txt"  # written as the run goes: `tail -f` it to follow the steps
        print(f"running {' '.join(command[1:4])} ...; its log as it goes: {log}", flush=True)
        try:
            with open(log, "w", encoding="utf-8") as err:
                done = subprocess.run(command, stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT)
        finally:  # paid replies are kept even when the run failed or was interrupted
            if args.calls:
                replies, failures = keep_calls(database, args.calls)
                print(f"kept {replies} replies and {failures} calls still unusable in {args.calls}", flush=True)
        seconds = time.perf_counter() - started
    (args.out / "stdout.txt").write_text(done.stdout)
    print(done.stdout)
    if done.returncode != 0:  # with --max-failed-share 1, only a crash: its tables are not the study's
        raise SystemExit(f"driftlab run failed ({done.returncode}):\n{log.read_text(encoding='utf-8')[-2000:]}")

    folder = args.out / world_id
    rows = list(csv.DictReader(open(folder / "results.csv", encoding="utf-8")))
    sliced = not (folder / "costs.csv").exists()  # a slice of the study writes no cost comparison
    costs = [] if sliced else list(csv.DictReader(open(folder / "costs.csv", encoding="utf-8")))
    timings = [] if sliced else list(csv.DictReader(open(folder / "timings.csv", encoding="utf-8")))
    print(f"\nwhole prose study: {seconds:.0f} s wall, exit {done.returncode}")
    if args.calls:
        print(f"the calls file: {paid_for(args.calls)}")
    print()
    print("\n".join(accuracy_table(rows)))
    print()
    print("\n".join(checkpoint_table(rows)))
    print()
    print("\n".join(cost_table(costs, timings)))


if __name__ == "__main__":
    main()
