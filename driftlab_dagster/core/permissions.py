"""Who may read what: the one rule, used wherever a page's or a fact's audience meets a caller.

A page (and every fact read from it) has one audience, `public` unless the world says otherwise; a caller
holds a set of audiences (a question's `caller:`). Public pages are everyone's: a caller reads them and the
pages of every audience it holds, and nothing else (docs/your-own-wiki.md: `caller: [staff]` reads public
and staff pages, never finance ones).
"""

from __future__ import annotations

PUBLIC = "public"  # the audience every caller holds, whether or not its `caller:` lists it


def may_read(caller: frozenset[str] | None, audience: str) -> bool:
    """Whether a caller holding `caller` may see what a page (or a fact from it) with `audience` says.
    None is no caller at all: no permissions in play (the study asked without them), everything readable."""
    return caller is None or audience == PUBLIC or audience in caller
