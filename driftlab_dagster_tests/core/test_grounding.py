"""Grounding rules met in real replies to real handbook statements (18F's history, the 0.5B model): a label is
no measure, a role gives way to the person the statement names, a person written into the subject leaves it,
and a subject the statement holds only as filler words is read from its heading."""

from __future__ import annotations

from dataclasses import replace

import pytest

from driftlab_dagster.core.grounding import ground
from driftlab_dagster.core.measures import a_label
from driftlab_dagster.core.names_written import written_as_a_description, written_as_a_name, written_together
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.values import VALUE_KINDS
from driftlab_dagster_tests.core.test_real_handbooks import _open

AWARDS = "Level 5 summary ratings: Up to 2.5% of adjusted basic pay, or up to 52 hours of time off."


def test_a_number_that_labels_something_is_no_share_and_the_one_share_written_is_read():
    share = _open("share", obj="percentage", cues=("%",))
    # The model answered the label ("Level 5 summary ratings"); the statement writes one share, 2.5%.
    # (The line's label is its subject: test_a_line_that_opens_with_a_label_is_about_the_label_not_its_heading.)
    rated = Triple("Level 5 summary ratings", "share", "2.5%")
    assert ground(Triple("Awards", "share", "Level 5 summary ratings"), share, AWARDS, "Awards") == rated
    assert ground(Triple("Awards", "share", "5"), share, AWARDS, "Awards") == rated
    # Two shares written: which one the model meant cannot be told, so nothing is kept.
    two = AWARDS.replace("of adjusted basic pay", "of adjusted basic pay (3% in 2021)")
    assert ground(Triple("Awards", "share", "5"), share, two, "Awards") is None


@pytest.mark.parametrize(("value", "statement", "label"), [
    ("5", AWARDS, True),
    ("2", "Tier 2 plans cost $40.", True),
    ("4", "Step 4 pays 3% more.", True),
    ("5", "Over 5 percent of staff use it.", False),  # a share, written with its word
    ("40", "Tier 2 plans cost 40 a month.", False),  # written after a small word
    ("2.5", "Level 2.5: pay up to 3%.", False),  # only whole numbers label things
])
def test_a_label_is_a_whole_number_right_after_a_capitalised_word(value, statement, label):
    assert a_label(value, VALUE_KINDS["percentage"], statement) is label
    assert not a_label(value, VALUE_KINDS["duration"], statement)  # only amounts and shares are read as labels


def test_a_role_given_for_the_person_gives_way_to_the_person_the_statement_names():
    lead = _open("led_by", obj="person", cues=("director",))
    said, heading = "Acting Director: Will Slack", "Products and Platforms > Team Structure"
    assert ground(Triple("Team Structure", "led_by", "Acting Director"), lead, said, heading) \
        == Triple("Team Structure", "led_by", "Will Slack")
    # Two people named: which one leads cannot be told.
    assert ground(Triple("Team Structure", "led_by", "Acting Director"), lead, said + ", deputy Bo Li", heading) is None


def test_a_person_the_model_wrote_into_the_subject_leaves_it():
    contact = _open("point_of_contact", obj="person", cues=("reach out",))
    said = "Feel free to reach out to our OSC liaison Drew Jack (drew.jack@gsa.gov)."
    # The value given is no person; the statement names one; the subject held it beside the role.
    assert ground(Triple("OSC liaison Drew Jack", "point_of_contact", "GSA.gov"), contact, said) \
        == Triple("OSC liaison", "point_of_contact", "Drew Jack")
    assert ground(Triple("Drew Jack, OSC liaison", "point_of_contact", "Drew Jack"), contact,
                  "Drew Jack, OSC liaison: reach out to him.") == Triple("OSC liaison", "point_of_contact", "Drew Jack")
    # Nothing but the person: no subject is left, so no fact.
    assert ground(Triple("Drew Jack", "point_of_contact", "Drew Jack"), contact, said) is None
    # Not a person: a subject holding its value states nothing about two things.
    place = _open("contact", cues=("searching",))
    assert ground(Triple("searching the GSA Staff Directory", "contact", "GSA Staff Directory"), place,
                  "Find them by searching the GSA Staff Directory.") is None


def test_a_subject_the_statement_writes_only_as_filler_words_is_read_from_its_heading():
    limit = _open("time_limit", obj="duration", cues=("increments",))
    said = "Agreements come in increments of 120 days or less, and can be extended up to two times."
    heading = "Assignments and Detailing to and from TTS > Time increments"
    # "and" is all of the subject the statement writes: the heading writes it whole.
    assert ground(Triple("Assignments and Detailing to and from TTS", "time_limit", "120 days or less"), limit,
                  said, heading) == Triple("Assignments and Detailing to and from TTS", "time_limit", "120 days")
    assert ground(Triple("Assignments and Detailing to and from TTS", "time_limit", "120 days or less"), limit,
                  said) is None  # without the heading, the subject is nowhere


