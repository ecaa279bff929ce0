"""The last bad inputs (issue 21): world files that loaded but made the study wrong without a word. Each is
now refused at load in one line that names the thing and how to fix it, or read with a note that
`check-world` prints; and one rule of valid input, who may read what, is one function with its documented
meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.evaluation import evaluate
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.readers import DeterministicReader
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import replay_steps
from driftlab_dagster.core.world import WorldFileError
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster_tests.core.test_permissions import OwnersExtractor, _evidence_for

SNAPSHOT_WORLD = """
company: Pinecone Pantry
corpus: {snapshots: snaps, paths: ["wiki/**/*.md"]}
questions: questions.yaml
predicates:
  owned_by: {description: which team owns a service, object: name, cues: [owns, owned]}
"""

BILLING_QUESTION = """
- id: Q1
  text: Which team owns billing?
  entity: Billing
  hops: [owned_by]
  answers: {2022-01-01: Falcon}
"""


def snapshot_world(tmp_path: Path, days: dict[str, dict[str, str | bytes]], questions: str = BILLING_QUESTION,
                   extra: str = "") -> Path:
    """A corpus world read from snapshot folders (day -> {path: text or raw bytes}); returns its file."""
    for day, files in days.items():
        (tmp_path / "snaps" / day).mkdir(parents=True, exist_ok=True)
        for path, content in files.items():
            target = tmp_path / "snaps" / day / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content if isinstance(content, bytes) else content.encode())
    (tmp_path / "questions.yaml").write_text(questions)
    (tmp_path / "world.yaml").write_text(SNAPSHOT_WORLD + extra)
    return tmp_path / "world.yaml"


def refused(world_file: Path) -> str:
    """Load a world that must be refused; return the one line it is refused with."""
    with pytest.raises(WorldFileError) as info:
        load_world(world_file)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


# ---------------------------------------------------------------------------------------------------------
# 13: who may read what is one rule: public pages always, and the pages of every audience the caller holds.

def test_a_caller_reads_public_pages_and_its_own_audiences_and_no_others():
    from driftlab_dagster.core.permissions import may_read

    finance, public = frozenset({"finance"}), frozenset({"public"})
    assert may_read(finance, "public") and may_read(finance, "finance")
    assert not may_read(finance, "staff")
    assert may_read(public, "public") and not may_read(public, "finance")
    assert may_read(frozenset({"finance", "staff"}), "staff")


PERMISSION_PAGES = {
    "wiki/teams/billing.md": "# Billing\nThe Falcon team owns billing.",
    "wiki/finance/travel.md": "# Travel\nThe Kestrel team owns travel.",
    "wiki/people/parking.md": "# Parking\nThe Osprey team owns parking.",
}

PERMISSION_QUESTIONS = "".join(f"""
- id: {qid}
  text: Which team owns {entity.lower()}?
  entity: {entity}
  hops: [owned_by]
  caller: [{caller}]
  answers: {{2022-01-01: {answer}}}
""" for qid, entity, caller, answer in [("F1", "Billing", "finance", "Falcon"), ("F2", "Travel", "finance", "Kestrel"),
                                        ("F3", "Parking", "finance", "none"), ("P1", "Travel", "public", "none"),
                                        ("S1", "Parking", "staff", "Osprey")])


def test_a_finance_caller_reads_public_and_finance_pages_through_the_study_but_never_staff_ones(tmp_path):
    world = load_world(snapshot_world(tmp_path, {"2022-01-01": PERMISSION_PAGES}, PERMISSION_QUESTIONS,
                                      'audience: {"wiki/finance/**": finance, "wiki/people/**": staff}\n'))
    extractor = OwnersExtractor(world.ontology)
    (step, layer, _), = replay_steps(world, "Fresh", KnowledgeLayer(Store(), GovernedStore(world)),
                                     [world.pages_at("Fresh", 0)], extractor, [{}])
    rows = evaluate(layer, world, "Fresh", step, DeterministicReader(world.ontology), ALL_DESIGNS,
                    extractor=extractor)
    by = {(r["design"], r["question"]): r for r in rows}
    for design in (d for d in ALL_DESIGNS if d.uses_graph):
        answers = {q: by[(design.value, q)]["answer"] for q in ("F1", "F2", "F3", "P1", "S1")}
        assert answers == {"F1": "Falcon", "F2": "Kestrel", "F3": "", "P1": "", "S1": "Osprey"}, design
    # Retrieval too: the finance caller is handed the public billing page, never the staff page.
    assert any("billing.md" in source for source, _ in _evidence_for(world, layer.store, layer.governed, "Fresh",
                                                                      step, extractor, "deterministic", "F1"))
    forbidden = {"F3": ("parking.md", "Osprey"), "P1": ("travel.md", "Kestrel")}  # staff's, finance's
    for question, (page, value) in forbidden.items():
        seen = _evidence_for(world, layer.store, layer.governed, "Fresh", step, extractor, "deterministic", question)
        assert seen and not [e for e in seen if page in f"{e[0]} {e[1]}" or value in str(e[1])], (question, seen)


# ---------------------------------------------------------------------------------------------------------
# 12: a caller's audience that no page has; 10: an audience or authority glob that matches no page.

def test_a_caller_audience_that_no_page_has_is_refused_naming_the_question_and_the_audiences_pages_have(tmp_path):
    world_file = snapshot_world(tmp_path, {"2022-01-01": PERMISSION_PAGES},
                                PERMISSION_QUESTIONS.replace("caller: [staff]", "caller: [finanse]"),
                                'audience: {"wiki/finance/**": finance, "wiki/people/**": staff}\n')
    message = refused(world_file)
    assert "question S1: caller:" in message and "'finanse'" in message, message
    assert "(pages have: finance, public, staff)" in message, message


def test_a_caller_of_public_pages_only_needs_no_page_of_its_own(tmp_path):
    world = load_world(snapshot_world(tmp_path, {"2022-01-01": PERMISSION_PAGES}, PERMISSION_QUESTIONS,
                                      'audience: {"wiki/finance/**": finance, "wiki/people/**": staff}\n'))
    assert {q.id: q.caller for q in world.questions_at(0)}["P1"] == frozenset({"public"})


@pytest.mark.parametrize("section, glob", [
    ("audience", "wiki/finanse/**"),  # a typo: the finance pages would be public
    ("audience", "wiki/fin[ance/**"),  # an unclosed bracket: no crash, and no page
    ("audience", "finance/**"),  # not the whole path inside the corpus
    ("authority", "wiki/polices/**"),  # the policies would rank as any page
])
def test_a_glob_that_matches_no_page_at_any_checkpoint_is_refused_naming_the_glob_and_the_section(
        tmp_path, section, glob):
    value = "finance" if section == "audience" else "1"
    world_file = snapshot_world(tmp_path, {"2022-01-01": PERMISSION_PAGES}, BILLING_QUESTION,
                                f'{section}: {{"wiki/people/**": {value}, "{glob}": {value}}}\n')
    message = refused(world_file)
    assert message.startswith(f"{world_file}: {section}: the glob {glob!r} matches no page at any checkpoint"), message


def test_a_glob_that_matches_a_page_at_one_checkpoint_only_is_kept(tmp_path):
    days = {"2022-01-01": PERMISSION_PAGES,
            "2022-06-01": {p: t for p, t in PERMISSION_PAGES.items() if "finance" not in p}}
    world = load_world(snapshot_world(tmp_path, days, BILLING_QUESTION, 'audience: {"wiki/finance/**": finance}\n'))
    assert world.audience_of("wiki/finance/travel.md") == "finance"
