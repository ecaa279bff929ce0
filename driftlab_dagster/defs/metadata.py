"""What every metadata key the assets show means, asset by asset, and the descriptions built from it.

Dagster 1.13 has no description per metadata key, so each asset's description (its docstring, shown at the
top of its page in the UI) ends with the keys its materialisations carry and what each one means. The same
key can mean different things on two assets (`dagster/row_count` counts rows of different tables), hence one
glossary per asset. A test walks the definitions and checks that every key a run emits is described here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import dagster as dg

from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.reports import sort_costs
from driftlab_dagster.core.study import REPAIR_EVENT

# What the model calls of a step cost (only with a model extractor or reader, see resources.spend_metadata).
SPEND = {
    "model_calls": "model calls made for this partition, answered by the server or the call cache",
    "cache_hit_rate": "share of those calls answered from the call cache in DuckDB (0 to 1)",
    "tokens_live": "input + output tokens a live system would pay for these calls",
    "tokens_spent": "input + output tokens this run paid (cache hits cost nothing)",
    "model_calls_failed": "calls whose reply was unusable or failed; never cached, asked again next time",
}

GLOSSARY: dict[str, dict[str, str]] = {
    "world": {
        "dagster/row_count": "rows written to `worlds`: always 1, this version of the world file",
        "company": "the company the world file describes",
        "world_id": "the world's id: the prefix of its asset keys and the `world` column of every row",
        "version": "the content hash of the world file; every row computed from it carries it as `world_version`",
        "source": "the world file this version was read from",
        "pages": "pages in the world",
        "questions": "questions asked of every design at every checkpoint",
        "scenarios": "the drift scenarios, the first partition dimension",
        "predicates": "the relations the ontology knows (what a fact can say)",
        "rows_of_removed_partitions_dropped": "rows of (scenario, day) slices the file no longer has, deleted now",
        "events": "what changes on each checkpoint day after the first",
    },
    "pages": {
        "dagster/row_count": "pages the scenario's wiki shows on that day (rows of `pages`)",
        "pages_changed": "pages whose text changed that day (0 on the first day, when every page is new)",
        "changed": "the ids of those pages",
        "world_version": "the world file version these pages were rendered from",
        "preview": "the pages that changed that day (on the first day, the first three pages)",
    },
    "fact_graph": {
        "dagster/row_count": "facts in the graph after that day's maintenance (rows of `facts`)",
        "entities": "entities in the graph (rows of `entities`)",
        "aliases": "names the entities also go by (rows of `aliases`)",
        "maintenance": "how the graph absorbed that day's event under the scenario's policy ('none': nobody did)",
        "pages_read": "pages the extractor read that day",
        "graph_writes": "facts and names the graph wrote that day",
        "extractor": "who wrote the facts (kind, model, prompt version and hash): the graph's code version",
        "world_version": "the world file version the graph was computed from",
        "pages_with_extraction_issues": "pages whose extraction recorded an issue (see `extraction_log.issue`)",
        "replayed_from": "where this graph's computation started: the initial extraction on the first day and "
                         "each event's maintenance since, or the stored graph of the day before",
        **SPEND,
    },
    "extraction_log": {
        "dagster/row_count": "pages the graph has read (rows of `extraction_log`)",
        "pages_ahead_of_graph": "pages whose current version is newer than the version the graph last read",
        "ahead": "those pages, each with both versions",
    },
    "governed_graph": {
        "dagster/row_count": "governed facts, retracted ones included (rows of `governed_facts`)",
        "retracted": "facts a later reading retracted (kept, with when: nothing is deleted)",
        "active": "facts not retracted",
    },
    "answers": {
        "dagster/row_count": "answers given that day: every design asked every question (rows of `answers`)",
        "accuracy": "share of those answers that were right (0 to 1)",
        "hedged": "answers that hedged (said the fact might be out of date)",
        "by_design": "accuracy, wrong answers, hedges and abstentions per design",
        "misses": "every answer that was not right, with the expected value and why",
        **{f"accuracy_{d.value}": f"share of the {d.value} design's answers that were right (0 to 1)"
           for d in ALL_DESIGNS},
        **SPEND,
    },
    "maintenance_costs": {
        "dagster/row_count": "ways of absorbing that day's event that were costed (rows of `maintenance_costs`)",
        "pages_read_by_patch": "pages a patch of the changed pages read",
        "pages_read_by_full": "pages a full re-extraction read",
        "costs": "each way's pages read, tokens, graph writes and the graph-only accuracy of the graph it left",
        **{f"run_{k}": f"{v}, for the whole run (the comparison replays its event days together)"
           for k, v in SPEND.items()},
    },
    "graph_repair": {
        "dagster/row_count": "ways of repairing that were costed (rows of `repair_costs`)",
        "repaired_from": "the partition the repair starts from: the graph nobody maintained, on the last day",
        "approach_kept": "which repaired graph was kept in `repaired_facts` (the job's `approach` setting)",
        "pages_read_by_patch": "pages a patch of the pages changed since the last extraction read",
        "pages_read_by_full": "pages a full rebuild read",
        "facts_after_repair": "facts in the repaired graph that was kept",
        "costs": "each way's pages read, tokens, graph writes and the graph-only accuracy of the graph it left",
        **SPEND,
    },
    "accuracy_report": {
        "dagster/row_count": "rows of the accuracy table: one per (design, scenario)",
        "answers": "answers the table is computed from (every partition's, this world version)",
        "world_version": "the world file version the answers were computed from",
        "partitions_missing": "(scenario, day) partitions with no answers yet: the table leaves them out",
        "accuracy": "the post's accuracy table: all answers and the drifted ones, per design and scenario",
        "plot": "the same, as a chart",
        "results_csv": "every answer, as the post's results.csv",
    },
    "cost_report": {
        "dagster/row_count": "rows of the cost table: one per (approach, event), the repair included",
        "world_version": "the world file version the costs were computed from",
        "costs": "the post's cost table, with the milliseconds of the latest run of each pass",
        "plot": "pages read and input tokens per event, one line per approach",
        "costs_csv": "the cost table as costs.csv (the same for the same inputs)",
        "timings_csv": "the milliseconds as timings.csv (measured, so they differ between runs)",
    },
}

# The keys of a drift check's evaluation (graph/assets.py and the repair's check).
CHECK_METADATA = ("Each evaluation shows `count` (how many rows the check found) and `rows` (the first 50 of "
                  "them, or 'none').")


def glossary_markdown(keys: dict[str, str]) -> str:
    return "**Metadata**\n\n" + "\n".join(f"- `{key}`: {meaning}" for key, meaning in keys.items())


def with_glossaries(assets: Sequence[dg.AssetsDefinition], uses_model: bool) -> list[dg.AssetsDefinition]:
    """The assets, each one's description ending with what its metadata keys mean. Keys about model calls
    are listed only when the settings use a model (otherwise no run shows them)."""
    model_keys = set(SPEND) | {f"run_{k}" for k in SPEND}

    def describe(spec: dg.AssetSpec) -> dg.AssetSpec:
        keys = {k: v for k, v in GLOSSARY[spec.key.path[-1]].items() if uses_model or k not in model_keys}
        return spec.replace_attributes(description=f"{spec.description or ''}\n\n{glossary_markdown(keys)}".strip())

    return list(dg.map_asset_specs(describe, assets))


def costs_markdown(costs: Iterable[dict], timings: Iterable[dict] | None = None) -> str:
    """A cost table as the UI shows it. The event column only when the rows span several events (the repair's
    rows carry the post's event number 99: shown as "repair"); milliseconds only when `timings` are given,
    with what they measure."""
    costs = sort_costs(costs)
    ms = {(t["approach"], int(t["event"])): str(t["ms"]) for t in timings or []}
    with_event = len({c["event"] for c in costs}) > 1
    header = ["Approach"] + (["Event"] if with_event else []) + ["Pages read", "Input tokens", "Output tokens",
                                                                 "Graph writes", "Graph-only accuracy"]
    header += ["ms"] if timings is not None else []
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for c in costs:
        star = "*" if c["estimated"] else ""
        cells = [c["approach"]]
        cells += ["repair" if int(c["event"]) == REPAIR_EVENT else str(c["event"])] if with_event else []
        cells += [str(c["docs"]), f"{c['input_tokens']}{star}", f"{c['output_tokens']}{star}", str(c["graph_writes"]),
                  "" if c.get("graph_only_accuracy") is None else f"{100 * c['graph_only_accuracy']:.0f}%"]
        cells += [ms.get((c["approach"], int(c["event"])), "-")] if timings is not None else []
        lines.append("| " + " | ".join(cells) + " |")
    if any(c["estimated"] for c in costs):
        lines.append("\n\\* estimated at 4 characters per token, no model was called")
    if timings is not None:
        lines.append("\nms: the wall-clock time of the pass in the latest run that computed it (table `pass_timings`). "
                     "The regex extractor parses each page text once per process, so a pass over pages already "
                     "parsed takes under a millisecond and shows 0.")
    return "\n".join(lines)