def test_a_share_is_no_amount_and_an_amount_no_share():
    # 18F: "75" of "75% of $69" was filed as the daily M&IE amount in DC. Read as what it is not, a number
    # gives way to the one value of the asked kind the statement writes.
    said = "M&IE is $69 per day in DC, and is 75% of $69 on the first and last days of a trip."
    amount, share = _open("amount", obj="money", cues=("$",)), _open("share", obj="percentage", cues=("%",))
    for reply in ("75", "69"):
        assert ground(Triple("M&IE", "amount", reply), amount, said) == Triple("M&IE", "amount", "$69")
        assert ground(Triple("M&IE", "share", reply), share, said) == Triple("M&IE", "share", "75%")
    two_amounts = said.replace("on the first", "($51.75) on the first")
    assert ground(Triple("M&IE", "amount", "75"), amount, two_amounts) is None


@pytest.mark.parametrize(("statement", "subject"), [
    ("Tolls: receipts for all tolls over $25 are required.", "Tolls"),
    ("Level 5 summary ratings: Up to $25 of adjusted basic pay.", "Level 5 summary ratings"),
    ("Note: tolls over $25 need a receipt.", "Travel costs"),  # what kind of line it is
    ("For example: tolls over $25 need a receipt.", "Travel costs"),  # how it goes on
    ("PLEASE NOTE: tolls over $25 need a receipt.", "Travel costs"),  # a shouted marker
    ("GSA: tolls over $25 need a receipt.", "GSA"),  # an acronym is a name
    ("Acting Director: $25 for each toll.", "Travel costs"),  # a role
    ("Mondays: $25 for each toll.", "Travel costs"),  # when something falls
    ("Amount: $25 for each toll.", "Travel costs"),  # the relation's own word
    ("Cost per day: $25 for each toll.", "Travel costs"),  # a field's words
    ("Expense: Tolls; Limit: $25 a day", "Tolls"),  # a table row (units.py): its first cell, not the column
    ("Role: Director; Limit: $25 a day", "Travel costs"),  # ... when it names something of its own
    ("Tolls over $25 need a receipt: keep it.", "Travel costs"),  # the value inside the label
])
def test_a_line_that_opens_with_a_label_is_about_the_label_not_its_heading(statement, subject):
    amount = _open("amount", obj="money", cues=("$",))
    # The model took the subject from the heading; the line names its own.
    assert ground(Triple("Travel costs", "amount", "$25"), amount, statement, "Travel > Travel costs") \
        == Triple(subject, "amount", "$25")
    # A subject the statement writes is the model's reading and stays.
    assert ground(Triple("receipts", "amount", "$25"), amount, "Tolls: receipts over $25.", "Travel > Receipts") \
        == Triple("receipts", "amount", "$25")


def test_a_label_made_of_the_relations_own_words_is_no_subject():
    surcharge = _open("surcharge", obj="money", cues=("surcharge", "$"))
    assert ground(Triple("Travel costs", "surcharge", "$25"), surcharge, "Surcharge: $25 for each toll.",
                  "Travel > Travel costs") == Triple("Travel costs", "surcharge", "$25")


def test_a_year_is_no_amount():
    # 18F: "2019" of "Take the 2019 GSA Mandatory Cyber Security and Privacy Training" was filed as an amount.
    amount = _open("amount", obj="money", cues=("take", "grant"))
    said = "Take the 2019 GSA Mandatory Cyber Security and Privacy Training."
    assert ground(Triple("GSA", "amount", "2019"), amount, said) is None
    assert ground(Triple("GSA", "amount", "2019"), amount, "The GSA grant is 2019 dollars.") \
        == Triple("GSA", "amount", "2019")
    assert ground(Triple("GSA", "amount", "1500"), amount, "The GSA grant is 1500 for each team.") \
        == Triple("GSA", "amount", "1500")  # not a year's number


@pytest.mark.parametrize(("part", "statement", "as_a_name"), [
    ("C2", "C2, our purchase request tool, is your one-stop-shop.", True),  # a digit
    ("GitHub", "We keep our code on GitHub.", True),  # a capital inside a word
    ("Google Hangouts", "Google Hangouts is for calls.", True),  # every word capitalised
    ("Office of Acquisition", "Ask the Office of Acquisition.", True),  # but a function word
    ("Lever", "Ask the team to use Lever for that.", True),  # capitalised where no sentence starts
    ("Lever", "Lever: our applicant tracking system.", False),  # a sentence's first word tells nothing
    ("Slack", "Chat tools, e.g. Slack, are fine.", True),  # "e.g." ends no sentence
    ("Slack", "Slackbot reminders come through Slack.", True),  # the whole word, not inside "Slackbot"
    ("FOIA requests", "FOIA requests are processed by the privacy office.", False),  # a description of things
    ("18F budgets", "Most 18F budgets use the form.", False),
    ("conference call", "You can use Google Hangouts to conference call.", False),
])
def test_a_part_is_written_as_a_name_by_its_digits_and_capitals_not_by_where_a_sentence_starts(part, statement,
                                                                                            as_a_name):
    assert written_as_a_name(part, statement) is as_a_name


