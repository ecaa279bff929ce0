"""Values as real text writes them, and the one normalisation the graph and the scorer share.

A value kind is the shape a relation's part takes; grounding (grounding.py) keeps the longest part of a
model's answer that the statement writes and the kind allows. The kinds cover what handbooks write:
decimal money, thousands separators, magnitudes and ranges ("$1,000", "$50.43", "$10k", "$2.5 million",
"$48,000 to $56,000"), durations in digits or words, plain or hyphenated, single or a range, with up to two
words between the number and its unit ("30 days", "six weeks", "a 30-day window", "a 7-calendar-day wait",
"5-7 business days", "three to six months", "between one and four years", "six telework days", "12
administrative workweeks"), percentages, names with dots, digits or capitals inside ("Node.js", "3M",
"login.gov"), a person's given name and surname ("Amber Van Amburg", never "Acting Director" or "GSA"), e-mail
addresses, URLs, chat channels ("#tts-jobs"), when something falls (a weekday, a time of day, a date:
"Fridays", "2:30 pm ET", "September 25th"), and lists of people ("Ana Pérez, Bo Li and Cy Ode"). Every
pattern is built of single repetitions of a character class per part, so none can backtrack catastrophically
(see world/shapes.py).

`normalise` is how two spellings of a value are compared, exactly:

1. case folded; typographic dashes and quotes made plain; white space collapsed;
2. currency signs ($, €, £), "%" and the word "percent", and the "#" that marks a channel or tag dropped;
3. thousands separators dropped inside numbers ("1,000" -> "1000"), an amount's magnitude written out
   ("$10k" -> "10000", "$2.5 million" -> "2500000") and its zero cents dropped ("$75.00" -> "75"); a
   range's dash between two numbers written without spaces ("$300 - $500" -> "300-500");
4. number words from zero to ninety-nine written as digits ("six" -> "6", "twenty-five" -> "25"), and a
   number written both ways once ("twelve (12) weeks" -> "12 week");
5. the hyphens between a number, up to two words and a unit word made spaces ("30-day" -> "30 day",
   "7-calendar-day" -> "7 calendar day"), and the time units made singular ("days" -> "day", "hours" ->
   "hour", "workweeks" -> "workweek");
6. a time of day on the hour written one way ("3:00 pm", "3 p.m." -> "3pm");
7. a final full stop dropped.

So "$1,000" = "1000" = "$1k", "six weeks" = "6 week", "a 30-day window" contains "30 day", "15%" = "15". The graph
compares values in this form (two pages saying "$1,000" and "$1000" agree); the scorer asks whether the
normalised expected value is a whole phrase of the normalised answer.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal
from typing import Literal

ValueKind = Literal["name", "person", "people", "number", "money", "duration", "percentage", "email", "url", "channel",
                    "when", "phrase"]

_NUMBER_WORD = ("zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety")
TIME_UNIT = r"(?:minute|hour|work ?day|day|work ?week|week|month|year)s?"
_UNIT = TIME_UNIT
# Up to two words between a number and its time unit ("10 business days", "six telework days", "240 annual
# leave hours"), never a word that starts a phrase of its own ("one of the days" is no duration); after digits
# hyphened too ("a 7-calendar-day waiting period"; "a full-day event" is no duration).
UNIT_QUALIFIERS = (r"(?:(?!(?:of|the|a|an|and|or|to|in|on|at|for|per|from|by|with|each|every)\b)[a-z]+ ){0,2}"
                   r"|(?<=\d-)(?:[a-z]+-){1,2}")
# An amount's magnitude, right after its digits ("$10k", "$5M", "$2.5 million").
_MAGNITUDE = r"(?:[kKMB]|bn| thousand| million| billion)"
# One word of a person's name: a capital, then letters with an apostrophe or a hyphen inside ("O'Neil",
# "Sanchez-Lowery"), or an initial ("K", "K."); never two capitals or more ("GSA", "TTS"), an article ("The
# Director", "An Engineer") or a digit. "An" is the article only before a vowel, as English writes it: "An Li"
# is a given name.
_NAME_WORD = r"(?![A-Z]{2,}\b|(?:The|A|This|That|Our|Your) |An (?=[AEIOU]))[A-Z](?:\.|[^\W\d_]*(?:['’-][^\W\d_]+)*)"
_PARTICLE = r"(?:van|von|de|der|den|da|di|del|la|le|du|bin|al)"
# When something falls: a weekday ("Fridays", "Tuesday's"), a time of day with its zone or not ("2:30 pm ET",
# "12:30 p.m. Eastern time", "9AM PST"), a date ("September 25th"), noon or midnight.
_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)(?:s|['’]s)?"
_TIME_OF_DAY = (r"\d{1,2}(?::\d\d)? ?[AaPp]\.?[Mm]\.?"
                r"(?: (?:[A-Z]{1,2}[SD]?T|Eastern|Pacific|Central|Mountain)(?: [Tt]ime)?)?")
_DATE = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
         r" \d{1,2}(?:st|nd|rd|th)?")
_AMOUNT = rf"(?:[$€£]\d[\d,.]*{_MAGNITUDE}?|\d[\d,.]*)"

# The shapes of a relation's parts. Each is matched against a span the statement writes (fullmatch).
VALUE_KINDS: dict[str, str] = {
    "name": r"[A-Za-z0-9][\w&'’.+/ -]*",
    # A person as a handbook names one: a given name and a surname (or more), each word capitalised but for
    # a particle ("van", "de"), no digits, no acronym ("GSA Press" is an office), "Shashank K" included.
    "person": rf"{_NAME_WORD}(?: (?:{_NAME_WORD}|{_PARTICLE}))*(?: {_NAME_WORD})",
    "people": r"[A-Z][\w'’., -]*",
    "number": r"\d[\d,.]*",
    "money": rf"{_AMOUNT}(?: ?(?:to|-|–) ?{_AMOUNT})?",
    "duration": rf"(?:between )?(?:\d[\d,.]*(?: ?(?:to|-|–) ?\d[\d,.]*| (?:and|or) \d[\d,.]*)?"
                rf"|(?:{_NUMBER_WORD}) (?:to|and|or) (?:{_NUMBER_WORD})|(?:{_NUMBER_WORD})(?: \(\d+\))?|an?)"
                rf"[ -](?:{UNIT_QUALIFIERS}){_UNIT}",
    "percentage": r"\d[\d.]*(?: ?%| percent)?",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    # A chat channel as Slack names one: lower-case letters, digits, "-", "_" and ".", with or without its "#".
    # ... with a letter somewhere: "#968" is a number ("Line #968"), not a channel.
    "channel": r"#?(?=[a-z0-9._-]*[a-z])[a-z0-9][a-z0-9._-]*",
    "url": r"(?:https?://)?[\w-]+(?:\.[\w-]+)+(?:/[\w./%?=&#~+-]*)?",
    "when": rf"{_WEEKDAY}|{_TIME_OF_DAY}|{_DATE}|[Nn]oon|[Mm]idnight",
    "phrase": r".+",
}

_WORDS = {w: str(n) for n, w in enumerate(_NUMBER_WORD.split("|")[:21])}
_WORDS.update({w: str(20 + 10 * i) for i, w in enumerate(_NUMBER_WORD.split("|")[21:], start=1)})
_WORD_RE = re.compile(rf"\b({_NUMBER_WORD})\b")
_COMPOUND = re.compile(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](one|two|three|four|five|six|"
                       r"seven|eight|nine)\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_WORD_AND_DIGITS = re.compile(r"\b(\d+) \(\1\)")  # "twelve (12)", once its word is a digit: one number
_SPACED_RANGE = re.compile(r"(?<=\d) - (?=\d)")
_SIGNED_MAGNITUDE = re.compile(r"([$€£])(\d[\d,]*(?:\.\d+)?) ?(k|m|b|bn|thousand|million|billion)\b")
_POWERS = {"k": 3, "thousand": 3, "m": 6, "million": 6, "b": 9, "bn": 9, "billion": 9}
_ZERO_CENTS = re.compile(r"([$€£]\d[\d,]*)\.00(?!\d)")
# The hyphens of a duration written as one word: "30-day", "7-calendar-day" (= "7 calendar days").
_HYPHEN_UNIT = re.compile(rf"(?<=\d)-((?:[a-z]+-){{0,2}})(?={_UNIT}\b)")
_PLURAL_UNIT = re.compile(r"\b(minute|hour|workday|day|workweek|week|month|year)s\b")
_CLOCK = re.compile(r"\b(\d{1,2})(?::00)?\s*([ap])\.?m\b\.?")
_PLAIN = str.maketrans({"–": "-", "—": "-", "‑": "-", "’": "'", "‘": "'", "“": '"', "”": '"'})


def normalise(text: str) -> str:
    """The comparable form of a value or an answer (the rules in the module docstring)."""
    out = " ".join(text.translate(_PLAIN).casefold().split())
    out = _ZERO_CENTS.sub(r"\1", _SIGNED_MAGNITUDE.sub(_written_out, out))  # while the currency sign says so
    out = out.replace("$", "").replace("€", "").replace("£", "").replace("%", "")
    out = re.sub(r"(?<![\w#])#(?=\w)", "", out)  # a channel's or a tag's marker: "#travel" = "travel"
    out = re.sub(r"\bpercent\b", "", out)
    out = _THOUSANDS.sub("", out)
    out = _SPACED_RANGE.sub("-", out)
    out = _COMPOUND.sub(lambda m: str(int(_WORDS[m.group(1)]) + int(_WORDS[m.group(2)])), out)
    out = _WORD_RE.sub(lambda m: _WORDS[m.group(1)], out)
    out = _WORD_AND_DIGITS.sub(r"\1", out)
    out = _HYPHEN_UNIT.sub(lambda m: " " + m.group(1).replace("-", " "), out)
    out = _PLURAL_UNIT.sub(r"\1", out)
    out = _CLOCK.sub(r"\1\2m", out)
    return " ".join(out.split()).rstrip(".").strip()


def _written_out(amount: re.Match[str]) -> str:
    """"$2.5 million" -> "$2500000": an amount's magnitude as digits."""
    number = Decimal(amount.group(2).replace(",", "")) * 10 ** _POWERS[amount.group(3)]
    return amount.group(1) + format(number.normalize(), "f")


