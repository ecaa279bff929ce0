"""Keeping a model's triples honest, routing statements to relations, and the values of a list.

- `ground`: a triple is kept only when its subject is written in the statement it came from or in the
  statement's section (its page title and headings: real handbooks name the subject there) and its object
  in the statement itself (a heading names what a section is about, not the value it states), trimmed
  to the span the predicate's shape allows ("€49 per user per month" -> "49" for a number, "the Helix
  team" -> "Helix" for a one-word name), with an adjacent currency sign or percent sign kept as written. A
  part is read whole, never as a piece of a longer number, hyphened word or address ("$3" is not written
  in "$3,500"), and as the measure the statement makes it (measures.py: "12" in "12 weeks" is no amount).
  A fixed-subject predicate gets its fixed subject. Where the model took the subject from a heading, a
  line that opens with a label ("Tolls: receipts over $25 ...") is about its label; a person the model
  wrote into the subject too ("OSC liaison Drew Jack") leaves it.
- `relations_to_ask`: the relations a statement (with its own section: the extractor passes the page
  title, the statement's own heading and its lead-in, never the chapters between) uses a cue of and could
  state (a value of the relation's object kind is written in it). A cue is a word (its inflections match:
  "costs" finds "cost", "approves" finds "approved"; "form" never finds "formerly"; a lone function word
  such as "in" is no cue), a phrase (its words in order) or a symbol (`$`, `%`, `@`); URLs are not read
  for cues. Cues only add relations, so declaring one more can never make a relation less likely to be asked.
- `enumeration`: the other values of the list a kept value is written in ("#dev, #g-frontend, and #infra"): a
  reply names one value, the statement states them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .line_labels import line_label
from .measures import (
    a_label,
    a_measure_for_a_name,
    a_placeholder,
    a_role_or_an_office,
    another_measure,
    the_only_value,
)
from .names_written import written_as_a_description, written_as_a_name, written_together
from .ontology import Predicate, Triple
from .values import EMPTY_WORDS, FUNCTION_WORDS, VALUE_KINDS, written_whole

# Named in every model extractor's id (its code version): a change to what grounding keeps from the same
# replies changes the facts, so a graph built under older rules shows as stale. Bump it with such a change,
# and with a change to how pages are cut into units (units.py) or to a value kind (values.py).
GROUNDING_VERSION = ("lists-narrow-values-inflected-cues-ss-object-in-unit-own-section-no-measure-names-trimmed-names"
                     "-whole-values-duration-ranges-measures-by-unit-channels-no-function-word-cues-magnitudes-unit-qualifiers-persons-by-name-the-only-person"
                     "-an-before-vowels-hyphened-qualifiers-ampersand-words-table-group-rows-plain-titles-no-kind-words-no-stand-ins"
                     "-labels-no-measure-roles-give-way-persons-out-of-subjects-heading-subjects-shares-no-amounts-a-lines-label-no-field-labels-rows-first-cell-no-markers-years-no-amounts-caveats-spaced-ranges-words-and-digits-own-heading-subjects-no-section-subjects-values-as-subjects-heading-word-runs-one-written-whole-names-turned-back-as-examples-show-written-together-initials-in-brackets")

# Words: letters, digits and the joints inside them ("real-time", "99.95", "O'Neil").
_TOKEN = re.compile(r"\w+(?:[.,'’-]\w+)*")
# "An" is the article before a vowel or a lower-case word ("an hour", "An Office"), not before a capitalised
# consonant: "An Li" is a given name and a surname.
_LEADING_ARTICLE = re.compile(r"^(?:[Tt]he|[Aa]|[Aa]n(?=\s+(?:[AEIOUaeiou]|[a-z])))\s+")
MAX_SPAN_TOKENS = 12


def _spans(value: str) -> Iterator[str]:
    """Contiguous runs of the value's words, longest first, then left to right."""
    tokens = list(_TOKEN.finditer(value))[:40]
    for length in range(min(len(tokens), MAX_SPAN_TOKENS), 0, -1):
        for i in range(len(tokens) - length + 1):
            yield value[tokens[i].start():tokens[i + length - 1].end()]


