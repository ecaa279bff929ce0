"""Permissions hold before anything reaches a reader: over every restricted page and a caller without the
permission, across all designs and both readers, no restricted page id or value is in the evidence handed
to a reader or in an answer; a caller with the permission still gets the right answer."""

from __future__ import annotations

import json
import re

import pytest

from driftlab_dagster.core.call_cache import CachedClient
from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.evaluation import evaluate
from driftlab_dagster.core.extraction import Extraction
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.model_reader import ModelReader
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.readers import DeterministicReader
from driftlab_dagster.core.replay import ReplayClient
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import replay_steps
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster_tests.core.test_corpus_world import make_wiki

RESTRICTED_PAGE = "wiki/finance/travel.md"
RESTRICTED_VALUE = "Kestrel"  # said by the finance page only


class OwnersExtractor:
    """Reads "The X team owns Y" the way a perfect model would: the test is about who sees the facts."""

    kind, id = "test", "test-owners"

    def __init__(self, ontology):  # type: ignore[no-untyped-def]
        self.ontology = ontology

    def extract(self, page) -> Extraction:  # type: ignore[no-untyped-def]
        found = [Triple(m.group(2).capitalize(), "owned_by", m.group(1))
                 for m in re.finditer(r"The (\w+) team owns (\w+)", page.body)]
        return Extraction(tuple(found), 0, 0, estimated=True)


class Spy:
    """A reader that records every piece of evidence it is handed, then reads as the real one does."""

    def __init__(self, reader):  # type: ignore[no-untyped-def]
        self.reader, self.seen = reader, []
        self.takes_signals = getattr(reader, "takes_signals", False)

    def read(self, entity, predicate, evidence, versioned, signals=None, asked=""):  # type: ignore[no-untyped-def]
        self.seen += [(e.source, e.text) for e in evidence] + [("signals", s) for s in signals or []]
        return self.reader.read(entity, predicate, evidence, versioned, signals, asked)


def _model_reader(ontology) -> ModelReader:  # type: ignore[no-untyped-def]
    def reply(system: str, user: str) -> str:  # answers from the evidence it was given, like a faithful model
        # Asked the person's own question ("Which team owns travel?") or the relation's ("... of travel?").
        asked = re.search(r"of ([\w ]+)\? Answer|team owns ([\w ]+)\?", user)
        if asked is None:  # not a question about owners (the refund window): it does not know
            return json.dumps({"answer": "unknown", "possibly_stale": False})
        entity = asked.group(1) or asked.group(2)
        found = re.search(rf"(?i:{entity}) — owned by — (\w+)|The (\w+) team owns {entity.lower()}", user)
        return json.dumps({"answer": (found.group(1) or found.group(2)) if found else "unknown",
                           "possibly_stale": False})

    return ModelReader(ontology, CachedClient(ReplayClient(reply)))


@pytest.mark.parametrize("reader_kind", ["deterministic", "model"])
def test_a_caller_without_the_permission_never_sees_a_restricted_page_or_value(tmp_path, reader_kind):
    world = load_world(make_wiki(tmp_path) / "world.yaml")
    extractor = OwnersExtractor(world.ontology)
    for scenario in world.scenario_names:
        steps = replay_steps(world, scenario, KnowledgeLayer(Store(), GovernedStore(world)),
                             (world.pages_at(scenario, s) for s in range(len(world.checkpoints))),
                             extractor, [world.renames_at(scenario, s) for s in range(len(world.checkpoints))])
        for step, layer, _ in steps:
            assert any(f.audience == "finance" for f in layer.store.facts.values())  # the graph does hold it
            reader = Spy(DeterministicReader(world.ontology) if reader_kind == "deterministic"
                         else _model_reader(world.ontology))
            rows = evaluate(layer, world, scenario, step, reader, ALL_DESIGNS, extractor=extractor)
            by = {(r["design"], r["question"]): r for r in rows}
            for design in ALL_DESIGNS:
                public = by[(design.value, "Q4")]  # asked as the public
                assert RESTRICTED_VALUE not in public["answer"] and public["outcome"] == "correct"  # abstained
                if design.uses_graph:  # the finance caller still gets the right answer from the graph
                    assert by[(design.value, "Q3")]["answer"] == RESTRICTED_VALUE, (scenario, step, design)
            # Every piece of evidence of the public questions: none from the finance page, none saying Kestrel.
            public_seen = _evidence_for(world, layer.store, layer.governed,
                                        scenario, step, extractor, reader_kind, "Q4")
            assert public_seen and not [e for e in public_seen if RESTRICTED_PAGE in e[0] or RESTRICTED_VALUE in e[1]]


def _evidence_for(world, store, governed, scenario, step, extractor, reader_kind, question):  # type: ignore[no-untyped-def]
    """The evidence every design handed the reader for one question, asked alone."""
    from driftlab_dagster.core.designs import Agent
    from driftlab_dagster.core.governed_resolver import GovernedResolver
    from driftlab_dagster.core.retrieval import Bm25Retriever

    q = {x.id: x for x in world.questions_at(step)}[question]
    seen = []
    for design in ALL_DESIGNS:
        reader = Spy(DeterministicReader(world.ontology) if reader_kind == "deterministic"
                     else _model_reader(world.ontology))
        resolver = GovernedResolver(governed, store.sorted_pages(), lambda p: extractor.extract(p).triples)
        agent = Agent(store, Bm25Retriever(store.sorted_pages()), reader, design, world.ontology,
                      resolver if design.value == "Governed" else None,
                      read_page=lambda p: extractor.extract(p).triples)
        agent.ask(q.text, q.entity, q.hops, q.caller)
        seen += reader.seen + [("retrieved", p.id) for p in agent.retriever.top(q.text, 3, q.caller)]
    return seen
