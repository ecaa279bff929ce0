"""Extraction quality, measured: precision and recall of the model's triples against the templated ground
truth (the regex extraction of the same pages), per model and prompt version, and the name variants that
reached the store ("Pro plan" beside "Pro").

    PYTHONPATH=. .venv/bin/python bench/extraction_quality.py [--prompts zero-shot-v1 few-shot-v1]

Starts the 0.5B model from the test support package unless --url is given. Replies are cached in
bench/out/extraction_cache.duckdb, so a rerun only pays for new prompts.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from driftlab_dagster.core.extraction import RegexExtractor
from driftlab_dagster.core.llm import EXTRACTION_PROMPTS, ModelExtractor, score_triples
from driftlab_dagster.core.models import CachedClient, OpenAICompatibleClient
from driftlab_dagster.core.store import StoredPage
from driftlab_dagster.core.warehouse import connect, ensure_schema, load_call_cache, save_call_cache
from driftlab_dagster.core.world import load_world
from driftlab_dagster.project import DEFAULT_WORLD


def measure(url: str, model: str, prompts: list[str], seed_cache: str | None = None) -> None:
    world = load_world(DEFAULT_WORLD)
    pages = [StoredPage(p.id, p.title, p.body, 1, world.start) for p in world.pages_at("Fresh", 0)]
    truth = {p.id: list(RegexExtractor(world.ontology).extract(p).triples) for p in pages}
    true_names = {t.subject for ts in truth.values() for t in ts}
    Path("bench/out").mkdir(parents=True, exist_ok=True)
    conn = connect("bench/out/extraction_cache.duckdb")
    ensure_schema(conn)
    if seed_cache:
        seed = connect(seed_cache, read_only=True)
        save_call_cache(conn, [e for e in load_call_cache(seed).values() if e.kind == "chat"])
        seed.close()
    print(f"model {model}, {len(pages)} day-0 pages, {sum(map(len, truth.values()))} ground-truth triples")
    print(f"{'prompt':<14} {'precision':>9} {'recall':>7} {'facts':>6} {'noise-page facts':>17} {'bad replies':>12}  name variants")
    for prompt in prompts:
        client = CachedClient(OpenAICompatibleClient(url, model, timeout=300), load_call_cache(conn))
        extractor = ModelExtractor(world.ontology, client, prompt)
        got, noise, bad = [], 0, 0
        variants: dict[str, set[str]] = defaultdict(set)
        for page in pages:
            result = extractor.extract(page)
            got += result.triples
            bad += bool(result.issue)
            noise += len(result.triples) if not truth[page.id] else 0
            for t in result.triples:
                for real in true_names:
                    if world.name_key(t.subject) == world.name_key(real) and t.subject != real:
                        variants[real].add(t.subject)
        save_call_cache(conn, client.new_entries)
        score = score_triples(got, [t for ts in truth.values() for t in ts])
        shown = "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(variants.items())) or "none"
        print(f"{prompt:<14} {score.precision:>9.0%} {score.recall:>7.0%} {score.extracted:>6} {noise:>17} {bad:>12}  {shown}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", help="an OpenAI-compatible server; default: start the 0.5B model")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--prompts", nargs="+", default=list(EXTRACTION_PROMPTS))
    parser.add_argument("--seed-cache", help="a study DuckDB file whose model_calls to reuse (read only)")
    args = parser.parse_args()
    if args.url:
        measure(args.url, args.model, args.prompts, args.seed_cache)
        return
    from driftlab_dagster_tests.support.local_model import MODEL_ALIAS, LlamaServer

    with LlamaServer() as server:
        measure(server.url, MODEL_ALIAS, args.prompts, args.seed_cache)


if __name__ == "__main__":
    main()
