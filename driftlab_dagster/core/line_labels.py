"""What a line is about when it opens with a label: "Tolls: receipts for all tolls over $25 are required",
"Level 5 summary ratings: Up to 2.5% of pay". Handbooks write lists, definition lines and table rows this way;
a line under a heading is about its label, a table row ("column: cell; column: cell", as units.py writes one)
about its first cell, not its column's name. Never a label that says what kind of line it is or how it goes on
("Note:", "For example:", "ACTION:"), a role ("Acting Director: Will Slack" is about the section's team), when
something falls ("Mondays:"), a measure, or a field ("Email:", "Cost per day:", "Contact person:")."""

from __future__ import annotations

import re

from .measures import a_measure_for_a_name, a_placeholder, a_role_or_an_office
from .values import TIME_UNIT, VALUE_KINDS

MAX_LABEL_WORDS = 6  # a name, not a clause ("Members of the Engineering team come from all over" is none)

_LABEL = re.compile(r"\s*([^:.;!?()]{1,60}?)\s*:\s+\S")
_TABLE_ROW = re.compile(r"\s*([^:;]{1,60}): ([^;]{1,80}); [^:;]{1,60}: ")
# What a line opens with that says what kind of line it is or how it goes on, not what it is about ("Note:",
# "For example:", "Please note:", "Bottom line:", "Next step:", "TODO:").
_NOT_A_SUBJECT = {"note", "notes", "tip", "tips", "warning", "important", "example", "examples", "update", "reminder",
                  "caution", "info", "nb", "ps", "q", "a", "question", "answer", "why", "how", "what", "when", "who",
                  "where", "fyi", "edit", "more", "see", "also", "exception", "exceptions", "for", "please", "action",
                  "todo", "don't", "do", "and", "but", "so", "if", "bottom", "optional", "next", "jump", "tl;dr",
                  "tldr", "remember", "caveat", "caveats", "disclaimer", "aside", "context", "background", "summary",
                  "rationale", "goal", "goals", "purpose", "mission", "vision", "step", "key", "result", "results",
                  "you", "we", "they", "it", "this", "that", "these", "those", "them", "our", "your"}
_SHOUTED = re.compile(r"[A-Z]{5,}(?: [A-Z]+)*")  # "ACTION", "PLEASE NOTE": a marker, not a name ("GSA", "OCFO" are)
# Words of a label that names a field, the kind of value the line gives ("Cost per day: $25", "Contact person: Ana").
_FIELD_WORDS = {"cost", "costs", "price", "fee", "fees", "rate", "amount", "total", "time", "date", "dates", "deadline",
                "duration", "length", "limit", "due", "contact", "contacts", "person", "email", "e-mail", "phone",
                "owner", "owners", "lead", "leads", "point", "poc", "location", "place", "status", "name", "title",
                "url", "link", "links", "website", "site", "slack", "channel", "channels", "tool", "tools", "value",
                "est", "estimated", "approx", "approximate", "maximum", "minimum", "max", "min", "of", "the", "per"}


def line_label(line: str) -> str | None:
    """The label `line` opens with, when it names what the line is about; else None."""
    row = _TABLE_ROW.match(line)
    found = row or _LABEL.match(line)
    if found is None:
        return None
    label = found.group(2 if row else 1).strip(" *_\"'")
    words = label.split()
    if not words or len(words) > MAX_LABEL_WORDS or words[0].casefold() in _NOT_A_SUBJECT or _SHOUTED.fullmatch(label):
        return None
    if (a_role_or_an_office(label) or a_placeholder(label) or a_measure_for_a_name(label, None)
            or re.fullmatch(VALUE_KINDS["when"], label)
            or all(w in _FIELD_WORDS or re.fullmatch(TIME_UNIT, w) for w in label.casefold().split())):
        return None
    return label