def normalise(value: str, shape: str | None, sentence: str) -> str | None:
    """The longest part of `value` that the sentence states and the shape allows, or None. A currency sign
    right before it or a percent sign right after it is kept when the shape allows it ("$1,000", "15%"), and
    so is a channel's "#" ("#tts-jobs"); a part the shape allows only with its sign ("2.5 million" of
    "$2.5 million") is kept with it."""
    value = _LEADING_ARTICLE.sub("", value.strip().strip("\"'`").rstrip(".,;:"))
    for span in _spans(value):
        for found in written_whole(span, sentence):  # "Talent: ... #talent": the casing the shape takes
            written, widened = found.group(0), _with_signs(found, shape)
            if shape is None or re.fullmatch(shape, written) or widened != written:
                return widened
    return None


def _with_signs(found: re.Match[str], shape: str | None) -> str:
    """What `found` matched, with the currency sign (or a channel's "#") the sentence puts right before it and
    the percent sign right after it, when the shape takes them."""
    sentence, (start, end) = found.string, found.span()
    before = sentence[start - 1] if start and sentence[start - 1] in "$€£#" else ""
    after = "%" if sentence[end:end + 1] == "%" else ""
    written = found.group(0)
    widened = before + written + after
    return widened if widened != written and (shape is None or re.fullmatch(shape, widened)) else written


def _neighbours(predicate: Predicate, role: str) -> tuple[str, str]:
    """The words the relation's wording puts right before and right after a part ("runs" and "day" around
    the subject of 'The {object} squad runs {subject} day to day.')."""
    template = predicate.sentence
    at = template.find("{" + role + "}")
    if at < 0 or predicate.open:
        return "", ""
    before = re.findall(r"[A-Za-z0-9]+", re.sub(r"\{\w+\}", " ", template[:at]))
    after = re.findall(r"[A-Za-z0-9]+", re.sub(r"\{\w+\}", " ", template[at + len(role) + 2:]))
    return (before[-1] if before else ""), (after[0] if after else "")


def fit_to_wording(value: str, sentence: str, before: str, after: str, shape: str | None) -> str:
    """A part as the relation's wording bounds it in the sentence: without the wording's own neighbour
    words ("clinics fill slots" -> "fill slots" after "clinics"), and stretched over words the model left
    out up to them ("Insurance-check" -> "Insurance-check service" before "day"). Keeps `value` otherwise."""
    written = written_whole(value, sentence)
    if not written:
        return value
    found = written[0]
    start, end = found.span()
    if before and sentence[start:end].casefold().startswith(before.casefold() + " "):
        start += len(before) + 1
    if after and sentence[start:end].casefold().endswith(" " + after.casefold()):
        end -= len(after) + 1
    if after and not re.match(rf"\W*{re.escape(after)}(?!\w)", sentence[end:], re.IGNORECASE):
        # stretch right over plain words up to the wording's next word
        gap = re.match(rf"((?:[\s-]+[\w-]+){{1,3}}?)\s+{re.escape(after)}(?!\w)", sentence[end:], re.IGNORECASE)
        if gap and (shape is None or re.fullmatch(shape, sentence[start:end + len(gap.group(1))])):
            end += len(gap.group(1))
    if before and not re.search(rf"(?<!\w){re.escape(before)}\W*$", sentence[:start], re.IGNORECASE):
        # and left over plain words back to the wording's previous word
        gap = re.search(rf"(?<!\w){re.escape(before)}\s+((?:[\w-]+[\s-]+){{1,3}}?)$", sentence[:start], re.IGNORECASE)
        if gap and (shape is None or re.fullmatch(shape, sentence[start - len(gap.group(1)):end])):
            start -= len(gap.group(1))
    fitted = sentence[start:end].strip()
    return fitted if fitted and (shape is None or re.fullmatch(shape, fitted)) else value


def cue_words(predicate: Predicate) -> set[str]:
    """The words a sentence about this relation uses: the ontology's query words and the relation's name
    ("refund_days" -> refund, days), without function words unless that is all the query has ("is our")."""
    words = set(re.findall(r"[a-z0-9]+", f"{predicate.query} {predicate.name.replace('_', ' ')}".lower()))
    content = words - FUNCTION_WORDS
    return content if content - set(predicate.name.split("_")) else words


