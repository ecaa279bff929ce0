"""What write-time canonicalisation buys on a model-extracted graph: the "Pro" / "Pro plan" splits that
reach the post's store versus the governed store, and the Governed design beside HybridVersioned.

    .venv/bin/python bench/governed_report.py data/model-0.5b/driftlab.duckdb [world id]
"""

from __future__ import annotations

import sys
from collections import defaultdict

from driftlab_dagster.core import reports
from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.warehouse import records
from driftlab_dagster.core.world.templated import TemplatedWorld


def main(database: str, world_id: str = "tessaly_freight") -> None:
    with connect(database, read_only=True) as conn:  # one line for a locked or foreign file; no extensions
        version, spec = conn.execute("SELECT world_version, spec_json FROM worlds WHERE world = ? "
                                     "ORDER BY world_version", [world_id]).fetchall()[-1]
        world = TemplatedWorld.from_json(spec)
        scope = "WHERE world = ? AND world_version = ?"
        params = [world_id, version]
        plain = records(conn, f"SELECT scenario, day::VARCHAR AS day, entity_id, name FROM entities {scope}", params)
        governed = records(conn, f"SELECT scenario, day::VARCHAR AS day, entity_id, name FROM governed_names {scope}",
                           params)
        answers = records(conn, f"SELECT * FROM answers {scope}", params)
        extractor = conn.execute(f"SELECT DISTINCT extractor FROM extraction_log {scope}", params).fetchall()

    def splits(rows: list[dict]) -> dict[str, set[str]]:
        """name key -> the spellings stored as separate entities (within one partition)."""
        found: dict[str, set[str]] = defaultdict(set)
        per_partition: dict[tuple, dict[str, dict[int, str]]] = defaultdict(lambda: defaultdict(dict))
        for r in rows:
            per_partition[(r["scenario"], r["day"])][world.name_key(r["name"])][r["entity_id"]] = r["name"]
        for groups in per_partition.values():
            for key, entities in groups.items():
                if len(entities) > 1:
                    found[key] |= set(entities.values())
        return found

    print(f"extractor: {', '.join(e for (e,) in extractor)}")
    for label, rows in (("post's store (exact names)", plain), ("governed store (canonical at write time)", governed)):
        found = splits(rows)
        shown = "; ".join(f"{', '.join(sorted(v))}" for _, v in sorted(found.items())) or "none"
        print(f"{label}: {len(found)} names split into several entities: {shown}")
    scenarios = world.scenario_names
    summary = reports.summarise(answers, scenarios)
    print()
    print(reports.accuracy_table([s for s in summary if s["design"] in ("HybridVersioned", "Governed")]))
    print()
    print(reports.hedge_quality(answers, scenarios, ["HybridVersioned", "Governed"]))
    wrong = [r for r in answers if r["design"] == "Governed" and r["outcome"] != "correct"]
    print(f"\nGoverned answers that were not right ({len(wrong)}):")
    for r in sorted(wrong, key=lambda r: (r["scenario"], r["step"], r["question"])):
        print(f"  {r['scenario']:<13} step {r['step']} {r['question']}: {r['outcome']} {r['answer']!r} "
              f"(expected {r['expected']!r}) hedged={r['hedged']} why={r['why']!r}")


if __name__ == "__main__":
    main(*(sys.argv[1:] or ["data/model-0.5b/driftlab.duckdb"]))
