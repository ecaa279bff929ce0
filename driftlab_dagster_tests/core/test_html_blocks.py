"""Raw HTML in markdown pages, read as a browser shows it (core/html_blocks.py and the units it gives).

Every shape here is one a real handbook writes: tables pasted from a document editor with their header
row in bold, markdown paragraphs inside a table's cells, `<br>` line breaks in markdown table cells and
paragraphs, comments hiding drafts, a title written with markup."""

from __future__ import annotations

import textwrap

from driftlab_dagster.core.html_blocks import HtmlReader, TableRow, row_statement
from driftlab_dagster.core.units import markdown_units, page_title


def _read(*blocks: str) -> list[tuple[str, bool]]:
    """(statement, whether it is a table's row), a row as its "column: cell" statement."""
    reader = HtmlReader()
    statements = [s for block in blocks for s in reader.read(block)] + reader.finish()
    return [(row_statement(s.header, s.cells), True) if isinstance(s, TableRow) else (s, False) for s in statements]


def test_a_tables_bold_first_row_heads_its_columns():
    # The shape a document editor's export writes: no <th>, the header's cells in <strong>.
    html = textwrap.dedent("""\
        <table>
          <tr>
           <td><strong>Prefix</strong>
           </td>
           <td><strong>Purpose</strong>
           </td>
          </tr>
          <tr>
           <td>#announce-
           </td>
           <td>For announcements. Posting is limited.
        <p>
        Ask the channel manager.
           </td>
          </tr>
        </table>
    """)
    assert _read(html) == [("Prefix: #announce-; Purpose: For announcements. Posting is limited. Ask the channel "
                            "manager.", True)]


def test_a_table_without_a_header_row_reads_its_cells_in_order():
    html = "<table><tr><td><a href='x'>#ask-exec</a></td><td>Ask leadership.</td></tr>" \
           "<tr><td>#thanks</td><td>Say <strong>thanks</strong>.</td></tr></table>"
    assert _read(html) == [("#ask-exec; Ask leadership.", True), ("#thanks; Say thanks.", True)]


def test_th_cells_head_the_columns_and_a_lone_bold_row_is_still_a_row():
    assert _read("<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Pro</td><td>$12</td></tr></table>") == [
        ("Plan: Pro; Price: $12", True)]
    assert _read("<table><tr><td><b>Parking is paid.</b></td></tr></table>") == [("Parking is paid.", True)]


def test_comments_scripts_and_styles_are_never_read():
    assert _read("<!-- draft: we pay nothing -->\n<div>We pay the pass.</div>\n<style>p {}</style>") == [
        ("We pay the pass.", False)]


def test_block_tags_end_a_statement_and_inline_tags_do_not():
    assert _read("<details><summary>Parking</summary>We <em>pay</em> the pass.</details>") == [
        ("Parking", False), ("We pay the pass.", False)]


def test_a_table_left_open_at_the_end_of_the_page_is_read_all_the_same():
    assert _read("<table><tr><td>Plan</td><td>Pro") == [("Plan; Pro", True)]


def test_row_statement_pairs_cells_with_their_column():
    assert row_statement(["Plan", "Price"], ["Pro", ""]) == "Plan: Pro"
    assert row_statement([], ["Pro", "$12"]) == "Pro; $12"


# ----- the units a page gives -----

def test_markdown_in_an_html_tables_cells_is_that_cells_text():
    page = textwrap.dedent("""\
        # Perks

        <table><tr><td>

        **Parking**

        </td><td>

        We pay the whole monthly pass.

        </td></tr></table>

        Lunch is free.
    """)
    assert [(u.text, u.trail) for u in markdown_units(page)] == [
        ("Parking; We pay the whole monthly pass.", ("Perks",)), ("Lunch is free.", ("Perks",))]


def test_a_line_break_tag_separates_words_and_sentences():
    page = textwrap.dedent("""\
        # Leave

        | Kind | Days |
        |---|---|
        | Sick<br>leave | 10 days<br/>a year |

        We pay it.<br>Ask Ana Bell.
    """)
    assert [u.text for u in markdown_units(page)] == ["Kind: Sick leave; Days: 10 days a year", "We pay it.",
                                                      "Ask Ana Bell."]


def test_an_html_comment_in_a_page_hides_its_words():
    # A commented-out draft keeps its markup; none of its words are on the page a reader sees.
    page = ("# Leave\n\n<!--\nWe pay <b>nothing</b>.\n\n<table><tr><td>Draft</td></tr></table>\n-->\n\n"
            "We pay the pass.\n")
    assert [u.text for u in markdown_units(page)] == ["We pay the pass."]


def test_a_title_reads_as_plain_text_and_never_comes_from_a_code_block():
    page = "```sh\n# install the tools\n```\n\n# **Data** [policy](x.md) {#policy}\n\nKeep it.\n"
    assert page_title("p.md", page) == "Data policy"
    # The title and the page's first heading are one name in the trail, not two spellings of it.
    assert markdown_units(page, page_title("p.md", page))[0].trail == ("Data policy",)


def test_a_headings_anchor_is_not_part_of_its_name():
    page = "# Leave\n\n## Parking {#parking}\n\nWe pay the pass.\n"
    assert markdown_units(page)[0].trail == ("Leave", "Parking")


def test_an_html_tables_row_of_paragraphs_is_read_sentence_by_sentence_under_its_row_and_column():
    # A policy matrix pasted from a document editor: a level per row, what it means in a paragraph per cell.
    handling = ("Only the data owner may share it. Store it only in the approved vault. Report any loss to the "
                "security team within one hour, and say what was lost, when, and who held it last.")
    impact = ("Loss or damage could seriously impede the company's operations, harm its customers, or breach "
              "the contracts it has signed with them and with its suppliers, for years to come.")
    page = ("# Data policy\n\n<table><tr><td><strong>Level</strong></td><td><strong>Impact</strong></td>"
            "<td><strong>Handling</strong></td><td><strong>Owner</strong></td></tr>"
            f"<tr><td>Restricted</td><td>{impact}</td><td>{handling}</td><td><em>Security</em></td></tr></table>\n")
    assert [(u.lead, u.text) for u in markdown_units(page)] == [
        ("", "Level: Restricted; Owner: Security"),
        ("Level: Restricted; Impact:", impact),
        ("Level: Restricted; Handling:", "Only the data owner may share it."),
        ("Level: Restricted; Handling:", "Store it only in the approved vault."),
        ("Level: Restricted; Handling:", "Report any loss to the security team within one hour, and say what was "
                                         "lost, when, and who held it last."),
    ]
