"""How a page is cut into statements (core/units.py): where a sentence ends, and a FAQ written as a question
paragraph and an answer paragraph. The shapes are real handbooks' (Sourcegraph's and 18F's public ones)."""

from __future__ import annotations

import textwrap

import pytest

from driftlab_dagster.core.units import markdown_units, page_title


def _texts(page: str) -> list[str]:
    return [u.text for u in markdown_units(page)]


@pytest.mark.parametrize("paragraph", [
    "Military leave under 5 U.S.C. 6323(a) is prorated for part-time employees.",
    "After you sign into the U.S. Bank Access Online portal, activate the card.",
    "Ask John J. Smith for the keys.",
    "Add the Security Controls for the site (e.g. Github) to the plan.",
    "Write in #c24ops: i.e. \"Hi, I'd like to be set up\".",
    "Dr. Ana Bell signs the form.",
    "File form No. 5 before you travel.",
])
def test_a_full_stop_after_an_abbreviation_or_an_initial_ends_no_sentence(paragraph):
    assert _texts(f"# Leave\n\n{paragraph}\n") == [paragraph]


def test_sentences_still_end_where_they_end():
    assert _texts("# FAQ\n\nNo. Only you can see your code. Ask the team.\n") == [
        "No.", "Only you can see your code.", "Ask the team."]


def test_a_faq_question_in_a_paragraph_of_its_own_heads_its_answer():
    page = textwrap.dedent("""\
        # Mentors

        ## FAQ

        **Q. What if I am not sure about signing up to be a mentor?**

        A: One of the best ways to learn is by teaching others.

        **Q: What can I expect from my mentor?**

        A: Guidance and support.

        ## Signing up

        Fill in the form.
    """)
    units = markdown_units(page)
    assert [(u.text, u.trail[-1]) for u in units] == [
        ("One of the best ways to learn is by teaching others.",
         "What if I am not sure about signing up to be a mentor?"),
        ("Guidance and support.", "What can I expect from my mentor?"),
        ("Fill in the form.", "Signing up"),
    ]
    assert units[0].trail == ("Mentors", "FAQ", "What if I am not sure about signing up to be a mentor?")


def test_a_faq_question_and_answer_in_one_paragraph_stay_one_statement():
    assert _texts("# FAQ\n\nQ: Who approves travel? A: Your supervisor.\n") == [
        "Who approves travel? Your supervisor."]


def test_a_paragraphs_bold_label_leads_its_later_sentences():
    page = textwrap.dedent("""\
        # Spending company money

        **Co-working space:** $300-500 a month for your desk. This budget also includes rides to it.

        **Note:** Plans renew. They cost nothing.

        **Type Code:** "SINGLE TRIP". **Trip Purpose:** Mission. Else training.
    """)
    assert [(u.text, u.lead) for u in markdown_units(page)] == [
        ("Co-working space: $300-500 a month for your desk.", ""),
        ("This budget also includes rides to it.", "Co-working space:"),
        ("Note: Plans renew.", ""), ("They cost nothing.", ""),  # a label that says what kind of line it is
        # several bold labels: each line says its own, none leads the others
        ('Type Code: "SINGLE TRIP".', ""), ("Trip Purpose: Mission.", ""), ("Else training.", ""),
    ]


def test_a_bold_line_of_its_own_heads_what_follows_as_a_heading_would():
    page = textwrap.dedent("""\
        # Celebrate

        ## Gifts

        **Budget**

        Gifts come from the team budget. Use its credits.

        **Average time to send a gift: 3-5 days**

        **US teammates:**

        - Ask Ana Bell.

        **How do I send a gift?**

        Use the gifting tool.

        ## Other

        Plain text.
    """)
    assert [(u.text, u.trail[-1], u.lead) for u in markdown_units(page)] == [
        ("Gifts come from the team budget.", "Gifts", "Budget"),
        ("Use its credits.", "Gifts", "Budget"),
        ("Average time to send a gift: 3-5 days", "Gifts", "Budget"),  # a bold line writing a measure states it
        ("US teammates:", "Gifts", "Budget"),  # a line ending in a colon leads what comes right after it
        ("Ask Ana Bell.", "Gifts", "US teammates:"),
        ("Use the gifting tool.", "How do I send a gift?", ""),  # a bold question is a FAQ's question
        ("Plain text.", "Other", ""),
    ]


@pytest.mark.parametrize(("path", "title"), [("benefits/parental-leave.md", "parental leave"),
                                              ("benefits/time-off/index.md", "time off"),
                                              ("handbook/travel_guide/README.md", "travel guide"),
                                              ("index.md", "index")])
