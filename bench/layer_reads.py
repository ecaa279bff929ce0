"""The answers step's reading, side by side: every partition of a study's DuckDB file read one after another as
`LayerReader` reads them, each layer's graph indexes carried from the layer before (as shipped) against built
from every fact (as before 035a6f3), then every layer asked its questions (`evaluate`), rounds interleaved.

    PYTHONPATH=. .venv/bin/python bench/layer_reads.py DUCKDB_FILE WORLD_FILE [--rounds 2]

DUCKDB_FILE is a finished deterministic run's file (`bench/commits.py` leaves one under its --out, `here/`),
WORLD_FILE the world it ran (the same --out's `x1000/world.yaml`). Prints each round's CPU seconds of reading
and of asking, and carried / built from the minimum of each. The layers are the same either way
(driftlab_dagster_tests/core/test_layer_changes.py).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftlab_dagster.core.designs import ALL_DESIGNS  # noqa: E402
from driftlab_dagster.core.evaluation import evaluate  # noqa: E402
from driftlab_dagster.core.extraction import RegexExtractor  # noqa: E402
from driftlab_dagster.core.governed import GovernedFact, GovernedStore  # noqa: E402
from driftlab_dagster.core.layer import KnowledgeLayer  # noqa: E402
from driftlab_dagster.core.layer_changes import LayerChanges, LayerReader  # noqa: E402
from driftlab_dagster.core.readers import DeterministicReader  # noqa: E402
from driftlab_dagster.core.store import ExtractionEntry, Fact, Store, StoredPage  # noqa: E402
from driftlab_dagster.core.warehouse import Slice  # noqa: E402
from driftlab_dagster.core.world.loader import load_world  # noqa: E402
from driftlab_dagster.gc_pace import pace_for_batch  # noqa: E402

CARRIED = LayerChanges.layer


def built_from_every_fact(self: LayerChanges, world, before: KnowledgeLayer) -> KnowledgeLayer:
    """LayerChanges.layer as it was: the same objects, the indexes built again from all of them."""
    assert before.governed is not None
    store = Store.from_objects(self.pages.applied(before.store.pages, StoredPage), self.entities, self.aliases,
                               self.facts.applied(before.store.facts, Fact),
                               self.extraction_log.applied(before.store.extractions, ExtractionEntry))
    governed = GovernedStore.from_facts(world, self.governed_facts.applied(before.governed.facts, GovernedFact),
                                        self.governed_names, store.versions_read())
    return KnowledgeLayer(store, governed)


def one_pass(conn, world, slices, carried: bool) -> tuple[float, float]:
    LayerChanges.layer = CARRIED if carried else built_from_every_fact  # type: ignore[method-assign]
    reader, extractor = DeterministicReader(world.ontology), RegexExtractor(world.ontology)
    layers, read, asked = LayerReader(conn, world), 0.0, 0.0
    for where in slices:
        start = time.process_time()
        layer = layers.read(where)
        read += time.process_time() - start
        start = time.process_time()
        evaluate(layer, world, where.scenario, world.checkpoint(where.day).step, reader, ALL_DESIGNS,
                 extractor=extractor)
        asked += time.process_time() - start
    return read, asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database", type=Path)
    parser.add_argument("world", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    pace_for_batch()  # as the study's processes run
    world = load_world(str(args.world))
    conn = duckdb.connect(str(args.database), read_only=True)
    slices = [Slice(world.id, world.version, scenario, str(day)) for day, scenario in conn.execute(
        "SELECT DISTINCT day, scenario FROM facts WHERE world = ? AND world_version = ? ORDER BY ALL",
        [world.id, world.version]).fetchall()]
    if not slices:
        raise SystemExit(f"{args.database} holds no partition of {world.id} at version {world.version}")
    found: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for round_ in range(args.rounds):
        for carried in (False, True):
            gc.collect()
            found[carried].append(one_pass(conn, world, slices, carried))
            read, asked = found[carried][-1]
            print(f"round {round_ + 1}, indexes {'carried' if carried else 'built from every fact'}: "
                  f"read {read:.1f} s, evaluate {asked:.1f} s", flush=True)
    best = {c: (min(r for r, _ in runs), min(a for _, a in runs)) for c, runs in found.items()}
    print(f"\n{len(slices)} partitions, minimum of {args.rounds} rounds (CPU s)")
    print("| measure | built from every fact | carried | carried / built |\n|---|---|---|---|")
    for i, name in enumerate(("read", "evaluate")):
        print(f"| {name} | {best[False][i]:.1f} | {best[True][i]:.1f} | **{best[True][i] / best[False][i]:.2f}** |")


if __name__ == "__main__":
    main()
