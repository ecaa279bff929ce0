"""How a page is cut into the statements a model reads one at a time."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")


def prose_units(body: str) -> list[str]:
    """A markdown page as short, self-contained statements: paragraph sentences; list items and table rows
    with the heading they sit under (a table row also with its column names); a FAQ's question with its
    answer. Templated pages are plain sentences and pass through as such."""
    units: list[str] = []
    heading = ""
    header: list[str] | None = None
    question = ""
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            header = None if header is not None and not line else header
            continue
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            header = None
            question = heading if heading.endswith("?") else ""
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue  # the |---|---| line
            if header is None:
                header = cells
                continue
            pairs = "; ".join(f"{h}: {c}" for h, c in zip(header, cells) if c)
            units.append(f"{heading}: {pairs}." if heading else f"{pairs}.")
            continue
        header = None
        qa = re.match(r"(?i)^(?:\*\*)?q(?:uestion)?[:.]\s*(.+)$", line)
        if qa:
            question = qa.group(1).strip("* ")
            continue
        answer = re.match(r"(?i)^(?:\*\*)?a(?:nswer)?[:.]\s*(.+)$", line)
        item = re.match(r"^(?:[-*+]|\d+[.)])\s+(.+)$", line)
        if answer or (question and not item):
            text = (answer.group(1) if answer else line).strip("* ")
            units.append(f"{question} {text}" if question else text)
            question = ""
            continue
        if item:
            units.append(f"{heading}: {item.group(1).strip()}" if heading else item.group(1).strip())
            continue
        units.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return [u for u in units if u]
