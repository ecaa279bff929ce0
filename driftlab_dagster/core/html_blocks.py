"""The HTML a markdown page carries, read as a browser shows it.

Real handbooks put raw HTML in their markdown: tables pasted from a document editor (`<table><tr><td>`, the
header row's cells in `<strong>`), `<details>` blocks, `<br>` line breaks, comments that hide drafts. A
markdown parser hands such HTML over untouched, one block at a time, and a table's cells may even hold
markdown paragraphs between its blocks (a `<td>`, a blank line, a paragraph, a blank line, a `</td>`).
`HtmlReader` reads one page's blocks in order, keeping its place across them, and gives back statements:

- one `TableRow` per table row, its cells and the table's header row (a row of `<th>` cells, or of cells
  written wholly in bold), read as markdown tables' rows are (`row_statement`);
- one per stretch of text between block tags (a paragraph, a list item, a `<div>`, a `<br>`), outside
  tables;
- nothing for comments, scripts and styles, which a reader never sees.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser

_SPACES = re.compile(r"\s+")
# Tags that end a stretch of text: what follows them starts on a new line in a browser.
_BREAKS = frozenset({"address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt",
                     "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li",
                     "main", "nav", "ol", "p", "pre", "section", "summary", "ul"})
_HIDDEN = frozenset({"script", "style", "template"})
_BOLD = frozenset({"b", "strong"})


def row_statement(header: Sequence[str], row: Sequence[str]) -> str:
    """A table row as one statement: "Kind: Sick leave; Days: 10" under a header, else its cells joined."""
    return "; ".join(f"{h}: {c}" if h else c for h, c in zip(padded(header, len(row)), row) if c)


def padded(header: Sequence[str], columns: int) -> list[str]:
    """A header row with a "" for each column it does not name."""
    return list(header) + [""] * (columns - len(header))


@dataclass(frozen=True)
class TableRow:
    """One row of an HTML table: its cells, and the header row's ("" where a column has no name)."""

    header: tuple[str, ...]
    cells: tuple[str, ...]


class _Cell:
    def __init__(self, is_header: bool):
        self.is_header = is_header
        self.parts: list[str] = []
        self.bold_parts: list[str] = []  # the words written in bold: a cell all in bold heads its column

    @property
    def text(self) -> str:
        return _SPACES.sub(" ", "".join(self.parts)).strip()

    @property
    def looks_like_a_header(self) -> bool:
        text = self.text
        return self.is_header or (bool(text) and _SPACES.sub(" ", "".join(self.bold_parts)).strip() == text)


class HtmlReader(HTMLParser):
    """One page's HTML blocks, fed in order (`read`), as statements; `finish` at the end of the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._done: list[str | TableRow] = []  # a stretch of text, or a table's row
        self._loose: list[str] = []  # the text outside tables since the last break
        self._hidden = 0
        self._bold = 0
        self._tables = 0  # nesting depth: a table inside a cell reads as that cell's text
        self._header: list[str] | None = None  # the outer table's header row, once its first row decided it
        self._rows = 0
        self._row: list[_Cell] | None = None
        self._cell: _Cell | None = None

    # ----- what units.py asks -----
    def read(self, html: str) -> list[str | TableRow]:
        """Feed one HTML block; what it completed: table rows, and stretches of text outside tables (still to be
        cut into sentences). Text outside tables ends with its block."""
        self.feed(html)
        if not self._tables:
            self._flush_loose()
        return self._take()

    @property
    def inside_a_cell(self) -> bool:
        """Whether the page is inside a table cell: a markdown paragraph here is that cell's text."""
        return self._cell is not None

    def add_to_cell(self, text: str) -> None:
        if self._cell is not None:
            self._cell.parts.append(f" {text} ")

    def finish(self) -> list[str | TableRow]:
        """The page ended: whatever is still open (a table without its `</table>`) as statements."""
        self.close()
        if self._tables:
            self._end_row()
            self._end_table()
            self._tables = 0
        self._flush_loose()
        return self._take()

    # ----- the parser's callbacks -----
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden += 1
        elif tag in _BOLD:
            self._bold += 1
        elif tag == "table":
            self._tables += 1
            if self._tables == 1:
                self._flush_loose()
                self._header, self._rows = None, 0
        elif self._tables == 1 and tag == "tr":
            self._end_row()
            self._row = []
        elif self._tables == 1 and tag in ("td", "th"):
            if self._row is None:
                self._row = []
            self._end_cell()
            self._cell = _Cell(tag == "th")
        elif tag in _BREAKS or tag in ("tr", "td", "th"):
            self._text(" ")
            if not self._tables:
                self._flush_loose()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BREAKS:
            self._text(" ")
            if not self._tables:
                self._flush_loose()

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BOLD:
            self._bold = max(0, self._bold - 1)
        elif tag == "table" and self._tables:
            self._tables -= 1
            if not self._tables:
                self._end_row()
                self._end_table()
        elif self._tables == 1 and tag in ("td", "th"):
            self._end_cell()
        elif self._tables == 1 and tag == "tr":
            self._end_row()
        elif tag in _BREAKS:
            self._text(" ")
            if not self._tables:
                self._flush_loose()

    def handle_data(self, data: str) -> None:
        self._text(data)

    # ----- bookkeeping -----
    def _text(self, data: str) -> None:
        if self._hidden:
            return
        if self._cell is not None:
            self._cell.parts.append(data)
            if self._bold:
                self._cell.bold_parts.append(data)
        elif not self._tables:
            self._loose.append(data)

    def _end_cell(self) -> None:
        if self._cell is not None and self._row is not None:
            self._row.append(self._cell)
        self._cell = None

    def _end_row(self) -> None:
        self._end_cell()
        row, self._row = self._row, None
        if not row or not any(c.text for c in row):
            return
        cells = [c.text for c in row]
        if self._header is None and self._rows == 0 and all(c.looks_like_a_header for c in row if c.text):
            self._header = cells  # the first row heads the columns; it states nothing until a row follows
            return
        self._rows += 1
        self._done.append(TableRow(tuple(self._header or ()), tuple(cells)))

    def _end_table(self) -> None:
        if self._header and not self._rows:  # a table of one bold row: a row after all
            self._done.append(TableRow((), tuple(self._header)))
        self._header, self._rows = None, 0

    def _flush_loose(self) -> None:
        text = _SPACES.sub(" ", "".join(self._loose)).strip()
        self._loose = []
        if text:
            self._done.append(text)

    def _take(self) -> list[str | TableRow]:
        done, self._done = self._done, []
        return done
