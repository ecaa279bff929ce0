"""Extraction quality, measured: precision and recall of the model's triples against the templated ground
truth (the regex extraction of the same text), over every distinct page version of each world (every
scenario, every checkpoint), for each extraction prompt version the registry holds (core/prompts.py).

    PYTHONPATH=. .venv/bin/python bench/extraction_quality.py [--worlds A.yaml B.yaml] [--prompts ...]

The retired versions (page-level zero-shot-v1 and few-shot-v1, sentence-v1, grounding switched off) and
their figures are in BENCHMARKS.md; the tag `legacy-prompts` still runs them.

Starts the shipped 0.5B model (llama-cpp-python's server) unless --url is given. Replies are cached in
bench/out/extraction_cache.duckdb, so a rerun only pays for what it has not asked before.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from driftlab_dagster.core.call_cache import CachedClient
from driftlab_dagster.core.clients import OpenAICompatibleClient
from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.model_extractor import ModelExtractor
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.prompts import EXTRACTION_PROMPTS
from driftlab_dagster.core.scoring import score_triples
from driftlab_dagster.core.store import StoredPage
from driftlab_dagster.core.stored_calls import load_call_cache, save_call_cache
from driftlab_dagster.core.warehouse import ensure_schema
from driftlab_dagster.core.world import World
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DATA_DIR


def page_versions(world: World) -> list[StoredPage]:
    """Every distinct text any page has in any scenario on any checkpoint."""
    seen: dict[tuple[str, str], StoredPage] = {}
    for scenario in world.scenario_names:
        for c in world.checkpoints:
            for p in world.pages_at(scenario, c.step):
                seen.setdefault((p.id, p.body), StoredPage(p.id, p.title, p.body, 1, world.start))
    return list(seen.values())


@dataclass
class Row:
    world: str
    lever: str
    precision: float
    recall: float
    extracted: int
    expected: int
    on_noise: int
    issues: int
    calls: int
    seconds: float
    variants: str


def measure(world: World, prompt: str, client: CachedClient) -> Row:
    extractor = ModelExtractor(world.ontology, client, prompt, world_text=world.canonical_json)
    pages = page_versions(world)
    truth = {(p.id, p.body): list(world.ontology.parse(p.body)) for p in pages}
    true_names = {t.subject for ts in truth.values() for t in ts}
    got: list[Triple] = []
    on_noise = issues = 0
    variants: dict[str, set[str]] = defaultdict(set)
    calls_before, started = client.spend.calls - client.spend.hits, time.perf_counter()
    for page in pages:
        result = extractor.extract(page)
        got += result.triples
        issues += bool(result.issue)
        on_noise += len(result.triples) if not truth[(page.id, page.body)] else 0
        for t in result.triples:
            for real in true_names:
                if world.name_key(t.subject) == world.name_key(real) and t.subject != real:
                    variants[real].add(t.subject)
    score = score_triples(got, [t for ts in truth.values() for t in ts])
    shown = "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(variants.items())) or "none"
    return Row(world.id, prompt, score.precision, score.recall, score.extracted, score.expected, on_noise, issues,
               client.spend.calls - client.spend.hits - calls_before, time.perf_counter() - started, shown)


def run(url: str, model: str, worlds: list[Path], prompts: list[str]) -> list[Row]:
    Path("bench/out").mkdir(parents=True, exist_ok=True)
    conn = connect("bench/out/extraction_cache.duckdb")
    ensure_schema(conn)
    rows = []
    for path in worlds:
        world = load_world(path)
        print(f"{world.id}: {len(page_versions(world))} page versions, "
              f"{sum(len(world.ontology.parse(p.body)) for p in page_versions(world))} ground-truth triples",
              flush=True)
        for prompt in prompts:
            client = CachedClient(OpenAICompatibleClient(url, model, timeout=300), load_call_cache(conn))
            rows.append(measure(world, prompt, client))
            save_call_cache(conn, client.new_entries)
            r = rows[-1]
            print(f"  {prompt:<18} precision {r.precision:6.1%}  recall {r.recall:6.1%}  ({r.extracted} extracted, "
                  f"{r.on_noise} on noise pages, {r.issues} pages with issues, {r.calls} new calls, {r.seconds:.0f}s)",
                  flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", help="an OpenAI-compatible server; default: start the shipped 0.5B model")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--worlds", nargs="+", type=Path,
                        default=[DATA_DIR / "worlds" / "tessaly_freight.yaml",
                                 DATA_DIR / "worlds" / "quillfeather_health.yaml"])
    parser.add_argument("--prompts", nargs="+", default=list(EXTRACTION_PROMPTS), choices=list(EXTRACTION_PROMPTS))
    args = parser.parse_args()
    if args.url:
        rows = run(args.url, args.model, args.worlds, args.prompts)
    else:
        from driftlab_dagster.model_server import MODEL_ALIAS, LlamaServer

        with LlamaServer() as server:
            rows = run(server.url, MODEL_ALIAS, args.worlds, args.prompts)
    print()
    print("| world | prompt | precision | recall | triples | on noise pages | pages with issues | name variants |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.world} | {r.lever} | {r.precision:.1%} | {r.recall:.1%} | {r.extracted}/{r.expected} | "
              f"{r.on_noise} | {r.issues} | {r.variants} |")


if __name__ == "__main__":
    main()