def test_a_page_without_a_title_is_named_by_its_file_or_its_folder(path, title):
    assert page_title(path, "Some text.\n") == title


def test_a_site_generators_markup_is_not_prose():
    # Hugo's TOML front matter, an MDX page's imports, a Docusaurus admonition, a wiki link.
    page = textwrap.dedent("""\
        +++
        title = "Parental leave"
        +++
        import Callout from '@site/src/components/Callout';

        :::note
        Leave is paid in full.
        :::

        See [[time-off|Time off]] and [[Holidays]].
    """)
    units = markdown_units(page)
    assert [u.text for u in units] == ["Leave is paid in full.", "See Time off and Holidays."]
    assert units[0].trail == ("Parental leave",) and page_title("p.md", page) == "Parental leave"


def test_a_paragraph_numbered_by_a_letter_keeps_its_number_and_a_lone_answer_marker_is_no_statement():
    page = textwrap.dedent("""\
        # Procurement

        a. Evaluation stage

        (ii) Approval by Finance. Then sign.

        **Q: Who is part of the approval chain?**

        A:

        - For compensation changes: Finance
    """)
    assert [(u.text, u.trail[-1]) for u in markdown_units(page)] == [
        ("a. Evaluation stage", "Procurement"), ("(ii) Approval by Finance.", "Procurement"),
        ("Then sign.", "Procurement"),
        ("For compensation changes: Finance", "Who is part of the approval chain?"),
    ]


def test_a_template_tag_shows_its_words_never_how_it_renders():
    # GitBook's hint, Liquid's include with keyword arguments, an embed, a tag as a link's destination.
    page = textwrap.dedent("""\
        # Leave

        {% hint style="info" %}
        Leave is paid in full.
        {% endhint %}

        {% include "alert.html" level:"info" heading:"Updated travel guidance" content:travel %}

        {% embed url="https://community.example.org" caption="Our community" %}

        Find us in {% slack_channel "tts-travel" %} or read [Travel 101]({% page "/travel-101/" %}).

        <div>See the [guide](/guide) and **ask**.</div>
    """)
    assert _texts(page) == ["Leave is paid in full.", "Updated travel guidance", "Our community",
                            "Find us in tts-travel or read Travel 101.", "See the guide and ask."]


# A career framework's table, as Basecamp's, Sourcegraph's and Mattermost's handbooks write them: a row per skill,
# a column per level, a paragraph in each cell.
_JUNIOR = ("You write modern HTML and CSS with guidance from a senior designer. You lack direct experience with "
           "Rails but are comfortable working in its views, and you ask for help when a change reaches further.")
_SENIOR = ("You write modern HTML, CSS and Javascript without guidance. You review the work of other designers "
           "and level them up. You pick the right tool for each job and explain why to the rest of the team.")


def test_a_tables_row_of_paragraphs_is_read_sentence_by_sentence_under_its_row_and_column():
    page = textwrap.dedent(f"""\
        # Titles for designers

        | Category | Designer (L2) | Senior Designer (L3) | Reviewed |
        |---|---|---|---|
        | Technical | {_JUNIOR} | {_SENIOR} | yearly |
        | Travel | 2 trips | 4 trips | yearly |
    """)
    units = markdown_units(page)
    assert [(u.lead, u.text) for u in units] == [
        ("", "Category: Technical; Reviewed: yearly"),  # the row's values, one statement
        ("Category: Technical; Designer (L2):", "You write modern HTML and CSS with guidance from a senior designer."),
        ("Category: Technical; Designer (L2):", "You lack direct experience with Rails but are comfortable working "
                                                "in its views, and you ask for help when a change reaches further."),
        ("Category: Technical; Senior Designer (L3):", "You write modern HTML, CSS and Javascript without guidance."),
        ("Category: Technical; Senior Designer (L3):", "You review the work of other designers and level them up."),
        ("Category: Technical; Senior Designer (L3):", "You pick the right tool for each job and explain why to the "
                                                       "rest of the team."),
        # A row of values is one statement, however many columns it has.
        ("", "Category: Travel; Designer (L2): 2 trips; Senior Designer (L3): 4 trips; Reviewed: yearly"),
    ]
    assert all(u.trail == ("Titles for designers",) for u in units)


def test_a_long_row_whose_first_cell_is_no_name_stays_one_statement():
    # Nothing names the row to lead its cells: cutting it would leave sentences about nothing.
    page = f"# Notes\n\n| Note | Added |\n|---|---|\n| {_SENIOR} {_JUNIOR} | {_JUNIOR} |\n"
    assert [u.text for u in markdown_units(page)] == [f"Note: {_SENIOR} {_JUNIOR}; Added: {_JUNIOR}"]