def whole(pattern: str) -> str:
    """`pattern` found only where the text writes it as whole words: not a piece of a longer word, of a number
    ("3" in "$3,500", "75" in "75.50"), of a hyphened or dotted word ("tts" in "tts-travel", "Node" in
    "Node.js"), of a word joined by an ampersand ("Project Q" in "Project Q&A", "AT" in "AT&T") or of an e-mail
    address ("gsa.gov" in "desk@gsa.gov"). A possessive's "'s" and a full stop ending a sentence are outside a
    word. What grounding, the measure rules and the scorer all mean by a value written in a text."""
    return rf"(?<![\w@])(?<!\w[.,&-])(?:{pattern})(?![.,&-]?\w)(?!@)"


def written_whole(part: str, text: str) -> list[re.Match[str]]:
    """Every place `text` writes `part` as whole words (see `whole`), in any casing: what "the statement writes
    it" means to grounding, the measure rules and the extractor alike."""
    return list(re.finditer(whole(re.escape(part)), text, re.IGNORECASE))


def states(answer: str | None, value: str) -> bool:
    """Whether an answer states the value: its normalised form is written whole in the answer's."""
    if answer is None:
        return False
    return re.search(whole(re.escape(normalise(value))), normalise(answer)) is not None


# What a question asking when something falls asks for: "At what time ...?" a time of day, "On which weekday
# ...?" or "which day of the week" a weekday ("which day of the month" is neither); and in which zone, if it
# names one ("(Eastern)", "ET"). A value of another shape or zone cannot answer it, whatever its page says.
_ASKS_TIME = re.compile(r"\b(?:what|which) time\b(?! of (?:the )?(?:year|month|week)\b)", re.IGNORECASE)
_ASKS_WEEKDAY = re.compile(r"\b(?:what|which) (?:weekday|day of the week)\b", re.IGNORECASE)
_TIME_RE = re.compile(r"\b\d{1,2}(?::\d\d)? ?[AaPp]\.?[Mm]\b|\b(?:[Nn]oon|[Mm]idnight)\b")  # not "2 amendments"
_WEEKDAY_RE = re.compile(rf"\b{_WEEKDAY}")
_ZONE_RES = {zone: re.compile(rf"\b(?:{word}|{letter}[SD]?T)\b")
             for zone, word, letter in (("eastern", "[Ee]astern", "E"), ("pacific", "[Pp]acific", "P"),
                                        ("central", "[Cc]entral", "C"), ("mountain", "[Mm]ountain", "M"))}


