"""Model replies are read without trusting them: fixed cases for each way a reply goes wrong, and
generated replies (thousands per parser) that must never raise past the parser's boundary."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftlab_dagster.core.call_cache import check_reply
from driftlab_dagster.core.clients import ReplyInvalid, check_embeddings
from driftlab_dagster.core.grounding import ground, normalise
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.replies import (
    UnreadableReply,
    parse_answer,
    parse_relation,
    validate_answer_reply,
    validate_relation_reply,
)


@pytest.mark.parametrize("content, reason", [
    ("[" * 5000 + "]" * 5000, "reply nested more than 16 deep"),
    ("[1, 2]", "reply is not a JSON object"),
    ('{"facts": ' + "[" * 5000 + "]" * 5000 + "}", "reply nested more than 16 deep"),
    ('{"facts": [{"subject": "Pro", "predicate": "price", "object": ' + "9" * 5000 + "}]}",
     "a number with more than 30 digits"),
    ('{"facts": [{"subject": "Pro", "predicate": "price", "object": NaN}]}', "NaN is not JSON"),
    ('{"facts": [{"subject": "Pro"', "reply is not JSON"),
    ("<html><body>502 Bad Gateway</body></html>", "reply is not JSON"),
    ("", "reply is not JSON"),
    ('{"facts": "' + "x" * 40_000 + '"}', "reply of 40,013 characters"),
])
def test_a_hostile_reply_is_a_reason_never_an_exception(content, reason):
    assert parse_relation(content) == (False, "", "", reason)
    assert parse_answer(content) == (None, False, reason)
    with pytest.raises(UnreadableReply, match=reason):
        validate_relation_reply(content)


def test_fields_that_are_not_text_are_read_as_empty_or_as_numbers():
    content = json.dumps({"states": True, "subject": {"a": 1}, "object": 49})
    assert parse_relation(content) == (True, "", "49", "")
    assert parse_answer('{"answer": {"nested": true}, "possibly_stale": "yes"}') == ("", False, "")


@pytest.mark.parametrize("value, shape, sentence, expected", [
    ("€49 per user per month", r"\d+", "The Pro plan costs €49 per user per month.", "49"),
    ("the Helix team", r"[A-Z]\w+", "Tessaly Track is owned by the Helix team.", "Helix"),
    ("Pro plan", r"[A-Z]\w+", "The Pro plan costs €49 per user per month.", "Pro"),
    ("payments service", r"[A-Z][\w ]+?", "The Payments service is owned by the Atlas team.", "Payments service"),
    ("99.95", r"[\d.]+", "The Enterprise plan comes with a 99.95% uptime SLA.", "99.95"),
    ("two", r"\d+", "Annual billing gets two months free.", None),  # the shape wants digits
    ("Orion", r"[A-Z]\w+", "The Payments service is owned by the Atlas team.", None),  # not in the sentence
    ("Atlas", None, "Atlas sits on the third floor.", "Atlas"),  # no shape: grounding only
])
def test_a_value_is_kept_only_as_the_sentence_writes_it_and_the_shape_allows(value, shape, sentence, expected):
    assert normalise(value, shape, sentence) == expected


@pytest.mark.parametrize("value, sentence, before, after, expected", [
    ("Insurance-check", "The Lynx-9 squad runs Insurance-check service day to day.", "runs", "day",
     "Insurance-check service"),  # stretched over the word the model left out, up to the wording's next word
    ("Slotbook", "The Kestrel squad runs Slotbook day to day.", "runs", "day", "Slotbook"),  # already bounded
    ("clinics fill slots from a waitlist", "With Gapfinder, clinics fill slots from a waitlist.", "clinics", "",
     "fill slots from a waitlist"),  # without the wording's own word
])
def test_a_part_is_bounded_by_the_words_the_relations_wording_puts_around_it(value, sentence, before, after,
                                                                            expected):
    from driftlab_dagster.core.grounding import fit_to_wording

    assert fit_to_wording(value, sentence, before, after, None) == expected


def test_a_fixed_subject_predicate_takes_its_fixed_subject(world):
    sentence = "Customers can request a refund within 14 days of purchase."
    kept = ground(Triple("Customers", "refund_days", "14 days"), world.ontology["refund_days"], sentence)
    assert kept == Triple("Refund policy", "refund_days", "14")


def test_a_reply_is_checked_before_the_cache_keeps_it():
    check_reply('{"states": false}', validate_relation_reply)
    with pytest.raises(ReplyInvalid, match="reply of 40,000 characters"):
        check_reply("x" * 40_000, validate_relation_reply)
    with pytest.raises(ReplyInvalid, match="unusable reply: reply has no answer field"):
        check_reply('{"states": false}', validate_answer_reply)


# ---------------------------------------------------------------------------------------------------------
# Generated replies: JSON of any shape, JSON-looking text, and plain noise.

_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
            | st.text(max_size=30))
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.sampled_from(["states", "subject", "predicate", "object", "answer",
                                                        "possibly_stale", "x"]) | st.text(max_size=8),
                                       inner, max_size=4),
                     max_leaves=20)


@st.composite
def replies(draw) -> str:
    kind = draw(st.sampled_from(["json", "relation", "answer", "cut", "noise"]))
    if kind == "noise":
        return draw(st.text(max_size=300))
    if kind == "relation":
        value = draw(st.dictionaries(st.sampled_from(["states", "subject", "object"]),
                                     _scalars | st.sampled_from(["Pro", "49"])))
    elif kind == "answer":
        value = {"answer": draw(_scalars | _json), "possibly_stale": draw(_scalars)}
    else:
        value = draw(_json)
    text = json.dumps(value, allow_nan=True)
    if kind == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    return draw(st.sampled_from(["", "```json\n", "Sure: "])) + text


@given(replies())
def test_the_relation_parser_never_raises(content):
    states, subject, obj, reason = parse_relation(content)
    assert isinstance(states, bool) and isinstance(subject, str) and isinstance(obj, str) and isinstance(reason, str)


@given(replies())
def test_the_answer_parser_never_raises(content):
    answer, flagged, reason = parse_answer(content)
    assert answer is None or isinstance(answer, str)
    assert isinstance(flagged, bool) and isinstance(reason, str)


@given(replies())
def test_the_validators_raise_only_their_own_complaint(content):
    for validate in (validate_relation_reply, validate_answer_reply):
        try:
            validate(content)
        except UnreadableReply:
            pass


@given(st.text(max_size=80), st.text(max_size=200),
       st.sampled_from([None, r"\d+", r"[A-Z]\w+", r"[A-Z][\w ]+?", r"[^.]+"]))
def test_grounding_never_raises_and_only_returns_what_the_sentence_says(value, sentence, shape):
    found = normalise(value, shape, sentence)
    assert found is None or found.casefold() in sentence.casefold()


@given(_json, st.integers(0, 3))
def test_embeddings_are_used_only_when_they_are_vectors(vectors, count):
    try:
        out = check_embeddings(vectors, count)
    except ReplyInvalid:
        return
    assert len(out) == count and all(isinstance(x, float) for v in out for x in v)
