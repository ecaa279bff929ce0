"""The study's steps as plain functions, and `run_study`, the whole deterministic run in memory.

The Dagster assets call the same functions one partition at a time; `run_study` exists so the study can
be run, tested and timed without Dagster.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from .designs import ALL_DESIGNS, Design
from .evaluation import accuracy, evaluate
from .extraction import CostSample, Extractor, RegexExtractor, full_reextract, patch_changed_pages, patch_from_record
from .governed import GovernedStore
from .layer import KnowledgeLayer
from .readers import DeterministicReader, Reader
from .store import Store, StoredPage
from .world import Page, World

REPAIR_EVENT = 99  # the event number the post gives the repair rows


def pages_at(world: World, step: int) -> dt.datetime:
    """When the pages of a step were written."""
    return world.initial_pages_at if step == 0 else world.checkpoints[step].at


def sync_pages(layer: KnowledgeLayer, pages: Iterable[Page | StoredPage], at: dt.datetime,
               renames: dict[str, str] | None = None) -> list[str]:
    """Make the layer's pages the step's pages: renames first (old id -> new id, in every graph too), then
    every page's text (dated by its own updated_at when it has one, else `at`), then pages that are gone are
    deleted. Returns the ids of pages that are new or changed."""
    for old, new in (renames or {}).items():
        layer.rename_page(old, new)
    store = layer.store
    pages = list(pages)
    changed = [p.id for p in pages
               if store.upsert_page(p.id, p.title, p.body, getattr(p, "updated_at", None) or at,
                                    getattr(p, "audience", "public"))]
    present = {p.id for p in pages}
    for gone in [pid for pid in store.pages if pid not in present]:
        store.delete_page(gone)
    return changed


def page_history(world: World, scenario: str, upto_step: int) -> list[tuple[list[StoredPage], list[str]]]:
    """For each step 0..upto_step: the stored pages (with versions) and the ids that changed that step."""
    layer = KnowledgeLayer(Store())
    history = []
    for step in range(upto_step + 1):
        changed = sync_pages(layer, world.pages_at(scenario, step), pages_at(world, step),
                             world.renames_at(scenario, step))
        history.append((layer.store.sorted_pages(), changed))
    return history


def initial_load(layer: KnowledgeLayer, extractor: Extractor, world: World) -> CostSample:
    return full_reextract(layer, extractor, world.start, 0)


def maintain(layer: KnowledgeLayer, world: World, scenario: str, step: int, extractor: Extractor) -> CostSample | None:
    """The scenario's graph policy after the event of `step` (the pages are already synced)."""
    checkpoint = world.checkpoints[step]
    policy = world.scenario_graph_policy(scenario)
    if policy == "patch_changed_pages":
        return patch_changed_pages(layer, extractor, checkpoint.at, step)
    if policy == "patch_from_record":
        return patch_from_record(layer, world, step)
    return None  # nobody re-ran the pipeline


def replay_steps(world: World, scenario: str, layer: KnowledgeLayer,
                 pages_by_step: Iterable[Iterable[Page | StoredPage]], extractor: Extractor,
                 renames_by_step: list[dict[str, str]] | None = None, first: int = 0,
                 ) -> Iterator[tuple[int, KnowledgeLayer, CostSample | None]]:
    """The scenario's knowledge layer step by step: initial load, then each event's page changes (pages
    moved, `renames_by_step`, first) and maintenance, in order. Yields (step, the layer after that step,
    that step's maintenance cost or None); the layer is the same object throughout, so snapshot it before
    asking for the next step.

    With `first` > 0, `layer` stands as it did after step `first - 1` (e.g. loaded from the warehouse), and
    `pages_by_step` and `renames_by_step` begin at step `first`."""
    for offset, pages in enumerate(pages_by_step):
        step = first + offset
        sync_pages(layer, pages, pages_at(world, step), renames_by_step[offset] if renames_by_step else {})
        cost = (initial_load(layer, extractor, world) if step == 0
                else maintain(layer, world, scenario, step, extractor))
        yield step, layer, cost


def graph_only_accuracy(layer: KnowledgeLayer, world: World, scenario: str, step: int, reader: Reader) -> float:
    return accuracy(evaluate(layer, world, scenario, step, reader, designs=[Design.GRAPH]))


@dataclass(frozen=True)
class CostRow:
    """A maintenance pass's cost, with the graph-only accuracy of the graph it left behind."""

    sample: CostSample
    graph_only_accuracy: float | None

    def as_row(self) -> dict:
        return {**self.sample.as_row(), "graph_only_accuracy": self.graph_only_accuracy}


