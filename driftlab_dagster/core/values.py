"""Values as real text writes them, and the one normalisation the graph and the scorer share.

A value kind is the shape a relation's part takes; grounding (grounding.py) keeps the longest part of a
model's answer that the statement writes and the kind allows. The kinds cover what handbooks write:
decimal money, thousands separators and ranges ("$1,000", "$50.43", "$48,000 to $56,000"), durations in
digits or words, plain or hyphenated, single or a range ("30 days", "six weeks", "a 30-day window",
"5-7 business days", "three to six months"), percentages, names with dots, digits or capitals inside
("Node.js", "3M", "login.gov"), e-mail addresses, URLs, chat channels ("#tts-jobs"), and lists of people
("Ana Pérez, Bo Li and Cy Ode"). Every pattern is a single repetition of a character class per part, so
none can backtrack catastrophically (see world/shapes.py).

`normalise` is how two spellings of a value are compared, exactly:

1. case folded; typographic dashes and quotes made plain; white space collapsed;
2. currency signs ($, €, £), "%" and the word "percent", and the "#" that marks a channel or tag dropped;
3. thousands separators dropped inside numbers ("1,000" -> "1000");
4. number words from zero to ninety-nine written as digits ("six" -> "6", "twenty-five" -> "25");
5. a hyphen between a number and a unit word dropped ("30-day" -> "30 day"), and the time units made
   singular ("days" -> "day", "hours" -> "hour");
6. a time of day on the hour written one way ("3:00 pm", "3 p.m." -> "3pm");
7. a final full stop dropped.

So "$1,000" = "1000", "six weeks" = "6 week", "a 30-day window" contains "30 day", "15%" = "15". The graph
compares values in this form (two pages saying "$1,000" and "$1000" agree); the scorer asks whether the
normalised expected value is a whole phrase of the normalised answer.
"""

from __future__ import annotations

import re
from typing import Literal

ValueKind = Literal["name", "person", "people", "number", "money", "duration", "percentage", "email", "url", "channel",
                    "phrase"]

_NUMBER_WORD = ("zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety")
TIME_UNIT = r"(?:minute|hour|day|week|month|year)s?"
_UNIT = TIME_UNIT

# The shapes of a relation's parts. Each is matched against a span the statement writes (fullmatch).
VALUE_KINDS: dict[str, str] = {
    "name": r"[A-Za-z0-9][\w&'’.+/ -]*",
    "person": r"[A-Z][\w'’. -]*",
    "people": r"[A-Z][\w'’., -]*",
    "number": r"\d[\d,.]*",
    "money": r"[$€£]?\d[\d,.]*(?: ?(?:to|-|–) ?[$€£]?\d[\d,.]*)?",
    "duration": rf"(?:\d[\d,.]*(?: ?(?:to|-|–) ?\d[\d,.]*)?|(?:{_NUMBER_WORD}) to (?:{_NUMBER_WORD})"
                rf"|{_NUMBER_WORD}|an?)[ -](?:business |working |calendar )?{_UNIT}",
    "percentage": r"\d[\d.]*(?: ?%| percent)?",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    # A chat channel as Slack names one: lower-case letters, digits, "-", "_" and ".", with or without its "#".
    "channel": r"#?[a-z0-9][a-z0-9._-]*",
    "url": r"(?:https?://)?[\w-]+(?:\.[\w-]+)+(?:/[\w./%?=&#~+-]*)?",
    "phrase": r".+",
}

_WORDS = {w: str(n) for n, w in enumerate(_NUMBER_WORD.split("|")[:21])}
_WORDS.update({w: str(20 + 10 * i) for i, w in enumerate(_NUMBER_WORD.split("|")[21:], start=1)})
_WORD_RE = re.compile(rf"\b({_NUMBER_WORD})\b")
_COMPOUND = re.compile(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](one|two|three|four|five|six|"
                       r"seven|eight|nine)\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_HYPHEN_UNIT = re.compile(rf"(?<=\d)-(?={_UNIT}\b)")
_PLURAL_UNIT = re.compile(r"\b(minute|hour|day|week|month|year)s\b")
_CLOCK = re.compile(r"\b(\d{1,2})(?::00)?\s*([ap])\.?m\b\.?")
_PLAIN = str.maketrans({"–": "-", "—": "-", "‑": "-", "’": "'", "‘": "'", "“": '"', "”": '"'})


def normalise(text: str) -> str:
    """The comparable form of a value or an answer (the rules in the module docstring)."""
    out = " ".join(text.translate(_PLAIN).casefold().split())
    out = out.replace("$", "").replace("€", "").replace("£", "").replace("%", "")
    out = re.sub(r"(?<![\w#])#(?=\w)", "", out)  # a channel's or a tag's marker: "#travel" = "travel"
    out = re.sub(r"\bpercent\b", "", out)
    out = _THOUSANDS.sub("", out)
    out = _COMPOUND.sub(lambda m: str(int(_WORDS[m.group(1)]) + int(_WORDS[m.group(2)])), out)
    out = _WORD_RE.sub(lambda m: _WORDS[m.group(1)], out)
    out = _HYPHEN_UNIT.sub(" ", out)
    out = _PLURAL_UNIT.sub(r"\1", out)
    out = _CLOCK.sub(r"\1\2m", out)
    return " ".join(out.split()).rstrip(".").strip()


def states(answer: str | None, value: str) -> bool:
    """Whether an answer states the value: its normalised form is a whole phrase of the answer's."""
    if answer is None:
        return False
    wanted = normalise(value)
    return re.search(rf"(^|\W){re.escape(wanted)}($|\W)", normalise(answer)) is not None


_NAME_FILLER = {"a", "an", "the", "of", "for", "and", "to", "in", "on", "at", "by", "with", "per", "our", "your"}


def name_words(name: str) -> frozenset[str]:
    """A name's content words, case folded and singular ("Billable hours" -> {billable, hour}): what is left
    of a name when wording varies ("billable hour expectations", "hours billed")."""
    words = re.findall(r"[a-z0-9@.#-]+", name.casefold())
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                     for w in words if w not in _NAME_FILLER)


def names_match(asked: str, written: str) -> bool:
    """Whether a name as written holds every content word of the name as asked (a page's "18F billable hour
    expectations" answers a question about "Billable hours")."""
    wanted = name_words(asked)
    return bool(wanted) and wanted <= name_words(written)
