"""The model-backed reader: one hop's evidence, cut to what bears on it, and a local model's answer.

Staleness is recorded apart three ways: the model's own end marker, hedge phrases in its answer text, and
code's reasons to doubt (sources that disagree, no graph fact, a page changed after extraction), which are
shown to the model as one more line of evidence and hedge its answer whatever it says, because a small
model never hedges itself. A reply that cannot be read is an abstention with its reason, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .call_cache import CachedClient
from .clients import ModelCallFailed
from .grounding import cues_of, speaks_of_any
from .ontology import Ontology, split_sentences
from .prompts import DEFAULT_READER_PROMPT, READER_PROMPTS, model_reader_id
from .readers import Evidence, HopAnswer
from .replies import parse_plain_answer, validate_plain_answer
from .units import Unit, sentence_units

MAX_EVIDENCE_CHARS = 900  # one page's share of a prompt a small model reads well (and fits its context)
_HEDGE_PHRASES = re.compile(r"\b(might|may) be (out ?dated|stale)|not sure|as of|possibly outdated|conflict",
                            re.IGNORECASE)


def focus_on(units: list[str], entity: str, cues: tuple[str, ...], limit: int = MAX_EVIDENCE_CHARS) -> str:
    """The first statement (a page's title) and only the statements that bear on one hop: those naming the
    entity and using the relation's cues, else those naming the entity, else those using the relation's
    cues (a relation about the company names no entity). A page with none of them is reduced to its title."""
    if not units:
        return ""
    name = entity.casefold().strip()
    names = [bool(name) and name in u.casefold() for u in units]
    speaks = [speaks_of_any(u, cues) for u in units]
    tiers = ([i for i in range(len(units)) if names[i] and speaks[i]], [i for i in range(len(units)) if names[i]],
             [i for i in range(len(units)) if speaks[i]])
    chosen = next((tier for tier in tiers if tier), [])
    return _keep(units, [0, *chosen], limit)


def _keep(units: list[str], order: list[int], limit: int) -> str:
    """Units taken in `order` while they fit in `limit` characters, written back in page order."""
    keep: list[int] = []
    for i in order:
        if i not in keep and sum(len(units[j]) + 1 for j in keep) + len(units[i]) <= limit:
            keep.append(i)
    return " ".join(units[i] for i in sorted(keep))


def evidence_block(evidence: list[Evidence], versioned: bool, entity: str, cues: tuple[str, ...],
                   units: Callable[[str, str], list[Unit]] = sentence_units) -> str:
    """One line per evidence item, each cut to the statements on the hop; dated for the versioned design. A
    page is read with `units` (the world's own reading: its title, then each statement with its heading);
    a graph fact is its own sentence."""
    lines = []
    for e in evidence:
        tag = ""
        if versioned:
            dated = "undated" if e.date.year < 1900 else f"dated {e.date:%Y-%m-%d}"
            extracted = f", extracted {e.extracted_at:%Y-%m-%d}" if e.extracted_at else ""
            changed = ", changed since the graph last read it" if e.page_ahead_of_graph else ""
            tag = f"[{'graph' if e.from_graph else 'page'} {e.source}, {dated}{extracted}{changed}] "
        statements = ([e.page.title] + [u.statement() for u in units(e.page.body, e.page.title)]
                      if e.page is not None else split_sentences(e.text))
        lines.append(f"- {tag}{focus_on(statements, entity, cues)}")
    return "\n".join(lines)


class ModelReader:
    """Asks a local model for one hop's answer, as plain text, from evidence cut to the statements on the
    hop: no grammar to sample under, a reply of a few tokens, and a page edit elsewhere on the page leaves
    the prompt, and so its cached reply, unchanged."""

    ANSWER_TOKENS = 24  # a name, a number, or "unknown", and the marker
    takes_signals = True  # the versioned design hands it code's reasons to doubt (designs.Agent.read_hop)

    def __init__(self, ontology: Ontology, client: CachedClient, reader_id: str | None = None,
                 version: str = DEFAULT_READER_PROMPT, units: Callable[[str, str], list[Unit]] = sentence_units):
        if version not in READER_PROMPTS:
            raise ValueError(f"unknown reader prompt {version!r}: use one of {', '.join(READER_PROMPTS)}")
        self.ontology, self.client, self.version = ontology, client, version
        self.naive_prompt, self.versioned_prompt = READER_PROMPTS[version]
        self.id = reader_id or model_reader_id(client.model, version)
        self.units = units  # how a page reads: the world's text_units

    def read(self, entity: str, predicate: str, evidence: list[Evidence], versioned: bool,
             signals: list[str] | None = None, asked: str = "") -> HopAnswer:
        if not evidence:
            # Given nothing, small models invent numbers; "not in the graph" is an answer in itself.
            return HopAnswer(None, False, "no evidence")
        checks = f"\nChecks by code: {'; '.join(signals)}." if signals else ""
        cues = cues_of(self.ontology[predicate])
        user = (f"Evidence:\n{evidence_block(evidence, versioned, entity, cues, self.units)}{checks}\n\n"
                f"Question: {self.ontology[predicate].sub_question(entity, asked)}")
        try:
            reply = self.client.chat_json(self.versioned_prompt if versioned else self.naive_prompt, user, None,
                                          self.ANSWER_TOKENS, validate=validate_plain_answer)
        except ModelCallFailed as e:
            return HopAnswer(None, False, f"model call failed: {e}")
        answer, flagged, problem = parse_plain_answer(reply.content)
        if answer is None:
            return HopAnswer(None, False, problem)
        phrase = bool(_HEDGE_PHRASES.search(answer))
        doubt = bool(signals)
        why = "; ".join(([f"code: {', '.join(signals)}"] if signals else []) + (["model flagged"] if flagged else []))
        if not answer or "unknown" in answer.lower():
            return HopAnswer(None, flagged or phrase or doubt, "; ".join(filter(None, ["model said unknown", why])),
                             flagged=flagged, phrase=phrase)
        return HopAnswer(answer, flagged or phrase or doubt, why, flagged=flagged, phrase=phrase)