def cues_of(predicate: Predicate) -> tuple[str, ...]:
    """The relation's cues: the ones it declares (words, phrases, symbols), else the words of its query and
    its name (`cue_words`). A declared cue that is a lone function word ("in", "for") is no cue: nearly every
    statement writes one, so it would ask the relation of every statement (in a phrase, "in Concur", it
    counts)."""
    telling = tuple(c for c in predicate.cues if c.strip().lower() not in FUNCTION_WORDS)
    return telling or tuple(sorted(cue_words(predicate)))


_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


# Inflections a cue word may be written with: "review" is used by "reviews", "reviewed", "reviewing".
_INFLECTIONS = ("ing", "ed", "es", "s", "e", "d")


def _stem(word: str) -> str:
    """The word without one inflection ending and a doubled last consonant ("submitted" -> "submit",
    "approves" and "approved" -> "approv"); never shorter than three letters. A final "ss" is the word's
    own ("pass", "access"), not a plural: "pass" stays "pass", as "passes" and "passed" become."""
    for ending in _INFLECTIONS:
        if ending == "s" and word.endswith("ss"):
            continue
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[:-len(ending)]
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def _word_hit(word: str, words: list[str]) -> bool:
    """A cue word is used when a word of the text is it or an inflection of the same word ("reviews" finds
    "reviewed"). Not a mere shared start: "form" is not "formerly", "in" is not "information"."""
    stem = _stem(word)
    return any(w == word or _stem(w) == stem for w in words)


def _cue_hit(cue: str, text: str, words: list[str]) -> bool:
    cue = cue.strip().lower()
    if not cue:
        return False
    if not re.search(r"[a-z0-9]", cue):  # a symbol: "$", "%", "@"
        return cue in text
    parts = re.findall(r"[a-z0-9]+", cue)
    if len(parts) == 1:
        return _word_hit(parts[0], words)
    # A phrase: its words in order, the last one possibly inflected ("paid parental leave" finds "leaves",
    # but "of your time" does not find "of your timesheet").
    pattern = (r"(?<![a-z0-9])" + r"\W+".join(re.escape(p) for p in parts)
               + r"(?:" + "|".join(_INFLECTIONS) + r")?(?![a-z0-9])")
    return re.search(pattern, text) is not None


def _cue_text(text: str) -> tuple[str, list[str]]:
    plain = _URL.sub(" ", text).lower()
    return plain, re.findall(r"[a-z0-9]+", plain)


def speaks_of_any(sentence: str, cues: tuple[str, ...] | set[str]) -> bool:
    """Whether a text uses any of these cues (URLs are not read)."""
    text, words = _cue_text(sentence)
    return any(_cue_hit(c, text, words) for c in cues)


def speaks_of(sentence: str, predicate: Predicate) -> bool:
    """Whether a text uses any of the relation's cues: a statement that does not cannot state it."""
    return speaks_of_any(sentence, cues_of(predicate))


def relations_to_ask(statement: str, predicates: list[Predicate], context: str = "") -> list[Predicate]:
    """The relations worth asking a model about, in the ontology's order: each whose cues the statement or
    its section uses and whose object the statement could hold (a value of its kind is written in it: a
    statement of an amount writes an amount, one of an e-mail address an address). Cues only add: declaring
    one more can never take a relation off the list."""
    text, words = _cue_text(f"{context}\n{statement}" if context else statement)
    return [p for p in predicates if re.search(p.object_pattern, statement) is not None
            and any(_cue_hit(c, text, words) for c in cues_of(p))]


def _subject_first(predicate: Predicate) -> bool | None:
    """Whether the relation's own wording names the subject before the object (None: no telling)."""
    template = predicate.sentence
    if predicate.open or "{subject}" not in template or "{object}" not in template:
        return None  # an open relation's wording is prose's own: it says nothing about order
    return template.index("{subject}") < template.index("{object}")


