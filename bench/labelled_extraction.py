"""Extraction measured against hand-labelled statements of a real handbook: precision and recall of the
model extractor (relation-v1, grounded) on every labelled unit, and how many labelled facts were never
asked about (routing) as opposed to asked and missed (the model).

    PYTHONPATH=. .venv/bin/python bench/labelled_extraction.py [--labels data/handbooks/18f/labels.yaml]
        [--url URL --model ID] [--sample N [--offset K]] [--show] [--by-relation] [--losses]
        [--record FILE | --replay FILE]

The labels file lists units (page, checkpoint, the unit's text) with every triple a careful person reads
from each (none for a unit that states no relation); the world file beside it says which relations there
are. A triple counts as found when the relation is the same, the subject names the same thing (the asked
subject's content words are all in the extracted one, or the reverse: values.names_match) and the object
is the same value (values.normalise). Starts the shipped 0.5B model unless --url is given; replies are
cached in bench/out/labelled_cache.duckdb. `--record FILE` writes the replies the measured units needed as a
replay file; `--replay FILE` measures from such a file with no model server (the committed real replies in
data/handbooks/18f/replies/ re-score a change to grounding in seconds: grounding never changes a call).
`--losses` sorts every labelled fact by what became of it, judged by the model's reply for its unit and
relation: recalled, the value under another subject, another value, no fact, the relation not asked.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from contextlib import nullcontext
from pathlib import Path

import yaml

from driftlab_dagster.core.call_cache import CachedClient
from driftlab_dagster.core.clients import OpenAICompatibleClient
from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.grounding import relations_to_ask
from driftlab_dagster.core.model_extractor import ModelExtractor
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.replay import ReplayClient, write_replay_file
from driftlab_dagster.core.replies import parse_relation
from driftlab_dagster.core.stored_calls import load_call_cache, save_call_cache
from driftlab_dagster.core.units import Unit
from driftlab_dagster.core.values import names_match, normalise, states
from driftlab_dagster.core.warehouse import ensure_schema
from driftlab_dagster.core.world.corpus import CorpusWorld
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DATA_DIR


def labelled_units(world: CorpusWorld, labels: list[dict]) -> tuple[list[tuple[Unit, list[Triple]]], list[str]]:
    """(unit, its labelled triples) for each label, and the labels whose unit the reader no longer makes."""
    by_day = {c.key: s for c, s in zip(world.checkpoints, world.snapshots)}
    found, lost = [], []
    for label in labels:
        page = by_day[str(label["checkpoint"])].pages.get(label["page"])
        units = {u.text: u for u in world.text_units(page.body, page.title)} if page else {}
        unit = units.get(label["unit"])
        if unit is None:
            lost.append(f"{label['page']} {label['checkpoint']}: {label['unit'][:70]!r}")
            continue
        found.append((unit, [Triple(t["subject"], t["relation"], str(t["object"])) for t in label["triples"]]))
    return found, lost


def same_value(a: Triple, b: Triple) -> bool:
    """The same relation and value, whatever the subject."""
    return a.predicate == b.predicate and normalise(a.object) == normalise(b.object)


def same(world: CorpusWorld, a: Triple, b: Triple) -> bool:
    if not same_value(a, b):
        return False
    x, y = world.name_key(a.subject), world.name_key(b.subject)
    return x == y or names_match(x, y) or names_match(y, x)


LOSSES = ["recalled", "the reply holds the value, under another subject (or grounding refused it)",
          "the reply gives another value; the unit states only this fact of the relation",
          "the reply gives another value; the unit states several facts of the relation",
          "the reply says the unit states no such fact", "the relation is not asked (no cue)",
          "the call failed (no reply)"]


def loss(fact: Triple, truth: list[Triple], recalled: bool, asked: set[str], reply: str | None) -> str:
    """What became of one labelled fact, judged by the reply the model gave for its unit and relation."""
    if recalled:
        return LOSSES[0]
    if fact.predicate not in asked:
        return LOSSES[5]
    if reply is None:
        return LOSSES[6]
    said, subject, obj, _ = parse_relation(reply)
    if not said:
        return LOSSES[4]
    if states(obj, fact.object) or states(subject, fact.object):
        return LOSSES[1]
    return LOSSES[3] if sum(t.predicate == fact.predicate for t in truth) > 1 else LOSSES[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=Path, default=DATA_DIR / "handbooks" / "18f" / "labels.yaml")
    parser.add_argument("--world", type=Path, help="the world file (default: handbook.yaml beside the labels)")
    parser.add_argument("--url", help="an OpenAI-compatible server; default: start the shipped 0.5B model")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b",
                        help="the model id (with no --url: which shipped model to start, 0.5b or 1.5b)")
    parser.add_argument("--show", action="store_true", help="print every miss and every false fact")
    parser.add_argument("--losses", action="store_true",
                        help="sort every labelled fact by what became of it, from the reply for its unit and relation")
    parser.add_argument("--by-relation", action="store_true",
                        help="print precision and recall per relation, and how many facts had the right value "
                             "but another subject")
    parser.add_argument("--sample", type=int, default=1, help="measure every Nth labelled unit only (default: all)")
    parser.add_argument("--offset", type=int, default=0,
                        help="with --sample N, start at the Kth labelled unit (0: the units rules were written on; "
                             "1 with --sample 2: the other half, held out)")
    parser.add_argument("--record", type=Path, help="write the replies the measured units needed to this replay file")
    parser.add_argument("--replay", type=Path, help="measure from recorded replies (a replay file), no model server")
    args = parser.parse_args()
    world = load_world(args.world or args.labels.with_name("handbook.yaml"))
    if not isinstance(world, CorpusWorld):
        raise SystemExit("a corpus world is needed")
    labels = yaml.safe_load(args.labels.read_text(encoding="utf-8"))
    units, lost = labelled_units(world, labels)
    units = units[args.offset::args.sample]
    for line in lost:
        print(f"  label without its unit: {line}")
    Path("bench/out").mkdir(parents=True, exist_ok=True)
    conn = connect("bench/out/labelled_cache.duckdb")
    ensure_schema(conn)
    from driftlab_dagster.model_server import LlamaServer

    with (nullcontext() if args.url or args.replay else LlamaServer(alias=args.model)) as server:
        model = args.model
        if args.replay:  # no cache in front: every reply comes from the file
            client = CachedClient(ReplayClient.from_file(args.replay, model))
        else:
            url = args.url or server.url  # type: ignore[union-attr]
            client = CachedClient(OpenAICompatibleClient(url, model, timeout=300), load_call_cache(conn))
        extractor = ModelExtractor(world.ontology, client, world_text=world.text, units=world.text_units)

        def keep() -> None:
            """Save what was paid for, should the run be stopped (replayed replies cost nothing: not saved)."""
            if not args.replay:
                save_call_cache(conn, client.new_entries)
            client.new_entries.clear()

        started = time.perf_counter()
        # All calls first, grouped by relation as a study step asks them: the server then re-reads only the
        # unit, not the relation's worked examples (llama.cpp's prefix match), several times faster.
        ahead = [u for u, _ in units]
        for start in range(0, len(ahead), 50):
            extractor.read_ahead_units(ahead[start:start + 50])
            keep()
            print(f"  asked {min(start + 50, len(ahead))}/{len(ahead)} units, {time.perf_counter() - started:.0f} s",
                  flush=True)
        counts: Counter[str] = Counter()
        missed_by: Counter[str] = Counter()
        losses: Counter[str] = Counter()
        by_relation: Counter[tuple[str, str]] = Counter()  # (relation, what was counted)
        for n, (unit, truth) in enumerate(units, 1):
            got = extractor.extract_unit(unit)
            if n % 25 == 0:
                keep()
            asked = {p.name for p in relations_to_ask(unit.text, world.ontology.predicates, unit.own_section)}
            # (extracted, labelled) pairs that agree: in full, and in relation and value whatever the subject
            right = {(i, j) for i, g in enumerate(got) for j, t in enumerate(truth) if same(world, g, t)}
            right_value = {(i, j) for i, g in enumerate(got) for j, t in enumerate(truth) if same_value(g, t)}
            counts["extracted"] += len(got)
            counts["labelled"] += len(truth)
            for i, g in enumerate(got):
                found = any(a == i for a, _ in right)
                counts["right"] += found
                by_relation[(g.predicate, "extracted")] += 1
                by_relation[(g.predicate, "right")] += found
                by_relation[(g.predicate, "right value")] += any(a == i for a, _ in right_value)
                if args.show and not found:
                    print(f"  false  {g} from {unit.render()!r}")
            for j, t in enumerate(truth):
                recalled = any(b == j for _, b in right)
                if args.losses:
                    entry = client.entries.get(extractor.call_key(world.ontology[t.predicate], unit))
                    losses[loss(t, truth, recalled, asked, entry.content if entry else None)] += 1
                by_relation[(t.predicate, "labelled")] += 1
                by_relation[(t.predicate, "recalled")] += recalled
                by_relation[(t.predicate, "value recalled")] += any(b == j for _, b in right_value)
                if recalled:
                    counts["recalled"] += 1
                else:
                    missed_by["not asked" if t.predicate not in asked else "asked, missed"] += 1
                    if args.show:
                        print(f"  missed {t} in {unit.render()!r}")
        seconds = time.perf_counter() - started
        keep()
    if args.record:
        needed = sorted(extractor.call_keys([u for u, _ in units]))
        missing = [k for k in needed if k not in client.entries]
        write_replay_file((client.entries[k] for k in needed if k in client.entries), args.record)
        print(f"recorded {len(needed) - len(missing)} replies in {args.record}"
              + (f" ({len(missing)} calls failed and have none)" if missing else ""))
    if args.by_relation:
        print(relation_table(world, by_relation))
    if args.losses:
        print("| what became of a labelled fact | facts |\n|---|---|")
        print("\n".join(f"| {name} | {losses[name]} |" for name in LOSSES))
    precision = counts["right"] / max(counts["extracted"], 1)
    recall = counts["recalled"] / max(counts["labelled"], 1)
    print(f"{world.id}: {len(units)} labelled units ({sum(1 for _, t in units if t)} stating a relation), "
          f"{counts['labelled']} labelled facts; model {model}")
    print(f"precision {precision:.1%} ({counts['right']}/{counts['extracted']}), recall {recall:.1%} "
          f"({counts['recalled']}/{counts['labelled']}); missed: {dict(missed_by)}; "
          f"{client.spend.calls - client.spend.hits} new calls, {seconds:.0f} s")


def relation_table(world: CorpusWorld, counted: Counter[tuple[str, str]]) -> str:
    """Per relation: extracted facts, right ones, ones with the right value under any subject; labelled facts,
    recalled ones, ones whose value was extracted under any subject (what subject choice costs)."""
    columns = ["extracted", "right", "right value", "labelled", "recalled", "value recalled"]
    lines = ["| relation | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name in [p.name for p in world.ontology.predicates] + ["all"]:
        row = [sum(v for (r, c), v in counted.items() if c == col and name in (r, "all")) for col in columns]
        lines.append(f"| {name} | " + " | ".join(str(n) for n in row) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
