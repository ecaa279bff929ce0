"""Which measure a value is, as its statement writes it. Six rules about how text writes measures and
names, none about one handbook:

- `a_measure_for_a_name`: an amount, a duration, a percentage, a bare number or an address is never a
  name, a person or a phrase (a tool is not "90 days").
- `another_measure`: a number directly followed by a unit of time is a length of time, not an amount or a
  share ("12" in "up to 12 weeks of leave"), and a bare year is a year ("the 2019 training"); "a month"
  after an amount or after "once" says how often, not how long ("$130 a month", "meets once a week").
- `a_role_or_an_office`: a value given for a person that ends in a role's or an office's word ("Acting
  Director", "Workforce Relations") names a position or a unit, not a person.
- `a_placeholder`: "Person B", "User X" is an example's stand-in for someone, not a person.
- `a_label`: a bare number right after a capitalised word is the label of something ("Level 5", "Tier 2"),
  not an amount or a share.
- `the_only_value`: a narrow kind's value the model garbled is the one such value its statement writes,
  when it writes exactly one ("10 days" for "ten business days"; a label or a length of time is no share).
"""

from __future__ import annotations

import re

from .values import TIME_UNIT, UNIT_QUALIFIERS, VALUE_KINDS, whole, written_whole

# The kinds a bare number can be given as (the sign is optional in their shapes).
_SIGNED_KINDS = {VALUE_KINDS["money"], VALUE_KINDS["percentage"]}
_DURATION = VALUE_KINDS["duration"]
_PERSON = VALUE_KINDS["person"]
_AFTER_A_NUMBER = re.compile(rf"[ -](?:{UNIT_QUALIFIERS}){TIME_UNIT}\b", re.IGNORECASE)
# What makes "a month" a rate or a frequency: an amount right before it, or "once", "twice", "N times".
_RATE_OR_FREQUENCY = re.compile(r"(?:[$€£]\d[\d,.]*|\bonce|\btwice|\btimes)\s*$", re.IGNORECASE)
_ONE_UNIT = re.compile(rf"an? {TIME_UNIT}", re.IGNORECASE)
_A_SIGN_AFTER = re.compile(r"\s*(?:%|percent|per cent)", re.IGNORECASE)  # what makes a number a share
_YEAR = re.compile(r"(?:19|20)\d\d")  # "Take the 2019 GSA training": a bare number of these is a year
_A_CURRENCY_AFTER = re.compile(r"\s*(?:dollars|usd|euros?|eur|pounds|gbp|%|percent)\b", re.IGNORECASE)


def another_measure(value: str, shape: str | None, statement: str) -> bool:
    """Whether a value given for an amount or a percentage (a bare number, no sign) is, wherever the
    statement writes it, a length of time ("104" in "up to 104 hours"), a year ("2019" in "Take the 2019
    training", unless written as "2019 dollars") or the other of the two ("75" in "75% of $69" is no amount,
    "69" in it no share), or one given for a duration is the unit of a rate or a frequency ("a month" in
    "$130 a month", "a week" in "once a week")."""
    if shape in _SIGNED_KINDS and re.fullmatch(r"\d[\d,.]*(?: ?(?:to|-|–) ?\d[\d,.]*)?", value):
        found = written_whole(value, statement)
        share = shape == VALUE_KINDS["percentage"]
        return bool(found) and all(_AFTER_A_NUMBER.match(statement, m.end())
                                   or (_YEAR.fullmatch(value) and not _A_CURRENCY_AFTER.match(statement, m.end()))
                                   or (share and statement[max(0, m.start() - 1):m.start()] in ("$", "€", "£"))
                                   or (not share and _A_SIGN_AFTER.match(statement, m.end()))
                                   for m in found)
    if shape == _DURATION and _ONE_UNIT.fullmatch(value):
        found = written_whole(value, statement)
        return bool(found) and all(_RATE_OR_FREQUENCY.search(statement[:m.start()]) for m in found)
    return False


# A capitalised word right before a number makes the number a label: "Level 5", "Tier 2", "GS-15", "Step 4".
_LABEL_WORD = re.compile(r"(?<![\w$€£])[A-Z][A-Za-z]*[ -]$")


