"""The whole study on the shipped 0.5B model, cold, two ways in one run on one server: the settings
before issue 9 (page-level few-shot-v1 extraction, reader-v1) against today's defaults (relation-v1
extraction, reader-v3). Each arm starts from an empty DuckDB file, so nothing is served from a cache
that the other arm filled; the arms alternate so both see the same machine.

    PYTHONPATH=. .venv/bin/python bench/model_speed.py [--rounds 1] [--out bench/out/speed]

Prints wall time, distinct model calls, calls a live system makes, tokens, and the ratio new / old.
Takes about half an hour a round on 2 cores.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from driftlab_dagster.config import StudySettings
from driftlab_dagster.model_server import MODEL_ALIAS, LlamaServer

_NOW = StudySettings()
# Both arms spell their prompts out: a settings file (driftlab.yaml) must not decide what is measured.
ARMS = {
    "before (few-shot-v1, reader-v1)": ["--prompt", "few-shot-v1", "--reader-prompt", "reader-v1"],
    f"now (the defaults: {_NOW.prompt}, {_NOW.reader_prompt})": ["--prompt", _NOW.prompt,
                                                                  "--reader-prompt", _NOW.reader_prompt],
}


def run_arm(url: str, folder: Path, flags: list[str]) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "driftlab_dagster", "run", "--extractor", "model", "--reader", "model",
                           "--api", "openai", "--url", url, "--model", MODEL_ALIAS, "--max-failed-share", "1",
                           "--database", str(folder / "driftlab.duckdb"), "--out", str(folder), *flags],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    (folder / "stdout.txt").write_text(done.stdout)
    (folder / "stderr.txt").write_text(done.stderr)
    if done.returncode != 0:  # --max-failed-share 1 never fails a run for its calls: anything else is a crash
        raise SystemExit(f"{folder}: driftlab run failed ({done.returncode}): {done.stderr[-1500:]}")
    with duckdb.connect(str(folder / "driftlab.duckdb"), read_only=True) as conn:
        calls, tokens, ms = conn.execute("SELECT count(*), sum(input_tokens + output_tokens), sum(latency_ms) "
                                         "FROM model_calls WHERE kind = 'chat'").fetchone()
    live = next((line for line in done.stdout.splitlines() if line.startswith("model calls ")), "")
    return {"seconds": seconds, "distinct_calls": calls, "tokens": tokens, "model_seconds": (ms or 0) / 1000,
            "live": live}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("bench/out/speed"))
    parser.add_argument("--only", choices=["old", "new"], help="run one arm (to redo one; the ratio then needs "
                                                               "the other arm's time from an earlier run)")
    args = parser.parse_args()
    arms = {n: f for n, f in ARMS.items() if args.only is None or ("before" in n) == (args.only == "old")}
    results: dict[str, list[dict]] = {name: [] for name in arms}
    with LlamaServer() as server:
        for i in range(args.rounds):
            order = list(arms) if i % 2 == 0 else list(reversed(arms))
            for name in order:
                result = run_arm(server.url, args.out / f"round{i}-{'old' if 'before' in name else 'new'}", arms[name])
                results[name].append(result)
                print(f"round {i} {name}: {result['seconds']:.0f}s wall, {result['distinct_calls']} distinct calls, "
                      f"{result['tokens']} tokens, {result['model_seconds']:.0f}s in the model; {result['live']}",
                      flush=True)
    if len(arms) < 2:
        return
    old, new = (min(r["seconds"] for r in results[name]) for name in ARMS)
    print(f"\ncold whole-study ratio new / old: {new / old:.2f} ({new:.0f}s / {old:.0f}s, best of {args.rounds})")


if __name__ == "__main__":
    main()
