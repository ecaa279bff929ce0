"""What the study costs as the corpus grows: 40, 400, 4,000 (and 40,000) pages, side by side in one run.

    PYTHONPATH=. .venv/bin/python bench/scale.py [--copies 1 10 100 1000] [--out bench/out/scale]

For each size, `driftlab generate-world` scales the Tessaly world (its 40 pages plus renamed, unchanging
sister copies; the same 4 events and 20 questions), then:

1. **The whole deterministic study**, as whole processes: the in-memory core (`driftlab run --engine core`)
   and Dagster as `make run` runs it (`driftlab run`, on-disk SQLite instance, a real DuckDB file). Wall
   seconds, CPU seconds (user + sys of the process and its children) and peak RSS, from wait4. Both parse
   the world cold. Then the graph partition of the first event's day is materialised again, alone, through
   Dagster, as a click does: once with an empty world cache and once with the one the Dagster run kept.
2. **Per event**, from the run's own costs.csv: pages read, estimated tokens and graph writes for patching
   the changed pages, patching from the system of record and re-extracting everything.
3. **Retrieval** over the day-0 pages: index build time and median query latency (the study's 20 question
   texts, each asked 5 times) for the default (rank-bm25 with our Lucene idf, `Bm25Retriever`), bm25s
   (if installed: `pip install -e '.[bench]'`), and DuckDB's full-text search (if its extension loads here).
4. **Store queries** on the full graph: facts for (entity, predicate) and pages changed since extraction.

Prints one table per part with the ratios to read: Dagster CPU / core CPU at each size, and each size's
cost over the previous size's (10x the pages should cost at most ~10x).
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftlab_dagster.core.extraction import RegexExtractor, patch_changed_pages  # noqa: E402
from driftlab_dagster.core.layer import KnowledgeLayer  # noqa: E402
from driftlab_dagster.core.reports import cost_curve_plot  # noqa: E402
from driftlab_dagster.core.retrieval import Bm25Retriever, tokenize  # noqa: E402
from driftlab_dagster.core.store import Store  # noqa: E402
from driftlab_dagster.core.world.loader import load_world  # noqa: E402
from driftlab_dagster.project import DEFAULT_WORLD  # noqa: E402


def generate_world(source: Path, copies: int, folder: Path) -> Path:
    """`driftlab generate-world` (seed 7) into folder/world.yaml, as a user would run it."""
    folder.mkdir(parents=True, exist_ok=True)
    world_file = folder / "world.yaml"
    subprocess.run([sys.executable, "-m", "driftlab_dagster", "generate-world", str(source), "--copies", str(copies),
                    "--seed", "7", "--out", str(world_file)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return world_file


def run_process(argv: list[str], env: dict[str, str] | None = None, log: Path | None = None,
                cwd: Path = ROOT) -> dict:
    """Run a whole process; its wall seconds, CPU seconds (with children) and peak RSS in MiB."""
    started = time.perf_counter()
    with open(log or os.devnull, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(argv[:6])}... exited {code}; see {log}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024}


def study_runs(world_file: Path, folder: Path) -> dict[str, dict]:
    cli = [sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world_file)]
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    # Both study processes parse the world cold (each its own empty world cache), so the ratio compares like
    # with like; then the one-event patch runs cold, and warm on the world the Dagster run kept, as a click
    # in the UI after a run finds it.
    caches = folder / "world_cache"
    shutil.rmtree(caches, ignore_errors=True)
    core = run_process(cli + ["--engine", "core", "--out", str(folder / "core")],
                       {**env, "DRIFTLAB_WORLD_CACHE": str(caches / "core")}, folder / "core.log")
    home = folder / "dagster_home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    db = folder / "driftlab.duckdb"
    for stale in (db, db.with_suffix(".duckdb.wal")):
        stale.unlink(missing_ok=True)
    dagster = run_process(cli + ["--database", str(db), "--out", str(folder / "dagster")],
                          {**env, "DAGSTER_HOME": str(home), "DRIFTLAB_WORLD_CACHE": str(caches / "dagster")},
                          folder / "dagster.log")
    dagster["db_mib"] = db.stat().st_size / 2**20
    patches = {}
    for cache in ("cold", "dagster"):
        log = folder / f"patch-{cache}.log"
        patches[cache] = run_process([sys.executable, str(Path(__file__).resolve()), "--one-event-patch",
                                      str(world_file), str(folder)],
                                     {**env, "DAGSTER_HOME": str(home), "DRIFTLAB_WORLD_CACHE": str(caches / cache)},
                                     log)
        patches[cache]["how"] = log.read_text().strip().splitlines()[-1]
    return {"core": core, "dagster": dagster, "patch": patches["dagster"], "patch_cold": patches["cold"]}


def one_event_patch(world_file: Path, folder: Path) -> None:
    """After the whole study: materialise the graph of the first event's day in Fresh again, alone, through
    Dagster on the same instance and DuckDB file, as a user clicking one partition (it resumes from the
    stored day before). Prints the step's own seconds and how the partition was replayed."""
    import dagster as dg

    from driftlab_dagster.config import DriftlabConfig
    from driftlab_dagster.defs import build_definitions, study_contexts
    from driftlab_dagster.headless import execute_job

    config = DriftlabConfig(worlds=[world_file], database=folder / "driftlab.duckdb", output_dir=folder / "dagster")
    contexts = study_contexts(config)
    world = contexts[0].world
    job = build_definitions(config, contexts=contexts).resolve_job_def(f"{world.id}__study")
    graph = [dg.AssetKey([world.id, n]) for n in ("fact_graph", "extraction_log", "governed_graph")]
    key = f"{world.day_keys[1]}|Fresh"
    instance = dg.DagsterInstance.get()
    started = time.perf_counter()
    execute_job(job, instance, partition_key=key, asset_selection=graph)
    seconds = time.perf_counter() - started
    record = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=graph[0], asset_partitions=[key]),
                                             limit=1).records[0]
    how = record.asset_materialization.metadata["replayed_from"].value
    print(f"{key}: {seconds:.1f} s in the run; {how}")