def a_label(value: str, shape: str | None, statement: str) -> bool:
    """Whether a bare number given for an amount or a percentage is, wherever the statement writes it, the
    label of something ("5" in "Level 5 summary ratings: Up to 2.5% of pay"), not a measure."""
    if shape not in _SIGNED_KINDS or not re.fullmatch(r"\d+", value):
        return False
    found = written_whole(value, statement)
    return bool(found) and all(_LABEL_WORD.search(statement[:m.start()]) and not _A_SIGN_AFTER.match(statement, m.end())
                               for m in found)


# Values no name, person or phrase is: a tool is not "90 days", a meeting's day is not "80%".
_MEASURES = tuple(re.compile(VALUE_KINDS[kind]) for kind in ("money", "duration", "percentage", "email"))


def broad(shape: str | None) -> bool:
    """Whether the shape takes plain words (a name, a person, a phrase, a templated world's own name shape)
    rather than a narrow kind: whether a plain word, capitalised or not, fits it."""
    return shape is None or bool(re.fullmatch(shape, "Ana") or re.fullmatch(shape, "ana"))


def a_measure_for_a_name(value: str, shape: str | None) -> bool:
    """A value of a broad kind that is, as a whole, an amount, a duration, a percentage, a bare number or an
    e-mail address: the model put a measure where a name belongs."""
    return broad(shape) and any(m.fullmatch(value) for m in _MEASURES)


# Words that end the name of a role or an office, never a person's: "Acting Director", "Consulting Software
# Engineer", "Infrastructure Leads", "Workforce Relations" fit a person's shape (capitalised words) but name
# a position or a unit.
_ROLE_OR_OFFICE_WORDS = {
    "director", "manager", "lead", "head", "chief", "officer", "specialist", "supervisor", "commissioner",
    "administrator", "coordinator", "liaison", "engineer", "designer", "developer", "analyst", "consultant",
    "advisor", "adviser", "partner", "representative", "staff", "member", "secretary", "president", "assistant",
    "counsel", "owner", "team", "office", "division", "branch", "department", "group", "services", "relations",
    "operations", "program", "programme", "center", "centre", "council", "board", "committee", "guild", "desk"}


def a_role_or_an_office(person: str) -> bool:
    """Whether a value given for a person ends in a word that names a role or an office."""
    last = person.split()[-1].casefold().rstrip(".")
    return last in _ROLE_OR_OFFICE_WORDS or (last.endswith("s") and last[:-1] in _ROLE_OR_OFFICE_WORDS)


# Nouns a text uses for "some person" in an example: "Person A", "User B", "Employee X" are placeholders.
_SOMEONE_WORDS = {"person", "user", "employee", "someone", "customer", "applicant", "candidate", "individual",
                  "contractor", "traveler", "traveller", "participant", "worker", "colleague"}


def a_placeholder(person: str) -> bool:
    """Whether a value given for a person is an example's stand-in: a noun for a person or a role followed by
    letters only ("Person B" in "Person A has access to something but not Person B"). A real name's first word
    is a given name, never "Person"; an initial after a given name ("Shashank K") is a person."""
    first, *rest = person.split()
    first = first.casefold()
    return bool(rest) and (first in _SOMEONE_WORDS or first in _ROLE_OR_OFFICE_WORDS) and all(
        re.fullmatch(r"[A-Z]\.?", word) for word in rest)


def the_only_value(shape: str | None, sentence: str) -> str | None:
    """The one value of a narrow kind (an amount, a duration, an address, a person's given name and surname: a
    shape no plain word fits) the statement writes, when it writes exactly one: the model said the statement
    states the relation but garbled the value ("10 days" for "ten business days", "Director" for "The
    Director is Kelly Olson"), and there is no other value it could mean."""
    if shape is None or broad(shape):
        return None
    values = {m.group(0).rstrip(".,") for m in re.finditer(whole(shape), sentence)}
    if shape == _PERSON:
        values = {v for v in values if not a_role_or_an_office(v) and not a_placeholder(v)}
    if shape in _SIGNED_KINDS:  # "2.5%" is the one share "Level 5: up to 2.5% of pay, or up to 52 hours" writes
        values = {v for v in values if not another_measure(v, shape, sentence) and not a_label(v, shape, sentence)}
    return values.pop() if len(values) == 1 else None
