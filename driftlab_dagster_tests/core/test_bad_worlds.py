"""The last bad inputs (issue 21): world files that loaded but made the study wrong without a word. Each is
now refused at load in one line that names the thing and how to fix it, or read with a note that
`check-world` prints; and one rule of valid input, who may read what, is one function with its documented
meaning."""

from __future__ import annotations

import argparse
import os
import subprocess
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


# ---------------------------------------------------------------------------------------------------------
# 9: a page over MAX_PAGE_BYTES is skipped with a note, and the world's version follows it; 14: a file that is
# not UTF-8 is read with replacement characters and a note; check-world prints the notes after its OK line.

BIG = "# Archive\n" + "The Falcon team owns billing.\n" * 10_000  # 300,010 bytes


def _git_world(tmp_path: Path, commits: list[tuple[str, dict[str, bytes]]]) -> Path:
    """The snapshot world's questions over a git repository: one commit per (ISO time, {path: bytes})."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for when, files in commits:
        for path, data in files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_bytes(data)
            subprocess.run(["git", "-C", str(repo), "add", path], check=True)
        env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": "T",
               "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org"}
        subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", when], check=True, env=env)
    (tmp_path / "questions.yaml").write_text(BILLING_QUESTION)
    (tmp_path / "world.yaml").write_text(SNAPSHOT_WORLD.replace(
        'corpus: {snapshots: snaps, paths: ["wiki/**/*.md"]}',
        'corpus: {git: repo, paths: ["wiki/**/*.md"], checkpoints: [2022-02-01, 2022-07-01]}'))
    return tmp_path / "world.yaml"


def test_a_page_over_the_size_limit_in_a_snapshot_folder_is_skipped_with_a_note_on_its_first_day(tmp_path):
    billing = {"wiki/teams/billing.md": "# Billing\nThe Falcon team owns billing."}
    world = load_world(snapshot_world(tmp_path, {"2022-01-01": {**billing, "wiki/archive.md": BIG},
                                                 "2022-03-01": {**billing, "wiki/archive.md": BIG}}))
    assert [p.id for p in world.pages_at("Fresh", 1)] == ["wiki/teams/billing.md"]
    assert world.notes == ("wiki/archive.md on 2022-01-01: skipped, 300,010 bytes over the 262,144-byte limit",)


def test_a_page_over_the_size_limit_in_git_is_skipped_with_a_note(tmp_path):
    world = load_world(_git_world(tmp_path, [
        ("2022-01-10T10:00:00Z", {"wiki/billing.md": b"# Billing\nThe Falcon team owns billing.\n"}),
        ("2022-03-10T10:00:00Z", {"wiki/archive.md": BIG.encode()})]))
    assert {p.id for p in world.pages_at("Fresh", 1)} == {"wiki/billing.md"}
    assert world.notes == ("wiki/archive.md on 2022-07-01: skipped, 300,010 bytes over the 262,144-byte limit",)


def test_the_world_version_changes_when_a_skipped_page_changes(tmp_path):
    billing = {"wiki/teams/billing.md": "# Billing\nThe Falcon team owns billing."}
    versions = []
    for archive in (BIG, BIG + "One line more.\n", BIG.replace("Falcon", "Heron")):  # longer, then same size
        world_file = snapshot_world(tmp_path / str(len(versions)), {"2022-01-01": {**billing,
                                                                                  "wiki/archive.md": archive}})
        versions.append(load_world(world_file).version)
    assert len(set(versions)) == 3, versions


def test_a_file_that_is_not_utf8_is_read_with_replacement_characters_and_a_note(tmp_path):
    latin1 = "# Billing\nThe Falcon team owns billing.\nThe café opens at 9.\n".encode("latin-1")
    world = load_world(snapshot_world(tmp_path, {"2022-01-01": {"wiki/teams/billing.md": latin1}}))
    page, = world.pages_at("Fresh", 0)
    assert "The caf\ufffd opens at 9." in page.body and "The Falcon team owns billing." in page.body
    note, = world.notes
    assert note.startswith("wiki/teams/billing.md on 2022-01-01: not UTF-8 at line 3 "), note
    assert note.endswith("save it as UTF-8"), note


def test_a_file_that_is_not_utf8_in_git_gets_its_note_once_per_version(tmp_path):
    world = load_world(_git_world(tmp_path, [
        ("2022-01-10T10:00:00Z", {"wiki/billing.md": b"# Billing\nThe Falcon team owns billing.\nCaf\xe9.\n"})]))
    assert [n.split(": not UTF-8 at line ")[0] for n in world.notes] == ["wiki/billing.md on 2022-02-01"]
    assert "line 3 " in world.notes[0]


def test_check_world_prints_each_note_after_its_ok_line(tmp_path, capsys):
    from driftlab_dagster.cli import cmd_check_world

    world_file = snapshot_world(tmp_path, {"2022-01-01": {"wiki/teams/billing.md": "The Falcon team owns billing.",
                                                          "wiki/archive.md": BIG}})
    assert cmd_check_world(argparse.Namespace(path=str(world_file))) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{world_file}: OK: world pinecone_pantry") and ", 1 checkpoint, " in lines[0]
    assert lines[1:2] == [
        "note: wiki/archive.md on 2022-01-01: skipped, 300,010 bytes over the 262,144-byte limit"]
    assert len(lines) == 3 and lines[2].startswith("model calls: --extractor model asks 1 extraction call")


def test_a_templated_world_has_no_notes():
    from driftlab_dagster.project import DEFAULT_WORLD

    assert load_world(DEFAULT_WORLD).notes == ()


# ---------------------------------------------------------------------------------------------------------
# 11: snapshot folders are named by their date; a date-shaped name that is no date is refused, others noted.

@pytest.mark.parametrize("name", ["2022-13-45", "2022-02-30", "2022-3-1", "20220301"])
def test_a_snapshot_folder_named_like_a_date_that_is_not_one_is_refused(tmp_path, name):
    page = {"wiki/teams/billing.md": "The Falcon team owns billing."}
    message = refused(snapshot_world(tmp_path, {"2022-01-01": page, name: page}))
    assert f"corpus: the snapshot folder {tmp_path / 'snaps' / name} is not named by a real date" in message, message
    assert "YYYY-MM-DD" in message, message


def test_other_names_in_the_snapshots_folder_are_listed_as_notes(tmp_path):
    page = {"wiki/teams/billing.md": "The Falcon team owns billing."}
    world_file = snapshot_world(tmp_path, {"2022-01-01": page, "drafts": page, "2022-03-01 old": page})
    (tmp_path / "snaps" / "README.md").write_text("How these folders were made.")
    world = load_world(world_file)
    assert world.day_keys == ["2022-01-01"]
    ignored = ": not a folder named by a date (YYYY-MM-DD), so not a checkpoint: ignored"
    assert world.notes == tuple(f"{tmp_path / 'snaps' / name}{ignored}" for name in ("2022-03-01 old", "README.md",
                                                                                    "drafts"))


# ---------------------------------------------------------------------------------------------------------
# Templated worlds. 8: a value a fact renders into a shape position that the shape does not match (no
# extractor ever reads that fact); 7: a question whose expected value no page ever states (every row wrong).

TEAM_WORLD = """
company: Tiny Co
start: 2027-01-04T09:00:00Z
shapes: {word: '[A-Z]\\w+', person: '[A-Z]\\w+ [A-Z]\\w+', integer: '\\d+'}
predicates:
  price:
    sentence: 'The {subject} plan costs ${object} a month.'
    subject: word
    object: integer
    meaning: plan price in USD
    question: What does the {subject} plan cost?
    query: plan costs month
  led_by:
    sentence: 'The {subject} team is led by {object}.'
    subject: word
    object: person
    meaning: team lead
    question: Who leads the {subject} team?
    query: team is led by
