"""Which heading a statement is about, when a model took the statement's subject from a heading.

A handbook's nearest heading names what the statements under it are about ("## Sick leave" under "# Benefits",
"### Paid Parental Leave" under "## Extended leave options"); a heading further up names the chapter they sit
in. So a subject a model took from the page title or a chapter heading, for a statement its own heading names
a topic for, is the own heading. Not when the own heading names no topic: it only says what kind of section it
is ("## Questions", "## Tools", "## Team structure", "## Where you can reach us") or asks a question (a FAQ's
"### Who is my authorizing official?"); the chapter names the subject then. Nor is such a heading a subject
itself (the nearest heading above that names a topic is).
"""

from __future__ import annotations

import re

from .values import written_whole

# Words of a heading that says what kind of section it is, not what it is about. A heading made of these alone
# names no subject; one word besides them ("Card training", "Security tools") does.
SECTION_WORDS = frozenset({
    "a", "about", "also", "an", "and", "are", "asked", "background", "can", "communication", "communications",
    "contact", "contacts", "details", "do", "documentation", "email", "faq", "faqs", "find", "frequently",
    "general", "getting", "guide", "how", "info", "information", "intro", "introduction", "links", "more",
    "notes", "of", "other", "our", "overview", "people", "policies", "policy", "process", "question",
    "questions", "reach", "related", "resource", "resources", "rituals", "see", "setup", "started", "step",
    "steps", "structure", "summary", "team", "the", "tips", "to", "tool", "tools", "training", "us", "we",
    "what", "where", "who", "work", "you", "your",
})
# A numbered step's number is not part of its name: "1. Complete Card Training", "Step 3 - Get Reimbursed".
_ENUMERATOR = re.compile(r"^\s*(?:(?:step\s+)?\d+\s*[.):-]|[a-z][.)])\s*", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def heading_name(heading: str) -> str:
    """The heading as a name: its enumerator and a closing question mark or colon dropped."""
    return _ENUMERATOR.sub("", heading).strip().rstrip("?:").strip() or heading.strip()


def names_no_topic(heading: str) -> bool:
    """Whether the heading names no topic: it only says what kind of section it is ("Questions?", "Team
    Structure", "Tools"), or it asks a question ("Who is my authorizing official?": a FAQ's question is answered
    below it, it names nothing)."""
    words = _WORD.findall(heading.casefold())
    return heading.rstrip().endswith("?") or all(word in SECTION_WORDS for word in words)


def subject_from_own_heading(subject: str, trail: tuple[str, ...], statement: str) -> str:
    """`subject` as the statement is about it (`trail`: the page title, then the headings above the statement).
    Only a subject written nowhere in the statement (the model took it from a heading) changes: one that only
    names a kind of section ("Team Structure") is the nearest heading that names a topic; one that is a heading
    further up than the statement's own heading (the last of `trail`), or a run of its words ("HR Links" of
    "Leave (HR Links)"), is the own heading when that names a topic. Else `subject` as it is."""
    if written_whole(subject, statement):
        return subject
    if names_no_topic(subject):
        return nearest_topic(trail) or subject
    if len(trail) < 2:
        return subject
    own, words = heading_name(trail[-1]), _words(subject)
    if (names_no_topic(trail[-1]) or not words.strip()
            or not any(words in _words(heading) for heading in trail[:-1])):
        return subject
    return own


def nearest_topic(trail: tuple[str, ...]) -> str | None:
    """The nearest heading of `trail` (the page title first) that names a topic, as a name; None if none does."""
    return next((heading_name(h) for h in reversed(trail) if not names_no_topic(h)), None)


def _words(name: str) -> str:
    """The name's words, folded, each between spaces: one name holds another when its words are a run of them
    (" hr links " is in " leave hr links "; " art " is not in " department ")."""
    return f" {' '.join(_WORD.findall(name.casefold()))} "