def _zones(text: str) -> set[str]:
    return {zone for zone, found in _ZONE_RES.items() if found.search(text)}


def answers_when_asked(question: str, value: str) -> bool:
    """Whether `value` has the shape a question about when something falls asks for: a time of day for "At
    what time ...?" (in the zone the question names, where the value names one: "11:30am PT" does not answer
    "At what time (Eastern) ...?"), a weekday for "On which weekday ...?". True for any value of a question
    that asks neither."""
    if _ASKS_TIME.search(question):
        if not _TIME_RE.search(value):
            return False
        asked, written = _zones(question), _zones(value)
        return not (asked and written) or bool(asked & written)
    if _ASKS_WEEKDAY.search(question):
        return _WEEKDAY_RE.search(value) is not None
    return True


# Words that say little on their own, in four lists for four uses; kept together so that a word added to one
# is weighed for the others. A name's filler ("Office *of the* CTO": not what tells two names apart):
_NAME_FILLER = {"a", "an", "the", "of", "for", "and", "to", "in", "on", "at", "by", "with", "per", "our", "your"}
# Function words, which no cue and no content word is (grounding: cue words, what a value shares with a text):
FUNCTION_WORDS = {"a", "an", "the", "is", "are", "was", "be", "by", "in", "of", "for", "to", "with", "on", "at",
                  "and", "or", "our", "its", "per", "it", "as", "from"}