def ground(triple: Triple, predicate: Predicate, sentence: str, context: str = "") -> Triple | None:
    """The triple as the statement supports it, or None when it does not state it: the statement (with its
    section, `context`) must speak of the relation (one of its cues), write the subject in the statement or
    its section and the object in the statement. A pair the model turned around ("Canopy ships with Gapfinder"
    from "Gapfinder ships with the Canopy tier") is put back in the order the relation's wording gives."""
    if not speaks_of(f"{context}\n{sentence}" if context else sentence, predicate):
        return None
    if predicate.fixed_subject is not None:
        obj = _part(triple.object, predicate, "object", sentence, context)
        return Triple(predicate.fixed_subject, predicate.name, obj) if obj is not None else None
    subject_raw, object_raw = triple.subject, triple.object
    subject_found, object_found = (normalise(v, None, sentence) for v in (subject_raw, object_raw))
    first = _subject_first(predicate)
    if first is not None and subject_found and object_found:
        at = [sentence.casefold().find(v.casefold()) for v in (subject_found, object_found)]
        if at[0] != at[1] and (at[0] < at[1]) != first:
            subject_raw, object_raw = object_raw, subject_raw
    elif (first is None and subject_found and object_found
          and written_as_a_name(subject_found, sentence) and written_as_a_description(object_found, sentence)
          and written_together(subject_found, object_found, sentence) and _names_its_value(predicate)):
        subject_raw, object_raw = object_raw, subject_raw  # "C2, our purchase request tool": C2 is the tool
    obj = _part(object_raw, predicate, "object", sentence)
    subject = _part(subject_raw if obj is None else _without_the_person(subject_raw, obj, predicate), predicate,
                    "subject", sentence, context)
    if subject is not None and obj is not None and predicate.open and normalise(subject, None, sentence) is None:
        subject = _the_label(sentence, obj, predicate) or subject
    if subject is None or obj is None or overlap(subject, obj):
        return None
    return Triple(subject, predicate.name, obj)


def _the_label(sentence: str, obj: str, predicate: Predicate) -> str | None:
    """The label a line opens with (line_labels.py), for a subject the model took from a heading, when it fits
    the relation's subject and is neither the value nor the relation's own words ("Email: ...")."""
    label = line_label(sentence)
    if label is None or not _names_something(label) or overlap(label, obj) or names_the_kind(label, predicate):
        return None
    return label if re.fullmatch(predicate.subject_pattern or ".+", label) else None


def _without_the_person(subject: str, obj: str, predicate: Predicate) -> str:
    """A subject the model wrote with the person beside it, as the statement does ("our OSC liaison Drew Jack":
    subject "OSC liaison Drew Jack", value "Drew Jack") is the role before or after the name ("OSC liaison");
    any other subject that holds the value is left for `overlap` to refuse: it states nothing of two things."""
    if predicate.object_pattern != _PERSON:
        return subject
    words, value = [w.strip(",;:") for w in subject.split()], obj.split()
    for rest in (words[:-len(value)] if words[-len(value):] == value else None,
                 words[len(value):] if words[:len(value)] == value else None):
        if rest and rest[0].casefold() not in EMPTY_WORDS and rest[-1].casefold() not in EMPTY_WORDS:
            return " ".join(rest)
    return subject


def _part(value: str, predicate: Predicate, role: str, sentence: str, context: str = "") -> str | None:
    """The part as the statement writes it, else (a subject) as its section does: a heading names the
    subject, never the value ("## Onboarding overview" is not where a Slack channel is). None when what is
    left names nothing (only words such as "for", "use", "you")."""
    shape = predicate.subject_pattern if role == "subject" else predicate.object_pattern
    found = normalise(value, shape, sentence)
    if found is not None:
        found = fit_to_wording(found, sentence, *_neighbours(predicate, role), shape)
    if context and role == "subject" and (found is None or not _names_something(found)):
        # "and" is all of "Assignments and Detailing to and from TTS" the statement writes: its heading holds it
        found = normalise(value, shape, context) or found
    if role == "object" and found is not None and (another_measure(found, shape, sentence)
                                                   or a_label(found, shape, sentence)
                                                   or shape == _PERSON and (a_role_or_an_office(found)
                                                                            or a_placeholder(found))):
        # "5" of "Level 5 summary ratings", "Acting Director" for a person: not the value, which may still be
        # the one such value the statement writes ("Up to 2.5% of adjusted basic pay", "Acting Director: Will Slack")
        found = None
    if found is None and role == "object" and value.strip():
        found = the_only_value(shape, sentence)
    if found is not None and role == "object" and (a_measure_for_a_name(found, shape)
                                                   or another_measure(found, shape, sentence)
                                                   or not _a_channel_as_written(value, found, shape, sentence)):
        return None
    if found is not None and role == "object" and shape in _NAME_SHAPES:
        found = _name_without_the_sentence_around_it(found, shape, sentence)
    if found is not None and shape == _PERSON and (a_role_or_an_office(found) or a_placeholder(found)):
        return None
    if found is not None and role == "object" and shape in _KIND_NAMED and names_the_kind(found, predicate):
        return None
    return found if found is not None and _names_something(found) else None