def maintenance_comparisons(world: World, steps: Iterable[int], extractor: Extractor,
                            reader: Reader) -> dict[int, list[CostRow]]:
    """The three ways to absorb each event in `steps`, side by side on the same pages, in one pass.

    Patch and full rebuild run on pages that follow every event (a graph patched at every earlier event,
    and one rebuilt from it at the event); the system-of-record patch runs on the graph of pages that
    never change. Returns step -> [patch, full, record] rows.
    """
    wanted = sorted(set(steps))
    if not wanted:
        return {}
    if wanted[0] < 1 or wanted[-1] >= len(world.checkpoints):
        raise ValueError(f"events are steps 1..{len(world.checkpoints) - 1}, not {wanted}")
    fresh = _scenario_with(world, pages="all", graph="patch_changed_pages")
    try:  # a corpus world without a system of record has nothing to patch from
        stale_pages: str | None = _scenario_with(world, pages="none", graph="patch_from_record")
    except ValueError:
        stale_pages = None
    patched = replay_steps(world, fresh, KnowledgeLayer(Store()),
                           (world.pages_at(fresh, s) for s in range(wanted[-1] + 1)), extractor,
                           [world.renames_at(fresh, s) for s in range(wanted[-1] + 1)])
    recorded = (replay_steps(world, stale_pages, KnowledgeLayer(Store()),
                             (world.pages_at(stale_pages, s) for s in range(wanted[-1] + 1)), extractor)
                if stale_pages else None)
    rows: dict[int, list[CostRow]] = {}
    graph: KnowledgeLayer | None = None  # the patched graph as it stood after the previous step
    for step in range(wanted[-1] + 1):
        full_row = None
        if step in wanted:
            # The rebuild starts from the graph as it stood before this event, with this event's pages.
            assert graph is not None
            rebuilt = KnowledgeLayer(graph.store.copy())
            sync_pages(rebuilt, world.pages_at(fresh, step), pages_at(world, step), world.renames_at(fresh, step))
            full = full_reextract(rebuilt, extractor, world.checkpoints[step].at, step)
            full_row = CostRow(full, graph_only_accuracy(rebuilt, world, fresh, step, reader))
        _, graph, patch = next(patched)
        record_step = next(recorded) if recorded is not None else None
        if full_row is not None:
            assert patch is not None
            rows[step] = [CostRow(patch, graph_only_accuracy(graph, world, fresh, step, reader)), full_row]
            if record_step is not None and stale_pages is not None:
                _, record_graph, record = record_step
                assert record is not None
                rows[step].append(CostRow(record, graph_only_accuracy(record_graph, world, stale_pages, step, reader)))
    return rows


def maintenance_comparison(world: World, step: int, extractor: Extractor, reader: Reader) -> list[CostRow]:
    """The three ways to absorb event `step` (see `maintenance_comparisons`)."""
    return maintenance_comparisons(world, [step], extractor, reader)[step]


@dataclass(frozen=True)
class RepairOutcome:
    """A repaired graph and what repairing it cost."""

    store: Store
    row: CostRow


def repair(stale: Store, world: World, scenario: str, extractor: Extractor, reader: Reader) -> dict[str, RepairOutcome]:
    """Bring a graph that missed every event back, both ways: a full rebuild and a patch of the pages changed
    since the last extraction ("full" and "patch"). `stale` is left untouched."""
    outcomes = {}
    last = len(world.checkpoints) - 1
    for approach, run in (("full", full_reextract), ("patch", patch_changed_pages)):
        layer = KnowledgeLayer(stale.copy())
        sample = run(layer, extractor, world.repair_at, REPAIR_EVENT)
        sample = replace(sample, approach=f"repair: {sample.approach}")
        outcomes[approach] = RepairOutcome(layer.store, CostRow(sample, graph_only_accuracy(layer, world, scenario,
                                                                                            last, reader)))
    return outcomes


def _scenario_with(world: World, pages: str, graph: str) -> str:
    for name in world.scenario_names:
        if world.scenario_pages_policy(name) == pages and world.scenario_graph_policy(name) == graph:
            return name
    raise ValueError(f"the world declares no scenario with pages={pages!r} and graph={graph!r}")


def stale_graph_scenario(world: World) -> str:
    """The scenario whose pages follow the world while nobody maintains the graph: the one to repair."""
    return _scenario_with(world, pages="all", graph="none")


@dataclass
class StudyResult:
    results: list[dict]
    costs: list[dict]
    timings: list[dict]  # this run's milliseconds per (approach, event): measured, so apart from the costs


def run_study(world: World, extractor: Extractor | None = None, reader: Reader | None = None,
              governed_when_silent: str = "auto") -> StudyResult:
    """Every scenario at every checkpoint, the maintenance comparison for every event, and the repair.
    `governed_when_silent`: what the Governed design answers where its graph holds nothing (StudySettings)."""
    extractor = extractor or RegexExtractor(world.ontology)
    reader = reader or DeterministicReader(world.ontology)
    results: list[dict] = []
    last = len(world.checkpoints) - 1
    stale_end: Store | None = None
    for scenario in world.scenario_names:
        layer = KnowledgeLayer(Store(), GovernedStore(world))
        steps = replay_steps(world, scenario, layer, (world.pages_at(scenario, s) for s in range(last + 1)),
                             extractor, [world.renames_at(scenario, s) for s in range(last + 1)])
        for step, layer, _ in steps:
            results.extend(evaluate(layer, world, scenario, step, reader, ALL_DESIGNS, extractor=extractor,
                                    governed_when_silent=governed_when_silent))
        if scenario == stale_graph_scenario(world):
            stale_end = layer.store
    passes = [row for rows in maintenance_comparisons(world, range(1, last + 1), extractor, reader).values()
              for row in rows]
    assert stale_end is not None
    passes += [o.row for o in repair(stale_end, world, stale_graph_scenario(world), extractor, reader).values()]
    return StudyResult(results, [p.as_row() for p in passes], [p.sample.timing() for p in passes])

