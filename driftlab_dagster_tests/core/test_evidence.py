"""A question's evidence as the reader reads it, and the note check-world gives a question whose evidence never
writes the entity it asks about."""

from __future__ import annotations

from driftlab_dagster.cli import main
from driftlab_dagster.core.world.evidence import dated_evidence, naming_notes
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster_tests.core.test_corpus_world import make_wiki

# Q1 asks about "Billing" as the page does; Q9 asks the same in a user's own word, which no page writes.
EVIDENCED = """
- id: Q9
  text: Which team owns payments?
  entity: {entity}
  hops: [owned_by]
  answers: {{2022-01-01: Falcon, 2022-06-15: Heron}}
  evidence:
    2022-01-01: {{page: wiki/teams/billing.md, quote: The Falcon team owns billing}}
    2022-06-15: {{page: wiki/teams/billing.md, quote: The Heron team owns billing now}}
    2022-09-01: {{page: wiki/ops/billing.md, quote: The Heron team owns billing now}}
"""


def world_asking(tmp_path, entity: str):
    wiki = make_wiki(tmp_path)
    questions = wiki / "questions.yaml"
    questions.write_text(questions.read_text() + EVIDENCED.format(entity=entity))
    return wiki / "world.yaml"


def test_each_stated_answer_is_found_in_the_unit_that_holds_its_quote(tmp_path):
    world = load_world(world_asking(tmp_path, "Billing"))
    found = [d for d in dated_evidence(world) if d.question.id == "Q9"]
    assert [(d.checkpoint, d.answer, [u.text for u in d.units]) for d in found] == [
        ("2022-02-01", "Falcon", ["The Falcon team owns billing."]),
        ("2022-07-01", "Heron", ["The Heron team owns billing now."]),
        ("2023-01-01", "Heron", ["The Heron team owns billing now."]),  # on the page where it moved
    ]
    assert all(d.names_entity(world) for d in found)
    assert {d.missing for d in dated_evidence(world) if d.question.id == "Q1"} == {"no evidence"}


def test_a_relation_with_one_subject_needs_no_name_in_its_evidence(tmp_path):
    """Q2's relation has one fixed subject ("Refund policy"), which the refunds page never writes."""
    path = world_asking(tmp_path, "Payments")
    questions = path.parent / "questions.yaml"
    questions.write_text(questions.read_text().replace(
        "answers: {2022-01-01: none, 2022-12-01: 21}",
        "answers: {2022-01-01: none, 2022-12-01: 21}\n  evidence: {2022-12-01: {page: wiki/policies/refunds.md, "
        "quote: 'Window: 21 days'}}"))
    world = load_world(path)
    refund = [d for d in dated_evidence(world) if d.question.id == "Q2"]
    assert [(d.checkpoint, [u.text for u in d.units]) for d in refund] == [("2023-01-01", ["Window: 21 days"])]
    assert refund[0].names_entity(world) == list(refund[0].units)
    assert [n.split(":")[0] for n in naming_notes(world)] == ["question Q9"]


def test_check_world_notes_an_entity_its_evidence_never_writes(tmp_path, capsys):
    path = world_asking(tmp_path, "Payments")
    assert main(["check-world", str(path)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: question Q9: its entity 'Payments' is written neither in its evidence nor in the evidence's headings "
        "at 3 of the 3 checkpoints its evidence is found at (e.g. 2022-02-01: 'Billing: The Falcon team owns "
        "billing.'): the graph designs find a question's facts by the name its pages write, so they cannot answer "
        "it there; name the entity as the page does (a heading or the statement's own words; a date mapping where "
        "the page renamed it)"]
    (tmp_path / "named").mkdir()
    assert naming_notes(load_world(world_asking(tmp_path / "named", "Billing"))) == []
