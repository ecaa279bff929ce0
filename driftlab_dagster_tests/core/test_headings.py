"""A statement is about its own heading, not the chapter or the page above it, unless the own heading only says
what kind of section it is (core/headings.py)."""

from __future__ import annotations

import pytest

from driftlab_dagster.core.call_cache import CachedClient
from driftlab_dagster.core.headings import heading_name, names_no_topic, nearest_topic, subject_from_own_heading
from driftlab_dagster.core.model_extractor import ModelExtractor
from driftlab_dagster.core.ontology import Ontology, Predicate, Triple
from driftlab_dagster.core.replay import ReplayClient
from driftlab_dagster.core.units import Unit
from driftlab_dagster.core.values import VALUE_KINDS

SICK_LEAVE = ("Benefits", "Leave", "Sick leave")
STATEMENT = "All federal employees accrue four hours per pay period."


@pytest.mark.parametrize("taken", ["Benefits", "Leave", "benefits"])
def test_a_subject_taken_from_the_title_or_a_chapter_is_the_statements_own_heading(taken):
    assert subject_from_own_heading(taken, SICK_LEAVE, STATEMENT) == "Sick leave"


def test_a_subject_that_is_a_run_of_a_chapter_headings_words_is_the_own_heading_too():
    trail = ("Leave (HR Links)", "Voting and poll volunteering")
    statement = "You can receive up to 4 hours for each election event."
    assert subject_from_own_heading("HR Links", trail, statement) == "Voting and poll volunteering"
    # a run of whole words: "Art" is not written in "Department"
    assert subject_from_own_heading("Art", ("Department of Labor", "Parking"), statement) == "Art"
    # nor is a subject no heading above holds
    assert subject_from_own_heading("Voting", trail, statement) == "Voting"


def test_a_subject_the_statement_writes_stays_even_when_a_heading_above_names_it_too():
    statement = "Benefits staff answer within two days."
    assert subject_from_own_heading("Benefits", SICK_LEAVE, statement) == "Benefits"


def test_a_subject_written_only_inside_a_longer_word_of_the_statement_is_not_written_there():
    # "art" is in "Department" as letters, not as a word: the model took "Art" from the chapter heading
    statement = "The Department pays the whole monthly pass."
    assert subject_from_own_heading("Art", ("Art", "Parking"), statement) == "Parking"
    assert subject_from_own_heading("department", ("Department", "Parking"), statement) == "department"


def test_a_faqs_question_names_no_topic_so_the_chapter_stays_the_subject():
    trail = ("Travel", "Approvals", "Who is my authorizing official?")
    assert names_no_topic("Who is my authorizing official?")
    assert subject_from_own_heading("Approvals", trail, "Ask your director.") == "Approvals"
    assert nearest_topic(trail) == "Approvals"


def test_a_subject_that_is_no_heading_above_or_the_own_heading_itself_stays():
    assert subject_from_own_heading("leave requests", SICK_LEAVE, STATEMENT) == "leave requests"
    assert subject_from_own_heading("Sick leave", SICK_LEAVE, STATEMENT) == "Sick leave"
    assert subject_from_own_heading("Benefits", ("Benefits",), STATEMENT) == "Benefits"


@pytest.mark.parametrize("own", ["Questions?", "Communication", "Team Structure", "Where you can reach us", "Tools",
                                 "Frequently Asked Questions"])
def test_an_own_heading_that_only_names_a_kind_of_section_leaves_the_chapter_as_the_subject(own):
    assert names_no_topic(own)
    assert subject_from_own_heading("Engineering", ("Engineering", own), STATEMENT) == "Engineering"


def test_a_subject_taken_from_a_heading_that_only_names_a_kind_of_section_is_the_nearest_topic_above_it():
    trail = ("Custom Partner Solutions", "Team Structure")
    assert subject_from_own_heading("Team Structure", trail, "Acting Director: Stephanie Rivera") == \
        "Custom Partner Solutions"
    deeper = ("Handbook", "Custom Partner Solutions", "Questions", "Team Structure")
    assert subject_from_own_heading("Team Structure", deeper, "Acting Director: Stephanie Rivera") == \
        "Custom Partner Solutions"
    # written in the statement, the words are the statement's own: "Training" may be what it is about
    assert subject_from_own_heading("Training", ("Onboarding", "Training"), "Training takes two days.") == "Training"


@pytest.mark.parametrize("own", ["Card Training", "Paid Parental Leave", "Security tools", "Voting considerations"])
def test_a_heading_with_a_word_besides_section_words_names_a_topic(own):
    assert not names_no_topic(own)


@pytest.mark.parametrize("heading, name", [("1. Complete Card Training", "Complete Card Training"),
                                           ("Step 3 - Get Reimbursed", "Get Reimbursed"),
                                           ("b) Eligibility", "Eligibility"),
                                           ("How do I enrol?", "How do I enrol"),
                                           ("2019 holidays", "2019 holidays")])
def test_a_numbered_steps_number_is_no_part_of_its_name(heading, name):
    assert heading_name(heading) == name


def test_the_model_extractor_files_a_fact_under_the_own_heading_the_model_passed_over():
    allowance = Predicate(name="time_allowance", sentence="{subject} — x — {object}.",
                          subject_pattern=VALUE_KINDS["name"], object_pattern=VALUE_KINDS["duration"],
                          fixed_subject=None, meaning="time allowed", question="", query="hours",
                          open=True, cues=("accrue",))
    unit = Unit(STATEMENT, SICK_LEAVE)
    reply = '{"states": true, "subject": "Benefits", "object": "four hours"}'
    got = ModelExtractor(Ontology([allowance]), CachedClient(ReplayClient(lambda s, u: reply))).extract_unit(unit)
    assert got == [Triple("Sick leave", "time_allowance", "four hours")]


def _relation(name: str, kind: str, cues: tuple[str, ...]) -> Predicate:
    return Predicate(name=name, sentence="{subject} — x — {object}.", subject_pattern=VALUE_KINDS["name"],
                     object_pattern=VALUE_KINDS[kind], fixed_subject=None, meaning=name, question="",
                     query=" ".join(cues), open=True, cues=cues)


def _extract(predicate: Predicate, unit: Unit, reply: str) -> list[Triple]:
    client = CachedClient(ReplayClient(lambda s, u: reply))
    return ModelExtractor(Ontology([predicate]), client).extract_unit(unit)


def test_a_value_the_model_put_in_the_subjects_place_is_the_value_of_the_nearest_topic():
    email = _relation("contact_email", "email", ("email",))
    unit = Unit("Please email us at inquiries@example.gov", ("Acquisition", "What We Do"))
    for reply in ('{"states": true, "subject": "inquiries@example.gov", "object": ""}',
                  '{"states": true, "subject": "inquiries@example.gov", "object": "example.gov"}',
                  # in another casing than the statement's, it is still the value the statement writes
                  '{"states": true, "subject": "Inquiries@Example.gov", "object": ""}'):
        assert _extract(email, unit, reply) == [Triple("Acquisition", "contact_email", "inquiries@example.gov")]


def test_a_subject_is_never_taken_for_the_value_of_a_broad_kind_or_one_the_statement_does_not_write():
    tool = _relation("uses_tool", "name", ("use",))
    unit = Unit("We use Tock for time tracking.", ("Operations", "Tools we use"))
    assert _extract(tool, unit, '{"states": true, "subject": "Tock", "object": ""}') == []
    email = _relation("contact_email", "email", ("email",))
    unit = Unit("Please email us at inquiries@example.gov", ("Acquisition",))
    assert _extract(email, unit, '{"states": true, "subject": "other@example.gov", "object": ""}') == []