# Words that name nothing on their own: a part made of them only is a model's filler, not a subject or value.
EMPTY_WORDS = FUNCTION_WORDS | {"use", "used", "using", "you", "your", "we", "us", "they", "them", "their", "this",
                                "that", "these", "those", "there", "here", "if", "when", "can", "will", "may",
                                "should", "must", "do", "does", "not", "no", "yes", "all", "any", "each"}
# Words a question asks with, not about: they say nothing of which statement answers it (`telling_words`).
_ASKING_WORDS = _NAME_FILLER | {"how", "many", "much", "what", "which", "who", "whom", "whose", "when", "where",
                                "why", "is", "are", "was", "were", "do", "does", "did", "can", "could", "may",
                                "must", "should", "will", "would", "you", "we", "i", "it", "they", "be", "or",
                                "from", "into", "as", "if", "that", "this", "there"}


_HYPHENED_WORD = re.compile(r"[a-z]+(?:-[a-z]+)+")


def _name_word_list(name: str) -> list[str]:
    words = [w.rstrip(".-") for w in re.findall(r"[a-z0-9@.#-]+", name.casefold())]  # "level 5." is "level 5"
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in words if w not in _NAME_FILLER]


@functools.lru_cache(maxsize=65536)  # the linking path asks the same entity names once per question
def name_words(name: str) -> frozenset[str]:
    """A name's content words, case folded and singular ("Billable hours" -> {billable, hour}): what is left
    of a name when wording varies ("billable hour expectations", "hours billed")."""
    return frozenset(_name_word_list(name))


# A name written with its initials in brackets, either way round: "Flexible Spending Account (FSA)", "FSA
# (Flexible Spending Account)" (case folded).
_BRACKETED = re.compile(r"(.+?) \(([^()]+)\)")


