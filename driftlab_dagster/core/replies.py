"""Reading model replies without trusting them.

A reply is text from a server: it may be JSON, JSON inside a code fence, prose, HTML, 10 MB, nested 5,000
deep, or carry a 5,000-digit number. Every reader here works within caps and never raises past its
boundary: it returns what it could use and a reason for what it could not. The `validate_*` functions are
the strict form the call cache uses to decide whether a reply may be kept.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_REPLY_CHARS = 32_768  # a reply longer than this is not an answer or a relation's parts: refused, never cached
MAX_DEPTH = 16  # {"states": true, "subject": ...} is 1 deep
MAX_NUMBER_DIGITS = 30
MAX_FIELD_CHARS = 400  # one subject, object or answer


class UnreadableReply(ValueError):
    """Why a reply could not be used, in a few words."""


def _outermost_object(text: str) -> str:
    # Small models wrap JSON in code fences or add a sentence: keep the outermost object.
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else text


def _depth(text: str) -> int:
    """The deepest nesting of brackets outside strings, scanned without recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _small_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise UnreadableReply(f"a number with more than {MAX_NUMBER_DIGITS} digits")
    return int(text)


def _finite_float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS + 10:
        raise UnreadableReply("an overlong number")
    value = float(text)
    if not math.isfinite(value):
        raise UnreadableReply("a number that is not finite")
    return value


def _no_constants(name: str) -> Any:
    raise UnreadableReply(f"{name} is not JSON")


def read_json_object(content: Any) -> dict:
    """The reply's outermost JSON object, within the caps; raises UnreadableReply otherwise."""
    if not isinstance(content, str):
        raise UnreadableReply("reply is not text")
    if len(content) > MAX_REPLY_CHARS:
        raise UnreadableReply(f"reply of {len(content):,} characters")
    text = _outermost_object(content)
    if _depth(text) > MAX_DEPTH:
        raise UnreadableReply(f"reply nested more than {MAX_DEPTH} deep")
    try:
        data = json.loads(text, parse_int=_small_int, parse_float=_finite_float, parse_constant=_no_constants)
    except UnreadableReply:
        raise
    except (ValueError, RecursionError):
        raise UnreadableReply("reply is not JSON") from None
    if not isinstance(data, dict):
        raise UnreadableReply("reply is not a JSON object")
    return data


def _text(value: Any) -> str:
    """A field as text: strings and plain numbers only (a model may write 49 for "49")."""
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value.strip()[:MAX_FIELD_CHARS]
    return ""


# ---------------------------------------------------------------------------------------------------------
# Answers in JSON, {"answer": ..., "possibly_stale": true|false}: small models sometimes reply in that
# shape to a plain-text question


def validate_answer_reply(content: str) -> None:
    data = read_json_object(content)
    if "answer" not in data:
        raise UnreadableReply("reply has no answer field")


def parse_answer(content: Any) -> tuple[str | None, bool, str]:
    """(answer, possibly_stale, reason). The answer is None when the reply could not be used, and the
    reason says why. Never raises."""
    try:
        data = read_json_object(content)
    except UnreadableReply as e:
        return None, False, str(e)
    except Exception as e:  # noqa: BLE001 - the boundary: nothing in a reply may crash a run
        return None, False, f"unreadable reply ({type(e).__name__})"
    if "answer" not in data:
        return None, False, "reply has no answer field"
    return _text(data.get("answer")), data.get("possibly_stale") is True, ""


# ---------------------------------------------------------------------------------------------------------
# Plain answers (reader-v3): the answer alone, as text, maybe ending with a staleness marker.

STALE_MARKER = "(possibly outdated)"
_MARKER = re.compile(r"\(?\s*possibly\s+(?:outdated|stale)\s*\)?\s*\.?\s*$", re.IGNORECASE)


def validate_plain_answer(content: str) -> None:
    """A usable plain answer is one short line of printable text (a JSON object with an answer also
    passes: small models sometimes reply in the shape they were trained on)."""
    if not isinstance(content, str):
        raise UnreadableReply("reply is not text")
    text = content.strip()
    if not text:
        raise UnreadableReply("empty reply")
    if text.startswith("{"):
        validate_answer_reply(text)
        return
    first = text.splitlines()[0].strip()
    if len(first) > MAX_FIELD_CHARS:
        raise UnreadableReply(f"answer longer than {MAX_FIELD_CHARS} characters")
    if any(ord(ch) < 32 and ch != "\t" for ch in first):
        raise UnreadableReply("answer has control characters")


def parse_plain_answer(content: Any) -> tuple[str | None, bool, str]:
    """(answer, marked stale, reason) from a plain-text reply: its first line, without quotes, a final
    full stop or the staleness marker. None (with the reason) when the reply cannot be used. Never raises."""
    try:
        validate_plain_answer(content)
        text = content.strip()
        if text.startswith("{"):
            return parse_answer(text)
        line = text.splitlines()[0].strip()
        marked = _MARKER.search(line) is not None
        line = _MARKER.sub("", line).strip().strip("\"'`*").strip()
        return line.rstrip(".").strip()[:MAX_FIELD_CHARS], marked, ""
    except UnreadableReply as e:
        return None, False, str(e)
    except Exception as e:  # noqa: BLE001 - the boundary: nothing in a reply may crash a run
        return None, False, f"unreadable reply ({type(e).__name__})"


# ---------------------------------------------------------------------------------------------------------
# One-relation replies: {"states": true|false, "subject": ..., "object": ...}


def validate_relation_reply(content: str) -> None:
    data = read_json_object(content)
    if not isinstance(data.get("states"), bool):
        raise UnreadableReply("reply has no states flag")


def parse_relation(content: Any) -> tuple[bool, str, str, str]:
    """(states, subject, object, reason): whether the sentence states the relation, and its two parts.
    Never raises."""
    try:
        data = read_json_object(content)
    except UnreadableReply as e:
        return False, "", "", str(e)
    except Exception as e:  # noqa: BLE001 - the boundary: nothing in a reply may crash a run
        return False, "", "", f"unreadable reply ({type(e).__name__})"
    if not isinstance(data.get("states"), bool):
        return False, "", "", "reply has no states flag"
    return data["states"], _text(data.get("subject")), _text(data.get("object")), ""