_NAME_SHAPES = {VALUE_KINDS[kind] for kind in ("name", "person", "people")}
_CHANNEL = VALUE_KINDS["channel"]
_NAME = VALUE_KINDS["name"]
_PERSON = VALUE_KINDS["person"]
_KIND_NAMED = _NAME_SHAPES | {_CHANNEL, VALUE_KINDS["phrase"]}  # the kinds a plain word can fit


def names_the_kind(value: str, predicate: Predicate) -> bool:
    """Whether a value is only its relation's own words, of its name and cues ("tool" or "system" as the tool
    used, "Slack channel" as the channel): the kind of thing the value is, not which one. Only for the kinds
    a plain word fits: a measure's unit ("a month") is its value's own word."""
    words = [w for w in re.findall(r"[a-z0-9]+", value.casefold()) if w not in EMPTY_WORDS]
    kind = sorted({w for text in (*predicate.cues, predicate.name.replace("_", " "))
                   for w in re.findall(r"[a-z0-9]+", text.casefold())} - FUNCTION_WORDS)
    return bool(words) and all(_word_hit(w, kind) for w in words)


def _a_channel_as_written(reply: str, found: str, shape: str | None, sentence: str) -> bool:
    """A chat channel is what the statement marks as one ("#tts-jobs"), or, where it marks none ("Find us on
    Slack: tts-acqdiv"), the one word the reply gave: a reply of several words ("Federal record", "DM
    channel with yourself") is no channel because one of its words fits the shape."""
    if shape != _CHANNEL:
        return True
    marked = {m.casefold() for m in re.findall(r"(?<![\w#])#([a-z0-9][a-z0-9._-]*[a-z0-9])", sentence, re.IGNORECASE)}
    if marked:
        return found.lstrip("#").casefold() in marked
    return len(reply.split()) == 1


def _name_without_the_sentence_around_it(value: str, shape: str, sentence: str) -> str | None:
    """A name (of a tool, an office, a person, a channel) never starts or ends with a word that names nothing:
    "and personnel OGC" is "personnel OGC", "is your one-stop-shop" is "one-stop-shop". The model's span took
    in the sentence around the name. Only the open world's name kinds: a templated world's shapes say what
    they accept."""
    words = value.split()
    while words and words[0] in EMPTY_WORDS:
        words.pop(0)
    while words and words[-1] in EMPTY_WORDS:
        words.pop()
    return normalise(" ".join(words), shape, sentence) if words else None


def _names_something(part: str) -> bool:
    return any(w not in EMPTY_WORDS for w in re.findall(r"\w+", part.casefold()))


def overlap(subject: str, obj: str) -> bool:
    """Whether the two parts are one span, or one holds the other ("GSA Staff Directory" inside "Find their
    phone numbers by searching the GSA Staff Directory"): then the pair states nothing about two things. A
    channel or handle named after its subject ("#talent" of Talent) is a thing of its own."""
    if obj[:1] in "#@" and subject[:1] not in "#@":
        return False
    def words(part: str) -> str:
        return " " + " ".join(re.findall(r"\w+", part.casefold())) + " "

    a, b = words(subject), words(obj)
    return a in b or b in a


# ---------------------------------------------------------------------------------------------------------
# Lists: one reply names one value; "find us in #dev, #g-frontend, and #g-devops" states three.

# Between two items of a list: a comma or semicolon (with "and"/"or" after it or not), or a bare "and"/"or".
_JOINT = r"(?:\s*[,;]\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+)"
_LIST_END = re.compile(r"[,;:()\[\]]|\s(?:and|or)\s", re.IGNORECASE)  # where an item cannot go on
_CONNECTORS = {"of", "the", "for", "de", "&"}  # words inside a name of capitalised words ("Office of Acquisition")
MAX_ITEM_WORDS = 6