def event_costs(costs_csv: Path) -> dict[tuple[int, str], dict]:
    with costs_csv.open() as f:
        return {(int(r["event"]), r["approach"]): r for r in csv.DictReader(f)}


def median_ms(fn, queries: list[str], repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        for q in queries:
            started = time.perf_counter()
            fn(q)
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def retrieval(pages: list, queries: list[str]) -> dict[str, tuple[float, float] | str]:
    """name -> (index build seconds, median query ms), or why it could not be measured here."""
    out: dict[str, tuple[float, float] | str] = {}
    started = time.perf_counter()
    default = Bm25Retriever(pages)
    default.scores("warm up")  # the postings are built on the first query: count them as part of the index
    build = time.perf_counter() - started
    # `scores` bypasses the retriever's answer cache: this times the scoring, not a dict look-up.
    out["rank-bm25 (default)"] = (build, median_ms(lambda q: default.scores(q), queries))
    try:
        import bm25s

        started = time.perf_counter()
        index = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        index.index([tokenize(f"{p.title} {p.body}") for p in pages], show_progress=False)
        build = time.perf_counter() - started
        out["bm25s"] = (build, median_ms(lambda q: index.get_scores(tokenize(q)), queries))
    except ImportError:
        out["bm25s"] = "not installed (pip install -e '.[bench]')"
    try:
        import duckdb

        conn = duckdb.connect()
        conn.execute("INSTALL fts; LOAD fts")
        started = time.perf_counter()
        conn.execute("CREATE TABLE docs (id VARCHAR, text VARCHAR)")
        conn.executemany("INSERT INTO docs VALUES (?, ?)", [(p.id, f"{p.title} {p.body}") for p in pages])
        conn.execute("PRAGMA create_fts_index('docs', 'id', 'text', stemmer='none', stopwords='none')")
        build = time.perf_counter() - started
        sql = ("SELECT id, score FROM (SELECT id, fts_main_docs.match_bm25(id, ?) AS score FROM docs) "
               "WHERE score IS NOT NULL ORDER BY score DESC, id LIMIT 3")
        out["duckdb fts"] = (build, median_ms(lambda q: conn.execute(sql, [q]).fetchall(), queries))
    except Exception as e:  # noqa: BLE001 - the extension is downloaded from extensions.duckdb.org
        out["duckdb fts"] = f"unavailable here ({type(e).__name__}: {str(e).splitlines()[0][:90]})"
    return out


def store_queries(world, pages: list) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Median ms of the store's two hot queries on the full day-0 graph, and full-build seconds."""
    store = Store()
    at = world.start
    for p in pages:
        store.upsert_page(p.id, p.title, p.body, at)
    started = time.perf_counter()
    patch_changed_pages(KnowledgeLayer(store), RegexExtractor(world.ontology), at, 0)
    build = time.perf_counter() - started
    slots = [(store.resolve(q.entity), q.hops[0]) for q in world.questions_at(0)]
    slots = [(e, p) for e, p in slots if e is not None]
    facts_ms = median_ms(lambda s: store.facts_about(*s), slots)  # type: ignore[arg-type]
    changed_ms = median_ms(lambda _: store.pages_changed_since_extraction(), [None])  # type: ignore[list-item]
    return {"graph build s": build, "facts (entity, predicate) ms": facts_ms, "pages changed ms": changed_ms,
            "facts": len(store.facts)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--source", type=Path, default=DEFAULT_WORLD)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "scale")
    parser.add_argument("--skip-study", action="store_true", help="only retrieval and store queries")
    parser.add_argument("--one-event-patch", nargs=2, type=Path, metavar=("WORLD", "FOLDER"),
                        help=argparse.SUPPRESS)  # the bench's own child process (see one_event_patch)
    args = parser.parse_args()
    args.out = args.out.resolve()  # DAGSTER_HOME below must be absolute
    if args.one_event_patch:
        one_event_patch(*args.one_event_patch)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    # The bench's own loads keep their parsed worlds beside its output, not in the user's cache.
    os.environ.setdefault("DRIFTLAB_WORLD_CACHE", str(args.out / "world_cache"))

    rows = []
    for copies in args.copies:
        folder = args.out / f"x{copies}"
        world_file = generate_world(args.source, copies, folder)
        world = load_world(world_file)
        print(f"\n== {world.page_count:,} pages ({world.id}) ==", flush=True)
        row: dict = {"pages": world.page_count, "copies": copies}
        if not args.skip_study:
            row.update(study_runs(world_file, folder))
            print(f"  core    {row['core']['wall']:8.1f} s wall {row['core']['cpu']:8.1f} s CPU "
                  f"{row['core']['rss_mib']:7.0f} MiB peak", flush=True)
            print(f"  dagster {row['dagster']['wall']:8.1f} s wall {row['dagster']['cpu']:8.1f} s CPU "
                  f"{row['dagster']['rss_mib']:7.0f} MiB peak, DuckDB file {row['dagster']['db_mib']:.0f} MiB",
                  flush=True)
            for name, patch in (("world cache cold", row["patch_cold"]), ("world cache warm", row["patch"])):
                print(f"  one-event patch through Dagster, {name}: {patch['wall']:.1f} s wall (process), "
                      f"{patch['rss_mib']:.0f} MiB peak; {patch['how']}", flush=True)
            row["costs"] = event_costs(folder / "core" / world.id / "costs.csv")
        pages = [p for p in _stored(world)]
        queries = [q.text for q in world.questions_at(0)]
        row["retrieval"] = retrieval(pages, queries)
        for name, value in row["retrieval"].items():
            print(f"  {name:<20} " + (f"build {value[0]:7.2f} s, query median {value[1]:8.2f} ms"
                                       if isinstance(value, tuple) else value), flush=True)
        row["store"] = store_queries(world, pages)
        print("  store   " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in row["store"].items()), flush=True)
        rows.append(row)

    if not args.skip_study:
        print("\n| Pages | Core wall s | Core CPU s | Core peak MiB "
              "| Dagster wall s | Dagster CPU s | Dagster peak MiB "
              "| Dagster CPU / core CPU | Core CPU / previous | Dagster CPU / previous "
              "| One-event patch process s, world cache cold / warm |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        previous = None
        for r in rows:
            c, d = r["core"], r["dagster"]
            growth = (f"{c['cpu'] / previous['core']['cpu']:.1f}x | {d['cpu'] / previous['dagster']['cpu']:.1f}x"
                      if previous else "- | -")
            print(f"| {r['pages']:,} | {c['wall']:.1f} | {c['cpu']:.1f} | {c['rss_mib']:.0f} | {d['wall']:.1f} | "
                  f"{d['cpu']:.1f} | {d['rss_mib']:.0f} | {d['cpu'] / c['cpu']:.2f} | {growth} | "
                  f"{r['patch_cold']['wall']:.1f} / {r['patch']['wall']:.1f} |")
            previous = r
        print("\nPer event (from costs.csv): pages read / estimated input tokens / graph writes")
        approaches = sorted({a for r in rows for (_, a) in r["costs"]})
        events = sorted({e for r in rows for (e, _) in r["costs"]})
        print("| Event | Approach | " + " | ".join(f"{r['pages']:,} pages" for r in rows) + " |")
        print("|---|---|" + "---|" * len(rows))
        for e in events:
            for a in approaches:
                cells = []
                for r in rows:
                    c = r["costs"].get((e, a))
                    cells.append(f"{c['docs']} / {c['input_tokens']} / {c['graph_writes']}" if c else "-")
                if any(cell != "-" for cell in cells):
                    print(f"| {e} | {a} | " + " | ".join(cells) + " |")
        points = []
        for r in rows:
            for a in approaches:
                per_event = [c for (_, a2), c in r["costs"].items() if a2 == a]
                if per_event:
                    points.append({"pages": r["pages"], "approach": a,
                                   "docs": statistics.mean(float(c["docs"]) for c in per_event),
                                   "input_tokens": statistics.mean(float(c["input_tokens"] or 0) for c in per_event)})
        plot = args.out / "cost_curves.png"
        plot.write_bytes(cost_curve_plot(points))
        print(f"\nCost curves (pages read and input tokens per event against corpus size): {plot}")
    print("\n| Pages | Retriever | Index build s | Query median ms |")
    print("|---|---|---|---|")
    for r in rows:
        for name, value in r["retrieval"].items():
            cells = f"{value[0]:.2f} | {value[1]:.2f}" if isinstance(value, tuple) else f"{value} | -"
            print(f"| {r['pages']:,} | {name} | {cells} |")
    print("\n| Pages | Facts | Graph build s (regex) | facts(entity, predicate) median ms | pages changed since "
          "extraction ms |")
    print("|---|---|---|---|---|")
    for r in rows:
        s = r["store"]
        print(f"| {r['pages']:,} | {s['facts']:,} | {s['graph build s']:.2f} | "
              f"{s['facts (entity, predicate) ms']:.3f} | {s['pages changed ms']:.2f} |")


def _stored(world):  # type: ignore[no-untyped-def]
    store = Store()
    for p in world.pages_at(world.scenario_names[0], 0):
        store.upsert_page(p.id, p.title, p.body, world.start, p.audience)
    return store.sorted_pages()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()
