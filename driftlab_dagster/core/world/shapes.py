"""Regex shapes that cannot backtrack catastrophically.

Python's `re` backtracks. A repetition whose body can match the same text in more than one way (another
repetition inside it, an alternation, a part of variable length) tries exponentially many splits of a
sentence that almost matches: '([A-Za-z]+ ?)+' on a 40-word line without a final period runs for hours.
A templated world's shapes are read with `re`'s own parser and such constructions are refused; what is
left is repetitions of fixed-width parts, which backtrack at most polynomially, and MAX_SENTENCE_CHARS
bounds that.

`re._parser` and `re._constants` are private, but they are the only parser that reads a pattern exactly
as `re` will; the project requires Python 3.11+, where they have these names.
"""

from __future__ import annotations

from re import _constants as _sre  # type: ignore[attr-defined]  # private: typeshed has no stubs for it
from re import _parser as _sre_parse  # type: ignore[attr-defined]  # private: typeshed has no stubs for it
from typing import Any

_REPEATS = {op for op in (getattr(_sre, name, None) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"))
            if op is not None}
_ATOMIC_GROUP = getattr(_sre, "ATOMIC_GROUP", None)  # (?>...), Python >= 3.11
_SINGLE_REPETITION = "write it as a single repetition of a character class such as '[A-Za-z ]+'"


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns directly inside one parsed regex item."""
    if op in _REPEATS:
        return [av[2]]
    if op is _sre.SUBPATTERN:
        return [av[-1]]
    if op is _sre.BRANCH:
        return list(av[1])
    if op is _ATOMIC_GROUP:
        return [av]
    return []


def _items(subpatterns: list[Any]) -> Any:
    """Every (op, av) item inside the given sub-patterns, at any depth (iterative: groups may nest)."""
    todo = list(subpatterns)
    while todo:
        for op, av in todo.pop():
            yield op, av
            todo.extend(_children(op, av))


def _repeated_body_problem(body: Any) -> str | None:
    """Why repeating `body` more than once can backtrack exponentially, or None."""
    for op, av in _items([body]):
        if op is _sre.BRANCH:
            return ("repeats an alternation, which can take exponential time on a long sentence when the "
                    "alternatives overlap; use a character class, such as '[ab]+' for '(a|b)+'")
        # A fixed count such as \d{3} is shorthand for writing the part out and adds no choice of split.
        if op in _REPEATS and av[1] > 1 and av[0] != av[1]:
            return ("nests a repetition inside a repetition, which can take exponential time on a long sentence; "
                    + _SINGLE_REPETITION)
    low, high = body.getwidth()
    if low == 0:
        return f"repeats a part that can match nothing, which makes the repetition ambiguous; {_SINGLE_REPETITION}"
    if low != high:  # e.g. '(a?a)+': "aa" is one repetition or two
        return ("repeats a part of variable length (an optional part inside a repetition), which can take "
                f"exponential time on a long sentence; {_SINGLE_REPETITION}")
    return None


def shape_problem(pattern: str) -> str | None:
    """Why `pattern` (which compiles) is not a safe shape, or None. The caller prefixes the pattern."""
    try:
        parsed = _sre_parse.parse(pattern)
    except RecursionError:
        return "nests groups too deeply; a shape is one simple regular expression"
    state = getattr(parsed, "state", None) or getattr(parsed, "pattern", None)  # renamed in Python 3.11
    if state is not None and state.groupdict:
        return ("names a group; the ontology names the subject and object groups itself, "
                "so write (?:...) instead of (?P<name>...)")
    if parsed.getwidth()[0] == 0:
        return ("matches the empty string, so a sentence could yield an empty subject or object; require at least "
                "one character, e.g. '+' instead of '*'")
    for op, av in _items([parsed]):
        if op in (_sre.GROUPREF, _sre.GROUPREF_EXISTS):
            return ("uses a backreference or a conditional group, which only backtracking can match; "
                    "spell the text out instead")
        if op in (_sre.ASSERT, _sre.ASSERT_NOT):
            return ("uses a lookahead or lookbehind; a shape describes the value itself, so drop the "
                    "(?=...), (?!...), (?<=...) or (?<!...)")
        if op in _REPEATS and av[1] > 1:
            problem = _repeated_body_problem(av[2])
            if problem:
                return problem
    return None