@pytest.mark.parametrize(("part", "statement", "described"), [
    ("conference call", "You can use Google Hangouts to conference call.", True),
    ("Our applicant tracking system", "Lever: Our applicant tracking system.", True),  # capitalised after a colon
    ("cloud.gov", "Apps are deployed through cloud.gov.", True),
    ("Purchase requests", "Send Purchase requests to C2.", False),  # capitalised where no sentence starts
    ("TTS apps", "TTS apps are deployed through cloud.gov.", False),
    ("the innovation portfolio", "TTS Solutions was formerly called the innovation portfolio.", True),
])
def test_a_description_is_plain_words_but_a_sentences_first_capital(part, statement, described):
    assert written_as_a_description(part, statement) is described


@pytest.mark.parametrize(("name", "description", "statement", "together"), [
    ("C2", "purchase request tool", "C2, our purchase request tool, is your one-stop-shop.", True),
    ("Google Hangouts", "conference call", "You can use Google Hangouts to conference call.", True),
    ("Lever", "Our applicant tracking system", "Lever: Our applicant tracking system.", True),
    ("SSLMate", "approved purchase request", "SSLMate through ##acquisition, via an approved purchase request.",
     False),
    ("C2", "purchase request tool", "Our purchase request tool is C2.", False),  # the description comes first
])
def test_a_description_tells_what_a_name_is_only_written_right_after_it(name, description, statement, together):
    assert written_together(name, description, statement) is together


def test_a_name_valued_pair_the_model_turned_around_is_put_back():
    # 18F: "C2 uses_tool purchase request tool", "Google Hangouts uses_tool conference call": the tool is the
    # name, what it is used for the description, as the relation's own example has it.
    tool = replace(_open("uses_tool", obj="name", cues=("tool", "use", "filed", "via")), examples=(
        ("Expense reports are filed in Brisklane, our reimbursement system.", "Expense reports", "Brisklane", ""),))
    said = "If you need anything under $10,000, C2, our purchase request tool, is your one-stop-shop."
    assert ground(Triple("C2", "uses_tool", "purchase request tool"), tool, said, "Purchase requests") \
        == Triple("purchase request tool", "uses_tool", "C2")
    said = "You can use Google Hangouts to conference call, video conference and screenshare."
    assert ground(Triple("Google Hangouts", "uses_tool", "conference call"), tool, said) \
        == Triple("conference call", "uses_tool", "Google Hangouts")
    # Two names, a description for a description, a name that is a description of things: as the model gave them.
    for subject, obj, said in (("Google Chat", "Slack", "You can use Google Chat (many in TTS prefer Slack)."),
                               ("Budgets", "micropurchase request form", "Budgets use the micropurchase request form."),
                               ("18F budgets", "micropurchase request form", "18F budgets use the micropurchase "
                                                                             "request form.")):
        assert ground(Triple(subject, "uses_tool", obj), tool, said) == Triple(subject, "uses_tool", obj)
    # A description written apart from the name says nothing of what the name is (18F: "SSLMate" is got via a
    # purchase request; it is no purchase request tool).
    said = "SSLMate through ##acquisition, via an approved purchase request."
    assert ground(Triple("SSLMate", "uses_tool", "approved purchase request"), tool, said) \
        == Triple("SSLMate", "uses_tool", "approved purchase request")
    # A relation whose example names both parts (a rename), or that gives no example, is never turned around.
    renamed = replace(_open("formerly_called", obj="name", cues=("formerly",)), examples=(
        ("The Marlow Division was previously called the Office of Tessel (OT).", "Marlow Division",
         "Office of Tessel", ""),))
    said = "TTS Solutions was formerly called the innovation portfolio."
    assert ground(Triple("TTS Solutions", "formerly_called", "innovation portfolio"), renamed, said) \
        == Triple("TTS Solutions", "formerly_called", "innovation portfolio")
    said = "You can use Google Hangouts to conference call."
    assert ground(Triple("Google Hangouts", "uses_tool", "conference call"), replace(tool, examples=()), said) \
        == Triple("Google Hangouts", "uses_tool", "conference call")