def initialism(name: str) -> str | None:
    """The initials a name is written with in brackets, case folded ("Flexible Spending Account (FSA)" and "FSA
    (Flexible Spending Account)" -> "fsa"; "Research & Fidelity (RF)" -> "rf"), when the bracket or the words
    before it are exactly the other's initials (its filler words left out or not): one thing written two ways, as
    handbooks introduce an abbreviation. None for any other name ("Dental (75%)", "Tock (time tracking)")."""
    found = _BRACKETED.fullmatch(" ".join(name.split()).casefold()) if name.rstrip().endswith(")") else None
    if found is None:  # most names: no bracket, no regex (name_key asks this of every name written)
        return None
    for words, short in ((found.group(1), found.group(2)), (found.group(2), found.group(1))):
        short = short.replace("&", "").replace(".", "").replace(" ", "")
        parts = re.findall(r"[a-z0-9]+", words)
        if len(short) >= 2 and short.isalpha() and short in {"".join(w[0] for w in parts),
                                                           "".join(w[0] for w in parts if w not in _NAME_FILLER)}:
            return short
    return None


MIN_SHORTENED_WORD = 4  # "Tech" for "Technology", "Admin" for "Administration"; "Ops" is too short to tell


def _unhyphened(word: str) -> str:
    """A word of letters without its hyphens: a hyphen there does not tell two names apart ("Meet-ups" are the
    page's "Meetups", "e-mail" is "email"). Not between digits: "1-2" is a range, not "12"."""
    return word.replace("-", "") if _HYPHENED_WORD.fullmatch(word) else word


def _same_word(a: str, b: str) -> bool:
    """One word (a hyphen inside it aside), or one written short for the other: the shorter (4 letters or more,
    no hyphen: "Check-in" is not "Checking" written short) starts the longer."""
    short, long_ = sorted((a, b), key=len)
    return (a == b or ("-" in a or "-" in b) and _unhyphened(a) == _unhyphened(b)  # no regex for most pairs
            or len(short) >= MIN_SHORTENED_WORD and short.isalpha() and long_.startswith(short))


def names_match(asked: str, written: str) -> bool:
    """Whether a name as written holds every content word of the name as asked, in full or shortened (a
    page's "18F billable hour expectations" answers a question about "Billable hours", "TTS Technology
    Portfolio" one about "TTS Tech Portfolio")."""
    wanted, have = name_words(asked), name_words(written)
    if not wanted or wanted <= have:  # every word written in full: no need to try each pair
        return bool(wanted)
    return all(w in have or any(_same_word(w, h) for h in have) for w in wanted)


def names_closely(asked: str, written: str) -> bool:
    """Whether running text names the asked name as a phrase: every content word of it within a stretch of
    words no more than two longer than the name ("Level 5 summary ratings: up to 2.5%" names "Level 5 summary
    rating"; "a Level 3 summary rating ... rated at Level 4 or Level 5" does not)."""
    wanted, words = name_words(asked), _name_word_list(written)
    if not wanted:
        return False
    span = len(wanted) + 2
    return any(all(any(_same_word(w, h) for h in words[start:start + span]) for w in wanted)
               for start in range(max(1, len(words) - span + 1)))


def word_stem(word: str) -> str:
    """A word without the endings wording varies by ("carried" and "carry", "hours" and "hour"), folded."""
    word = word.casefold()
    for ending, instead in (("ied", "y"), ("ies", "y"), ("ing", ""), ("ed", ""), ("s", "")):
        if word.endswith(ending) and len(word) - len(ending) >= 3 and not word.endswith("ss"):
            word = word[: -len(ending)] + instead
            break
    # "disputes" and "disputed", "require" and "required": one stem without the e an ending may leave
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def telling_words(text: str) -> frozenset[str]:
    """The stems of what a question or a statement says, without the words one asks with ("how", "many",
    "can", "you"): what a question and the statement answering it share."""
    return frozenset(word_stem(w) for w in re.findall(r"[a-z0-9]+", text.casefold())
                     if len(w) > 1 and w not in _ASKING_WORDS)  # one letter: a "'s" or "n't", an enumerator