def _lead(text: str) -> str:
    """What a value starts with, as a class: its sign ("#", "@", "$"...), a digit, a capital or a small letter."""
    first = text[:1]
    return "9" if first.isdigit() else "A" if first.isupper() else "a" if first.isalpha() else first


def _item_fits(item: str, shape: str | None, lead: str) -> bool:
    words = item.split()
    if not words or _lead(item) != lead or len(words) > MAX_ITEM_WORDS:
        return False
    if shape is not None and not re.fullmatch(shape, item.lstrip("#@")):
        return False
    if lead == "A":  # a name of capitalised words, with small joining words inside only
        return all(_lead(w) in "A9" or (w.casefold() in _CONNECTORS and 0 < i < len(words) - 1)
                   for i, w in enumerate(words))
    return True


def _next_item(text: str, shape: str | None, lead: str) -> str:
    """The longest start of `text` that is one item of the list (empty when there is none)."""
    stop = _LIST_END.search(text)
    bounded = text[:stop.start()] if stop else text
    ends = [m.end() for m in re.finditer(r"\S+", bounded)][:MAX_ITEM_WORDS]
    for end in reversed(ends):
        item = bounded[:end].rstrip(".!?")
        if _item_fits(item, shape, lead):
            return item
    return ""


def _previous_item(text: str, shape: str | None, lead: str) -> str:
    """The longest end of `text` that is one item of the list (empty when there is none)."""
    stops = list(_LIST_END.finditer(text))
    bounded = text[stops[-1].end():] if stops else text
    starts = [m.start() for m in re.finditer(r"\S+", bounded)][-MAX_ITEM_WORDS:]
    for start in starts:
        if _item_fits(bounded[start:], shape, lead):
            return bounded[start:]
    return ""


def enumeration(value: str, shape: str | None, statement: str) -> list[str]:
    """Every value of the list `value` is written in, in the statement's order, each as `normalise` keeps it:
    the items on either side joined by commas, semicolons, "and" or "or" that fit the same shape and look
    like `value` (the same sign, or a digit, or capitalised words). `[value]` when it is not in a list, or
    when the shape itself takes a list (a list of people is one value)."""
    if shape is not None and re.fullmatch(shape, "Ana, Bo"):
        return [value]
    found = re.search(rf"(?<![\w#@$€£]){re.escape(value)}(?!\w)", statement, re.IGNORECASE)
    if found is None:
        found = re.search(rf"(?<!\w)[#@]{re.escape(value)}(?!\w)", statement, re.IGNORECASE)
    if found is None:
        return [value]
    start, end = found.span()
    if start and statement[start - 1] in "#@$€£":
        start -= 1  # the sign is part of what the items must look like
    lead = _lead(statement[start:end])
    raw = [statement[start:end]]
    while joint := re.match(_JOINT, statement[end:], re.IGNORECASE):
        item = _next_item(statement[end + joint.end():], shape, lead)
        if not item:
            break
        raw.append(item)
        end += joint.end() + len(item)
    while joint := re.search(_JOINT + "$", statement[:start], re.IGNORECASE):
        item = _previous_item(statement[:joint.start()], shape, lead)
        if not item:
            break
        raw.insert(0, item)
        start = joint.start() - len(item)
    if len(raw) == 1:
        return [value]
    longest_other = max(len(item.split()) for item in raw[1:])
    if not statement[:start].strip() and lead == "A" and len(raw[0].split()) > longest_other:
        # The statement's first word is capitalised whatever it is: "Ask Ana Ruiz, Bo Li" starts with a verb.
        raw[0] = raw[0].split(maxsplit=1)[1]
    kept = [normalise(item, shape, statement) for item in raw]
    return list(dict.fromkeys(k for k in kept if k is not None))


def _names_its_value(predicate: Predicate) -> bool:
    """Whether a relation's own worked examples describe the subject and name the value ("Expense reports are
    filed in Brisklane"; not "The Marlow Division was previously called the Office of Tessel", two names): only
    then is a reply with a name for the subject and a description for the value turned around. A relation
    without examples says nothing of it."""
    return (predicate.object_pattern == _NAME and bool(predicate.examples)
            and all(written_as_a_description(subject, sentence) and written_as_a_name(obj, sentence)
                    for sentence, subject, obj, _ in predicate.examples))
