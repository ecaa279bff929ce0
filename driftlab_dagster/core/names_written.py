"""How a statement writes a part: as a proper name ("C2", "Google Hangouts", "use Lever to") or as plain words
("conference call", "Our applicant tracking system" after a colon). Capitals say it only where a sentence would
not put them, so where sentences start is part of the reading: after a full stop that ends no abbreviation
("e.g." does not), a colon, a line's start."""

from __future__ import annotations

import re

from .values import FUNCTION_WORDS


def _whole_words(part: str) -> re.Pattern[str]:
    """`part` where it is written as a whole word or words, in any case: "Slack" is not found in "Slackbot"."""
    return re.compile(rf"(?<!\w){re.escape(part)}(?!\w)", re.IGNORECASE)


def _marked(word: str) -> bool:
    return any(c.isdigit() or c.isupper() for c in word)


def _at_sentence_starts(part: str, sentence: str) -> bool | None:
    """Whether every place the statement writes `part` (a whole word or words, in any case) starts a sentence or
    a line's text (after a colon); None when it is not written."""
    starts = []
    for found in _whole_words(part).finditer(sentence):
        before = sentence[:found.start()].rstrip()
        starts.append(not before or before[-1] in ":;!?\n"
                      or before[-1] == "." and not re.search(r"(?:\b\w\.\w|\b(?:etc|vs|approx|incl))\.$", before))
    return all(starts) if starts else None


def written_as_a_name(part: str, sentence: str) -> bool:
    """Whether the statement writes `part` wholly as a proper name: every word but a function word ("of",
    "the") with a capital or a digit ("C2", "Google Hangouts", "Office of Acquisition"); a single word only with a
    digit or a capital inside it ("GitHub"), or capitalised where no sentence starts ("use Lever to"). "FOIA
    requests" and "18F budgets" are descriptions of things, not names."""
    words = [w for w in part.split() if w.casefold() not in FUNCTION_WORDS]
    if not words or not all(_marked(w) for w in words):
        return False
    if len(words) > 1 or any(c.isdigit() for c in words[0]) or _marked(words[0][1:]):
        return True
    return _at_sentence_starts(part, sentence) is False


def written_as_a_description(part: str, sentence: str) -> bool:
    """Whether the statement writes `part` as plain words: no digit, no capital but a first word's first
    letter where a sentence starts ("conference call"; "Our applicant tracking system" after "Lever:")."""
    words = part.split()
    if not words or any(_marked(w) for w in words[1:]) or _marked(words[0][1:]):
        return False
    return not words[0][:1].isupper() or _at_sentence_starts(words[0], sentence) is True


MAX_WORDS_BETWEEN = 3  # "C2, our purchase request tool", "use Google Hangouts to conference call", "Lever: Our ..."


def written_together(name: str, description: str, sentence: str) -> bool:
    """Whether the statement writes the description right after the name, as what the name is or is for (an
    apposition, "to" and a purpose, a label and a colon): at most MAX_WORDS_BETWEEN words between. "SSLMate through
    ##acquisition, via an approved purchase request" does not say SSLMate is the purchase request tool."""
    described = _whole_words(description)
    for found in _whole_words(name).finditer(sentence):
        after = sentence[found.end():]
        at = described.search(after)
        if at is not None and len(re.findall(r"\w+", after[:at.start()])) <= MAX_WORDS_BETWEEN:
            return True
    return False
