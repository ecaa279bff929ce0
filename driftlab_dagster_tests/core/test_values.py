"""How a question's name is found in what a page writes: every content word, in full or shortened, and in
running text as a phrase."""

from __future__ import annotations

import pytest

from driftlab_dagster.core.values import (
    answers_when_asked,
    initialism,
    names_closely,
    names_match,
    telling_words,
    word_stem,
    written_whole,
)


@pytest.mark.parametrize(("asked", "written", "match"), [
    ("TTS Tech Portfolio", "TTS Technology Portfolio", True),  # "Tech" written short for "Technology"
    ("TTS Technology Portfolio", "TTS Tech Portfolio", True),
    ("Billable hours", "18F billable hour expectations", True),
    ("Ops Portfolio", "Operations Portfolio", False),  # three letters are too short to tell
    ("Travel team", "Traveler guide", False),
    ("Tech Portfolio", "Technology", False),  # every word, not some
    ("Meet-ups", "Our Rituals > Meetups", True),  # a hyphen inside a word tells no names apart (Basecamp's)
    ("Mini meet-ups", "Our Rituals > Mini Meetups", True),
    ("Email address", "Your e-mail address", True),
    ("Level 12", "Level 1-2", False),  # between digits it is a range
    ("Check-in", "Checking account", False),  # a hyphened word is never one written short
    ("Co-op", "Cooperative", False),
])
def test_a_name_matches_in_full_or_shortened(asked, written, match):
    assert names_match(asked, written) is match


@pytest.mark.parametrize(("written", "named"), [
    ("Level 5 summary ratings: Up to 2.5% of adjusted basic pay.", True),
    ("Up to 2.5% of adjusted basic pay for a summary rating at level 5.", True),  # any order, close together
    ('"High 3" summary ratings: for a Level 3 summary rating rated at Level 4 or Level 5.', False),
    ("Level 5 staff write a summary of each rating.", False),  # spread over the sentence
])
def test_running_text_names_a_name_only_as_a_phrase(written, named):
    assert names_closely("Level 5 summary rating", written) is named


def test_a_part_is_written_only_as_whole_words_in_any_casing_and_found_everywhere_it_is():
    text = "Email Inquiries@example.gov or the Department; inquiries go to the desk."
    assert [m.group(0) for m in written_whole("inquiries", text)] == ["inquiries"]  # not the address's
    assert [m.group(0) for m in written_whole("INQUIRIES@EXAMPLE.GOV", text)] == ["Inquiries@example.gov"]
    assert written_whole("art", text) == [] and written_whole("example.gov", text) == []


@pytest.mark.parametrize(("word", "stem"), [("carried", "carry"), ("carry", "carry"), ("hours", "hour"),
                                            ("disputes", "disput"), ("disputed", "disput"), ("policies", "policy"),
                                            ("booking", "book"), ("class", "class"), ("us", "us"), ("yes", "yes"),
                                            ("1990s", "1990")])
def test_a_words_stem_is_what_its_inflections_share(word, stem):
    assert word_stem(word) == stem


def test_the_telling_words_of_a_question_leave_out_what_it_asks_with():
    assert telling_words("How many hours of annual leave can you carry over?") == {"hour", "annual", "leav",
                                                                                   "carry", "over"}
    assert telling_words("Who's the team's owner?") == {"team", "owner"}  # no "s" from an apostrophe


@pytest.mark.parametrize(("name", "initials"), [
    ("Flexible Spending Account (FSA)", "fsa"),
    ("FSA (Flexible Spending Account)", "fsa"),  # either way round
    ("Research & Fidelity (RF)", "rf"),
    ("Federal Employees Retirement System  (FERS)", "fers"),
    ("Office of Personnel Management (OPM)", "opm"),  # filler words left out
    ("Dental (75%)", None),  # a bracket that is no abbreviation
    ("Tock (time tracking)", None),
    ("Level 5 (L5)", None),
    ("A (B)", None),
])
def test_a_name_with_its_initials_in_brackets_is_known_by_them(name, initials):
    assert initialism(name) == initials


@pytest.mark.parametrize("question, value, fits", [
    ("At what time (Eastern) does the huddle start?", "2:30 pm ET", True),
    ("At what time (Eastern) does the huddle start?", "3 p.m. Eastern", True),
    ("At what time (Eastern) does the huddle start?", "Each Monday at 2:30pm ET (11:30am PT)", True),
    ("At what time (Eastern) does the huddle start?", "3pm", True),  # no zone written: not another zone
    ("At what time (Eastern) does the huddle start?", "11:30 am PT", False),
    ("At what time (Eastern) does the huddle start?", "Monday", False),
    ("At what time does the huddle start?", "2 amendments", False),
    ("At what time does the office close?", "noon", True),
    ("On which weekday does the huddle meet?", "Mondays", True),
    ("On which day of the week are timesheets due?", "3pm ET", False),
    ("On which day of the month do the calls happen?", "the 15th", True),  # asks neither
    ("What time of year are reviews held?", "May", True),
    ("Who runs the huddle?", "Monday", True),
])
def test_a_question_asking_a_time_or_a_weekday_is_answered_only_by_one(question, value, fits):
    assert answers_when_asked(question, value) is fits
