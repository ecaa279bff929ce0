"""How a page is cut into the statements a model reads one at a time, as a person reads them.

Real handbooks name the subject in a heading, not in the sentence ("## Parking", then "We pay the whole
monthly pass."), hard-wrap their paragraphs, and put facts in lists under a lead-in ("Your options:") and
in tables whose meaning is in the header row. A markdown page is therefore parsed (markdown-it-py, the
CommonMark parser, with tables), never split on lines, into `Unit`s:

- one unit per sentence of a paragraph, the paragraph's hard-wrapped lines joined first; a paragraph that
  opens with a bold label ("**Pay period:** ...") has it as the `lead` of its later sentences, and a short
  bold line of its own ("**Budget**") leads the paragraphs below it until the next heading, a heading in all
  but markup;
- one unit per list item, with the paragraph that leads into the list (or the parent item, for a nested
  list) kept as its `lead`;
- one unit per table row, written as "column: cell" pairs from the header row; in a table of three columns or
  more, a row that fills only its first cell labels the rows below it (a group row) and is their lead; a row
  that writes paragraphs in its cells (a career framework's) keeps its short cells as one unit and reads each
  long cell sentence by sentence, led by the row's first cell and the cell's column;
- a FAQ's "Q: ... A: ..." paragraph as one unit; a question written as a paragraph of its own ("**Q. What if
  ...?**", or any question written wholly in bold) heads the answer paragraphs below it as a heading would;
- a sentence ends at a full stop, never one after an abbreviation, an initial or a title ("e.g.", "U.S.",
  "John J. Smith", "Dr.", "No. 5");
- raw HTML as a browser shows it (core/html_blocks.py): an HTML table's rows like a markdown table's, a
  `<br>` a break between words, comments never.

Every unit carries its heading `trail`: the page title (front matter `title:`, else the first `#` heading)
and the headings above it, outermost first. Markup is dropped (emphasis, links keep their text, a mailto
link its address); front matter and code blocks are not prose and yield no unit; a static-site template
tag (`{% ... %}`, `{{ ... }}`) reads as its quoted arguments, which a shortcode renders
(`{% slack_channel "tts-travel" %}`), but never a keyword's that sets how it renders (`style="info"`) nor a
file, URL or path, else as nothing. Nothing here is about one handbook: these are the
shapes markdown gives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .html_blocks import HtmlReader, TableRow, padded, row_statement
from .line_labels import line_label
from .values import VALUE_KINDS, whole

# Part of a corpus world's version: a change in how a page is read (its title, its units) is a new world to
# Dagster, so the pages and the graph read with the old rule show as stale.
READING_VERSION = ("html-tables-comments-breaks-plain-titles-abbreviations-faq-paragraphs-bold-label-leads-bold-lines"
                   "-index-titles-toml-mdx-wiki-links-enumerators-tag-arguments-markdown-in-html-bold-measures"
                   "-paragraph-cells")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")
# YAML front matter between "---" lines (Jekyll, most generators), or TOML between "+++" lines (Hugo).
_FRONT_MATTER = re.compile(r"\A(?:---[ \t]*\n(.*?\n)?(?:---|\.\.\.)|\+\+\+[ \t]*\n(.*?\n)?\+\+\+)[ \t]*(?:\n|\Z)",
                           re.DOTALL)
_FRONT_TITLE = re.compile(r"^title[ \t]*[:=][ \t]*(['\"]?)(.+?)\1[ \t]*$", re.MULTILINE)
# Lines that are a site generator's markup, never prose: an MDX page's imports and exports, a Docusaurus
# admonition's fences (":::note", ":::"). Dropped before the page is parsed.
_SITE_MARKUP_LINE = re.compile(r"^(?:(?:import|export)\s.*\bfrom\s+['\"].*|:::[\w ]*)[ \t]*$", re.MULTILINE)
# A wiki link, as Obsidian and wiki engines write one: "[[Parental leave]]", "[[leave|Parental leave]]".
_WIKI_LINK = re.compile(r"\[\[([^\[\]|]+)(?:\|([^\[\]]+))?\]\]")
_TEMPLATE_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}", re.DOTALL)
# A template tag's quoted arguments, each with its keyword if it has one: `"tts-travel"`, `style="info"`.
_TAG_ARGUMENT = re.compile(r"(?:(\w+)\s*[=:]\s*)?(?:\"([^\"]*)\"|'([^']*)')")  # Liquid writes `level:"info"`
# Keywords whose value a rendered tag shows as text (`caption="Our team"`); any other keyword's value is how the
# tag renders (`style="info"`, `url=...`, `class=...`), never words on the page.
_SHOWN_KEYWORDS = frozenset({"text", "title", "heading", "caption", "label", "content", "alt", "name", "summary"})
# A tag that is a link's destination ("[Travel 101]({% page "/travel-101/" %})"): never shown, the link's text is.
_TAG_AS_LINK_TARGET = re.compile(r"\]\(\s*(?:\{%.*?%\}|\{\{.*?\}\})\s*\)", re.DOTALL)
# An argument that names a file, a URL or a site path: what the tag renders, not its words.
_NOT_WORDS = re.compile(r"[^\s/]+\.(?:html?|md|markdown|png|jpe?g|gif|svg|pdf|ya?ml)|[a-z]+://\S*|/\S*")
_TAG = re.compile(r"<[^>]+>")
_QA = re.compile(r"^(?:\*\*)?(?:Q|Question)[:.]\s*(.+?)\s+(?:\*\*)?(?:A|Answer)[:.]\s*(.+)$", re.IGNORECASE)
# A FAQ's question written as a paragraph of its own ("**Q. What if I am not sure?**"), its answer in the next
# ("A: One of the best ways..."): the question heads its answer as a heading would.
_QUESTION = re.compile(r"^(?:Q|Question)\s*[:.]\s+(\S.*)$", re.IGNORECASE)
_ANSWER = re.compile(r"^(?:A|Answer)\s*[:.]\s+(?=\S)", re.IGNORECASE)
_ANSWER_ALONE = re.compile(r"(?:A|Answer)\s*[:.]?", re.IGNORECASE)
# What a paragraph may open with to number itself ("a. Evaluation stage", "(ii) Approval"): part of its sentence.
_ENUMERATOR = re.compile(r"[(\[]?(?:[A-Za-z]|\d{1,3}|[ivxIVX]{1,4})[.)]")
# The word before a full stop that ends no sentence: a dotted abbreviation ("e.g.", "i.e.", "U.S.", "p.m."), an
# initial ("John J. Smith", "Q."), a title ("Dr.", "Ms."). A sentence left joined to the next costs a reader
# little; one cut inside a name loses the name.
_ABBREVIATION = re.compile(r"[(\[\"“']*(?:(?:[A-Za-z]\.){2,}|[A-Z]\.|(?:Dr|Mr|Mrs|Ms|Mx|Prof|Sr|Jr|St|vs|cf|approx)\.)")
_NUMBER_ABBREVIATION = re.compile(r"[(\[]*(?:No|Nos|no)\.")  # "No. 5"; "No. Only you can" ends an answer
_LONGEST_ABBREVIATION = 12  # characters: "(U.S.C.", "approx.", "(iii)"
_FAQ_LEVEL = 7  # below every markdown heading: the next heading of any level ends the question's section
# What a heading never writes and a statement does: an amount, a share, a length of time, an address.
_A_MEASURE = re.compile(rf"[$€£]\s?\d|\d\s?%|\bpercent\b|{whole(VALUE_KINDS['duration'])}|{VALUE_KINDS['email']}",
                        re.IGNORECASE)
# A table row longer than this writes paragraphs, not values: its long cells are read sentence by sentence. A
# row of values ("Kind: Sick leave; Days: 10; Notes: ask your supervisor") is far shorter, and read whole.
_LONG_ROW = 300  # characters
_LONG_CELL = 150  # characters: in such a row, a cell longer than this is a paragraph; a shorter one a value
_MAX_ROW_NAME_WORDS = 12  # a row's first cell names the row ("Technical", "Restricted"); a longer one is prose
_MAX_BOLD_HEADING_WORDS = 8  # "**Step 2: Ensure the People Team is notified**"; a longer bold line is a statement
_SPACES = re.compile(r"\s+")
# A heading's anchor or attributes ("## Leave {#leave}", kramdown's "{: .class}"): markup a reader never sees.
_HEADING_ATTRIBUTES = re.compile(r"\s*\{[#:][^{}]*\}\s*$")
# Inline HTML that starts a new line in a browser ("one<br>two", a cell's "<p>"): a space between words.
_INLINE_BREAK = re.compile(r"<\s*/?\s*(?:br|p|div|li|hr)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Unit:
    """One statement of a page, with what a reader sees around it."""

    text: str  # the statement as the page writes it: hard wraps joined, markup dropped
    trail: tuple[str, ...] = ()  # the page title and the headings above the statement, outermost first
    # What leads into the statement below its headings: its list's lead-in ("Your options:"), a bold line of its
    # own above it ("Budget"), or the bold label its paragraph opens with ("Co-working space:"); or "".
    lead: str = ""

    @property
    def context(self) -> str:
        """The trail and the lead-in as one line: "Travel guide > Per diem | Your options:"."""
        trail = " > ".join(self.trail)
        return f"{trail} | {self.lead}" if trail and self.lead else trail or self.lead

    @property
    def own_section(self) -> str:
        """The statement's own section, as one line: the page title, the statement's own heading and the list's
        lead-in. Not the headings between: those are chapters ("## Extended leave options" above "### Paid
        Parental Leave"), and a word in a chapter's heading is not said by every statement under it."""
        headings = " > ".join(dict.fromkeys(self.trail[:1] + self.trail[-1:]))
        return f"{headings} | {self.lead}" if headings and self.lead else headings or self.lead

    def render(self) -> str:
        """What a model is shown of the unit: its section above it when it has one, else the statement alone
        (a templated page's sentence is shown exactly as before)."""
        return f"Section: {self.context}\nPassage: {self.text}" if self.context else self.text

    def statement(self) -> str:
        """The unit as one line of evidence: "Per diem: Lodging is paid at cost." (its last heading first)."""
        where = self.trail[-1] if len(self.trail) > 1 else ""
        lead = f"{self.lead} " if self.lead else ""
        return f"{where}: {lead}{self.text}" if where else f"{lead}{self.text}"


def sentence_units(body: str, title: str = "") -> list[Unit]:
    """A templated page: its sentences, one unit each, no trail (the sentence names its subject)."""
    from .ontology import split_sentences

    return [Unit(s) for s in split_sentences(body)]


def strip_front_matter(text: str) -> tuple[str, str]:
    """(the page without its YAML or TOML front matter, the front matter's `title` or "")."""
    found = _FRONT_MATTER.match(text)
    if not found:
        return text, ""
    title = _FRONT_TITLE.search(found.group(1) or found.group(2) or "")
    # A title is plain text to a reader: inline HTML ("Travel <em>before</em> onboarding") shows as its words.
    return text[found.end():], (_SPACES.sub(" ", _TAG.sub("", title.group(2))).strip() if title else "")


def page_title(path: str, text: str) -> str:
    """Front matter `title:`, else the first `#` heading as a reader sees it (its markup dropped, never a `#`
    line of a code block), else the file's name (its folder's, for a folder's index page)."""
    body, title = strip_front_matter(text)
    return title or _first_heading(body) or _file_title(PurePosixPath(path))


def _file_title(path: PurePosixPath) -> str:
    """A page's name from its file: "parental-leave.md" is "parental leave"; a folder's own page ("index.md",
    "README.md", "_index.md", as static-site generators name it) is named by its folder."""
    named = path.parent if path.stem.casefold() in ("index", "readme", "_index") and path.parent.name else path
    return named.stem.replace("-", " ").replace("_", " ").strip()


@lru_cache(maxsize=4096)
def _first_heading(body: str) -> str:
    tokens = _parser().parse(_prose_source(body))
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1":
            return _heading_text(tokens[i + 1])
    return ""


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def markdown_units(body: str, title: str = "") -> list[Unit]:
    """A markdown page as units (see the module docstring). `title` is the page's title; without one the
    front matter's or the first `#` heading is used."""
    return list(_markdown_units(body, title))


@lru_cache(maxsize=4096)
def _markdown_units(body: str, title: str) -> tuple[Unit, ...]:
    text, front_title = strip_front_matter(body)
    title = title or front_title
    tokens = _parser().parse(_prose_source(text))
    units: list[Unit] = []
    headings: list[tuple[int, str]] = []  # (level, text) of the headings above
    leads: list[str] = []  # per open list: its lead-in
    last_paragraph = ""  # the last sentence of the paragraph just before: a list's lead-in
    row_header: list[str] = []
    row: list[str] = []
    row_group = ""  # the label of a wide table's group row above ("| **Skill** | | |"), the rows' lead-in
    in_head = False
    depth_items: list[str] = []  # per open list item: its first paragraph's text (a nested list's lead-in)
    html = HtmlReader()  # the page's HTML blocks, read in order: a table may span several of them
    answer_due = False  # the paragraph just before was a FAQ's question on its own
    section_lead = ""  # a bold line of its own above ("**Budget**"), since the last heading

    def add_html(statements: list[str | TableRow]) -> None:
        for statement in statements:
            if isinstance(statement, TableRow):
                units.extend(_row_units(statement.header, statement.cells, trail(), "", _shown))
            else:
                units.extend(Unit(s, trail()) for s in _sentences(_shown(statement)))

    def trail() -> tuple[str, ...]:
        names = [h for _, h in headings]
        if title and (not names or names[0].casefold() != title.casefold()):
            names.insert(0, title)
        return tuple(n for n in names if n)

    i = 0
    while i < len(tokens):
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            level = int(token.tag[1])
            heading = _heading_text(tokens[i + 1])
            headings = [h for h in headings if h[0] < level] + [(level, heading)]
            last_paragraph = section_lead = ""
            i += 3
            continue
        if kind in ("bullet_list_open", "ordered_list_open"):
            lead = depth_items[-1] if depth_items else last_paragraph
            leads.append(lead)
            last_paragraph = ""
        elif kind in ("bullet_list_close", "ordered_list_close"):
            leads.pop()
            last_paragraph = ""
        elif kind == "list_item_open":
            depth_items.append("")
        elif kind == "list_item_close":
            depth_items.pop()
        elif kind == "paragraph_open":
            content = _inline_text(tokens[i + 1])
            if html.inside_a_cell:  # markdown between an HTML table's "<td>" and "</td>": that cell's text
                html.add_to_cell(content)
            elif depth_items:  # a list item's paragraph: one unit, the list's lead-in beside it
                if content:
                    units.append(Unit(content, trail(), leads[-1] if leads else ""))
                if not depth_items[-1]:
                    depth_items[-1] = content
            elif content and (question := _faq_question(tokens[i + 1], content)):
                headings = [h for h in headings if h[0] < _FAQ_LEVEL] + [(_FAQ_LEVEL, question)]
                last_paragraph, section_lead, answer_due = "", "", True
                i += 3
                continue
            elif content and _bold_line(tokens[i + 1], content):
                # "**Budget**" on a line of its own: a heading in all but its markup, which a document editor's
                # export or a quick edit writes. It leads the statements below it (a list's, as any line right
                # above a list does) until the next heading or such line.
                section_lead = last_paragraph = content
                answer_due = False
                i += 3
                continue
            elif content and answer_due and _ANSWER_ALONE.fullmatch(content):
                pass  # "A:" on a line of its own, the answer in the list below it: a marker, no statement
            elif content:
                if answer_due:  # the question above is this paragraph's heading; "A:" only marks it
                    content = _ANSWER.sub("", content, count=1)
                sentences = _sentences(content)
                # "**Pay period:** Everyone works 80 hours a pay period. Its dates are on the payroll calendar.":
                # the bold label the paragraph opens with is what its later sentences speak of, their lead-in.
                label = _bold_label(tokens[i + 1], content)
                units.extend(Unit(s, trail(), label if n and label else section_lead) for n, s in enumerate(sentences))
                last_paragraph = sentences[-1]  # what leads into a list is the sentence right above it
            answer_due = False
            i += 3
            continue
        elif kind == "html_block":
            add_html(html.read(token.content))
        elif kind == "thead_open":
            in_head, row_header, row_group = True, [], ""
        elif kind == "thead_close":
            in_head = False
        elif kind == "tr_open":
            row = []
        elif kind in ("th_open", "td_open"):
            row.append(_inline_text(tokens[i + 1]))
            i += 3
            continue
        elif kind == "tr_close":
            if in_head:
                row_header = row
            elif len(row) >= 3 and row[0] and not any(row[1:]):
                row_group = row[0]  # a group row of a wide table: it states nothing, it names the rows below
            elif any(row):
                units.extend(_row_units(row_header, row, trail(), row_group))
        i += 1
    add_html(html.finish())
    return tuple(units)


def _shown(raw: str) -> str:
    """Markdown written inside HTML ("<div>See the [guide](/guide).</div>") as a site that renders it (kramdown's
    markdown="1") shows it: the link's text."""
    return _inline_text(_parser().parseInline(raw)[0]) if "[" in raw or "*" in raw or "`" in raw else raw


def _row_units(header: Sequence[str], row: Sequence[str], trail: tuple[str, ...], group: str,
               shown: Callable[[str], str] = str) -> list[Unit]:
    """A table row as units: one statement of its "column: cell" pairs, led by its group row's label. A row
    that writes paragraphs in its cells (a career framework's "Skill | Level 1 | Level 2", a policy matrix's
    "Level | Impact | Handling") is longer than any statement: its short cells stay one statement with the
    row's first cell, and each long cell's sentences are units of their own, led by the row's first pair and
    the cell's column ("Category: Technical; Designer (L2):"), as a list's items are led by their lead-in.
    `shown` reads markdown written in an HTML table's cells."""
    statement = row_statement(header, row)
    name = row[0] if row else ""
    if len(statement) <= _LONG_ROW or len(row) < 2 or not name or len(name.split()) > _MAX_ROW_NAME_WORDS:
        return [Unit(shown(statement), trail, group)]
    columns = padded(header, len(row))
    short = [(column, cell) for column, cell in zip(columns, row) if len(cell) <= _LONG_CELL]
    units = ([Unit(shown(row_statement([c for c, _ in short], [v for _, v in short])), trail, group)]
             if len(short) > 1 else [])  # the first cell alone states nothing
    first = f"{columns[0]}: {name}" if columns[0] else name
    for column, cell in zip(columns[1:], row[1:]):
        if len(cell) > _LONG_CELL:
            lead = shown("; ".join(part for part in (group, first, f"{column}:" if column else "") if part))
            units += [Unit(sentence, trail, lead) for sentence in _sentences(shown(cell))]
    return units


def _prose_source(text: str) -> str:
    """A page's markdown with a site generator's markup read as a reader sees it: template tags as their quoted
    arguments, MDX imports and admonition fences gone."""
    return _SITE_MARKUP_LINE.sub("", _TEMPLATE_TAG.sub(_tag_text, _TAG_AS_LINK_TARGET.sub("](#)", text)))


def _tag_text(tag: re.Match[str]) -> str:
    """A static-site template tag as a reader sees it: its quoted arguments (a shortcode such as
    `{% slack_channel "tts-travel" %}` renders its argument) but for a keyword's that sets how it renders
    (`{% hint style="info" %}`) and a file, URL or site path (`{% include 'note.html' %}`); else nothing."""
    shown = [a or b for key, a, b in _TAG_ARGUMENT.findall(tag.group(0))
             if (not key or key.casefold() in _SHOWN_KEYWORDS) and not _NOT_WORDS.fullmatch(a or b)]
    return " ".join(shown) or " "


def _inline_parts(token: Token) -> list[Token]:
    """A paragraph's inline tokens but the blank text between them (a space between two bold spans)."""
    return [c for c in token.children or [] if not (c.type == "text" and not c.content.strip())]


def _bold_only(token: Token) -> bool:
    """Whether a paragraph is one bold span and nothing else ("**Budget**")."""
    children = _inline_parts(token)
    return (len(children) >= 3 and children[0].type == "strong_open" and children[-1].type == "strong_close"
            and sum(c.type == "strong_open" for c in children) == 1)


def _bold_line(token: Token, content: str) -> bool:
    """A short bold line that ends no sentence ("**Budget**"): a heading in all but markup. One that ends with a
    colon ("**Otherwise:**", "**US teammates:**") leads what comes right after it, as any such line does; one
    that writes a measure or an address ("**Average time to process a detail: 2.5-3 months**") states it."""
    return (len(content.split()) <= _MAX_BOLD_HEADING_WORDS and not content.endswith((".", "!", ":"))
            and not _A_MEASURE.search(content) and _bold_only(token))


def _faq_question(token: Token, content: str) -> str:
    """A FAQ's question in a paragraph of its own, without its answer: "Q. What if ...?", or a question written
    wholly in bold ("**How do I claim a taxi?**"); else ""."""
    if _QA.match(content):
        return ""
    question = _QUESTION.match(content)
    if question:
        return question.group(1)
    return content if content.endswith("?") and _bold_only(token) else ""


def _bold_label(token: Token, content: str) -> str:
    """The label a paragraph opens with in bold ("**Pay period:** ...", "**Pay period**: ..."), with its colon,
    when it names what the paragraph is about (line_labels: never "Note:", a role or a field) and is the
    paragraph's only bold label (lines of "**Type:** ... **Purpose:** ..." each say their own); else ""."""
    children = _inline_parts(token)
    labels: list[str] = []  # the paragraph's bold spans that end with a colon or are followed by one
    for k, child in enumerate(children):
        if child.type != "strong_open":
            continue
        closing = next((j for j in range(k + 1, len(children)) if children[j].type == "strong_close"), len(children))
        bold = "".join(c.content for c in children[k + 1:closing]).strip()
        after = children[closing + 1].content if closing + 1 < len(children) else ""
        if bold.endswith(":") or after.startswith(":"):
            labels.append(bold.rstrip(":").strip())
    if len(labels) != 1 or not children or children[0].type != "strong_open":
        return ""
    label = line_label(content)
    return f"{label}:" if label and labels[0].casefold() == label.casefold() else ""


def _heading_text(token: Token) -> str:
    return _HEADING_ATTRIBUTES.sub("", _inline_text(token))


def _sentences(paragraph: str) -> list[str]:
    qa = _QA.match(paragraph)
    if qa:  # a FAQ's question and its answer, one statement
        return [f"{qa.group(1).strip('* ')} {qa.group(2).strip('* ')}"]
    sentences, start = [], 0
    for end in _SENTENCE_END.finditer(paragraph):
        # The word before the full stop, looked for in a short window: abbreviations and numbers are short, and a
        # search back to the sentence's start would read a long run of them ("A. B. C. ...") again and again.
        since = max(start, end.start() - _LONGEST_ABBREVIATION)
        window = paragraph[since:end.start()].split()
        cut = since > start and not paragraph[since - 1].isspace() and len(window) == 1  # a longer word's tail
        word = window[-1] if window and not cut else ""
        if end.start() - start <= _LONGEST_ABBREVIATION and _ENUMERATOR.fullmatch(paragraph[start:end.start()].strip()):
            continue
        if word and (_ABBREVIATION.fullmatch(word) or (
                _NUMBER_ABBREVIATION.fullmatch(word) and paragraph[end.end():end.end() + 1].isdigit())):
            continue
        sentences.append(paragraph[start:end.start()])
        start = end.end()
    sentences.append(paragraph[start:])
    return [s.strip() for s in sentences if s.strip()]


def _inline_text(token: Token) -> str:
    """An inline token's text as a reader sees it: markup dropped, soft and hard breaks as spaces, a link's
    text (and a mail link's address when the text does not show it), inline code's content."""
    parts: list[str] = []
    mail, start = "", 0
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "link_open":
            href = str(child.attrGet("href") or "")
            mail = href[len("mailto:"):] if href.startswith("mailto:") else ""
            start = len(parts)
        elif child.type == "link_close":
            shown = "".join(parts[start:])
            if mail and mail not in shown:
                parts.append(f" ({mail})")
            mail = ""
        elif child.type == "image":
            parts.append(child.content)
        elif child.type == "html_inline" and _INLINE_BREAK.match(child.content):
            parts.append(" ")
    text = _WIKI_LINK.sub(lambda link: (link.group(2) or link.group(1)).strip(), "".join(parts))
    return _SPACES.sub(" ", _TAG.sub("", text)).strip()
