"""Which measure a number in a statement is, as the statement writes it: a model asked for an amount or a
percentage often answers with a number the statement writes as a duration ("12" from "up to 12 weeks of
leave"), and one asked for a duration takes the unit of a rate or a frequency ("a month" from "$130 a
month", "a week" from "meets once a week"). Both are rules about how text writes measures, not about one
handbook: a number directly followed by a unit of time is a length of time, and "a month" after an amount
or after "once" says how often, not how long.
"""

from __future__ import annotations

import re

from .values import TIME_UNIT, VALUE_KINDS

# The kinds a bare number can be given as (the sign is optional in their shapes).
_SIGNED_KINDS = {VALUE_KINDS["money"], VALUE_KINDS["percentage"]}
_DURATION = VALUE_KINDS["duration"]
_AFTER_A_NUMBER = re.compile(rf"[ -](?:business |working |calendar )?{TIME_UNIT}\b", re.IGNORECASE)
# What makes "a month" a rate or a frequency: an amount right before it, or "once", "twice", "N times".
_RATE_OR_FREQUENCY = re.compile(r"(?:[$€£]\d[\d,.]*|\bonce|\btwice|\btimes)\s*$", re.IGNORECASE)
_ONE_UNIT = re.compile(rf"an? {TIME_UNIT}", re.IGNORECASE)


def _occurrences(value: str, statement: str) -> list[re.Match[str]]:
    """Where the statement writes `value` as a whole number (not inside a longer one)."""
    return list(re.finditer(rf"(?<![\w.,-]){re.escape(value)}(?![.,]?\d)(?!\w)", statement, re.IGNORECASE))


def another_measure(value: str, shape: str | None, statement: str) -> bool:
    """Whether a value given for an amount or a percentage (a bare number, no sign) is, wherever the
    statement writes it, a length of time ("104" in "up to 104 hours"), or one given for a duration is the
    unit of a rate or a frequency ("a month" in "$130 a month", "a week" in "once a week")."""
    if shape in _SIGNED_KINDS and re.fullmatch(r"\d[\d,.]*(?: ?(?:to|-|–) ?\d[\d,.]*)?", value):
        found = _occurrences(value, statement)
        return bool(found) and all(_AFTER_A_NUMBER.match(statement, m.end()) for m in found)
    if shape == _DURATION and _ONE_UNIT.fullmatch(value):
        found = _occurrences(value, statement)
        return bool(found) and all(_RATE_OR_FREQUENCY.search(statement[:m.start()]) for m in found)
    return False