state: {basic_price: 5, ops_lead: Ana Lima, ops_team: Ops}
events:
  - {id: 1, day: 3, kind: price, set: {basic_price: 7},
     record: {source: 'record:billing', fact: [price, Basic, '{basic_price}']}}
  - {id: 2, day: 5, kind: lead, set: {ops_lead: Bo Reyes},
     record: {source: 'record:hr', fact: [led_by, Ops, '{ops_lead}']}}
scenarios:
  Fresh: {pages: all, graph: patch_changed_pages}
  StalePages: {pages: none, graph: patch_from_record}
  StaleGraph: {pages: all, graph: none}
pages:
  - {id: p1, title: Prices, canonical_for: [price], body: [{fact: [price, Basic, '{basic_price}']}]}
  - {id: p2, title: Teams, canonical_for: [lead], body: [{fact: [led_by, '{ops_team}', '{ops_lead}']}]}
  - {id: p3, title: Office, body: [We sit by the sea in Porto.]}
questions:
  - {id: Q1, event: 1, text: 'How much is the Basic plan?', entity: Basic, hops: [price], expected: '{basic_price}'}
  - {id: Q2, event: 2, text: 'Who leads the Ops team?', entity: Ops, hops: [led_by], expected: '{ops_lead}'}
"""


def refused_text(tmp_path: Path, text: str) -> str:
    (tmp_path / "world.yaml").write_text(text, encoding="utf-8")
    message = refused(tmp_path / "world.yaml")
    assert message.startswith(f"{tmp_path / 'world.yaml'}: "), message
    return message


def test_the_team_world_loads_and_its_study_answers_every_question():
    from driftlab_dagster.core.study import run_study
    from driftlab_dagster.core.world.loader import parse_world

    study = run_study(parse_world(TEAM_WORLD, "team.yaml"))
    fresh = [r for r in study.results if r["scenario"] == "Fresh"]
    assert fresh and all(r["outcome"] == "correct" for r in fresh)
    assert {r["answer"] for r in fresh if r["question"] == "Q2" and r["step"] == 2} == {"Bo Reyes"}


def test_an_event_value_that_does_not_fit_its_shape_is_refused_naming_the_event_value_predicate_and_shape(tmp_path):
    message = refused_text(tmp_path, TEAM_WORLD.replace("set: {ops_lead: Bo Reyes}", "set: {ops_lead: Çağla Öztürk}"))
    assert "events[1].set.ops_lead (line " in message, message
    assert "event 2 sets ops_lead to 'Çağla Öztürk'" in message, message
    assert "predicate led_by" in message and "shape person '[A-Z]\\w+ [A-Z]\\w+'" in message, message


def test_an_initial_value_or_a_fact_text_that_does_not_fit_its_shape_is_refused_where_it_is_written(tmp_path):
    message = refused_text(tmp_path, TEAM_WORLD.replace("ops_team: Ops}", "ops_team: ops}"))
    assert "state.ops_team (line " in message and "'ops'" in message and "shape word" in message, message
    message = refused_text(tmp_path, TEAM_WORLD.replace("fact: [price, Basic, '{basic_price}']}]}",
                                                        "fact: [price, basic, '{basic_price}']}]}"))
    assert "pages[0].body[0].fact (line " in message and "'basic'" in message and "shape word" in message, message


def test_a_value_that_fits_only_inside_a_longer_text_is_checked_as_rendered(tmp_path):
    # "{ops_lead} Jr" renders "Bo Reyes Jr": three words, which the two-word person shape never reads.
    message = refused_text(tmp_path, TEAM_WORLD.replace("[led_by, '{ops_team}', '{ops_lead}']",
                                                        "[led_by, '{ops_team}', '{ops_lead} Jr']"))
    assert "state.ops_lead (line " in message and "'Ana Lima Jr'" in message, message


def test_a_question_whose_expected_value_no_page_ever_states_is_refused_naming_the_question(tmp_path):
    message = refused_text(tmp_path, TEAM_WORLD.replace("hops: [led_by], expected: '{ops_lead}'",
                                                        "hops: [led_by], expected: Cy Ode"))
    assert "questions[1].expected (line " in message, message
    assert "question Q2 expects 'Cy Ode' at 2027-01-04" in message and "no page states it" in message, message


def test_a_value_no_page_states_after_an_event_is_refused_with_its_checkpoint(tmp_path):
    # The price page and the billing record only ever say the price the world started with: 7 is said nowhere.
    message = refused_text(tmp_path, TEAM_WORLD.replace("[price, Basic, '{basic_price}']",
                                                        "[price, Basic, '{initial.basic_price}']"))
    assert "question Q1 expects '7' at 2027-01-07" in message, message


def test_a_value_only_the_system_of_record_states_is_enough(tmp_path):
    from driftlab_dagster.core.world.loader import parse_world

    # StalePages' graph learns 7 from the billing record: those rows can be right, so the world is kept.
    only_record = TEAM_WORLD.replace("body: [{fact: [price, Basic, '{basic_price}']}]}",
                                     "body: [{fact: [price, Basic, '{initial.basic_price}']}]}")
    assert parse_world(only_record, "team.yaml").question_ids == ["Q1", "Q2"]


def test_a_value_stated_in_one_scenario_at_one_checkpoint_or_in_another_spelling_is_enough(tmp_path):
    from driftlab_dagster.core.world.loader import parse_world

    # Bo Reyes is on a page only from event 2 on, and only where pages follow the world (Fresh, StaleGraph).
    assert parse_world(TEAM_WORLD, "team.yaml").question_ids == ["Q1", "Q2"]
    # The scorer's one normalisation: "seven" is the 7 the price page states, "none" is abstaining.
    spelled = TEAM_WORLD.replace("expected: '{basic_price}'", "expected: seven").replace(
        "expected: '{ops_lead}'", "expected: none")
    assert parse_world(spelled, "team.yaml").question_ids == ["Q1", "Q2"]


def test_a_value_only_part_of_a_longer_word_on_a_page_is_not_stated(tmp_path):
    # "Port" is inside "Porto" (the office page), but never a whole phrase: the scorer would never accept it.
    message = refused_text(tmp_path, TEAM_WORLD.replace("hops: [led_by], expected: '{ops_lead}'",
                                                        "hops: [led_by], expected: Port"))
    assert "question Q2 expects 'Port'" in message, message


# ---------------------------------------------------------------------------------------------------------
# Found on the way: a question with evidence dated before its first answer crashed the reference check.

def test_evidence_dated_before_a_questions_first_answer_is_the_missing_answer_line_not_a_crash(tmp_path):
    question = BILLING_QUESTION.replace("answers: {2022-01-01: Falcon}", "answers: {2022-03-01: Falcon}\n"
                                        "  evidence: {2022-01-01: {page: wiki/teams/billing.md}}")
    page = {"wiki/teams/billing.md": "The Falcon team owns billing."}
    message = refused(snapshot_world(tmp_path, {"2022-01-01": page, "2022-06-01": page}, question))
    assert "question Q1: no answer for checkpoint 2022-01-01" in message, message


def test_inline_questions_with_a_wrong_key_are_refused_naming_the_key_not_the_shape_they_are_not(tmp_path):
    # Seen trying a second real handbook: `relation:` written for `hops:`. The first error pydantic lists is
    # that a list is not a file name ("Input should be a valid string"), which says nothing of what to fix.
    world = tmp_path / "world.yaml"
    world.write_text(SNAPSHOT_WORLD.replace("questions: questions.yaml", "questions:" + BILLING_QUESTION.replace(
        "hops: [owned_by]", "relation: owned_by").replace("\n", "\n  ")))
    message = refused(world)
    assert "questions[0].hops" in message and "valid string" not in message, message
